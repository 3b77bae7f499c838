-- incidents: contiguous correlated disruptions of a tool (docs/metrics.md, incidents).
--
-- A tool's minute is active when it is hot (failures far above the tool's own baseline,
-- see tool_minutes) or guarded (its breaker open or half open, operations parked on it, or
-- retries throttled). Active minutes of a tool with gaps of at most 2 inactive minutes
-- between them form a run; a run that holds at least one hot minute is an incident, for as
-- long as it lasts (guarded time included, a sustained collapse after a fault included).
-- A run of guarded minutes without a hot one is no incident: a guard alone shows no
-- correlated failure.
--
-- start / end: the first active minute's start and the last one's end (end exclusive).
-- hot_minutes, guarded_minutes: how many of its minutes were hot / guarded.
-- failed_attempts: failed attempts sent to the tool during the incident (see calls: for the
-- model, its refused calls).
-- affected_investigations: distinct root investigations (a subagent counts as its root)
-- disrupted at the tool during it: an attempt failed or timed out, or an operation was
-- parked on the breaker or throttled by the retry budget (see disruptions).
-- parked, throttled: parks on the breaker / throttles of the retry budget during it.
-- retries_sent: the retries of the attempts sent to the tool during the incident (the next
-- attempt of the same operation, op_key and attempt + 1, see calls), whenever they went
-- out: a hang's retries leave only after the timeouts, often after the incident's last
-- minute. For the model, the next call of a refused call when it was refused too (an
-- admitted call names no operation).
-- fault_ids: the faults the failed attempts carried (sorted; empty when none was tagged).
-- incident: 1, 2, ... per run, in order of start, then tool.
CREATE OR REPLACE VIEW incidents AS
WITH active AS (
    SELECT run_id, tool, minute, hot, guarded, failed_attempts, parked, throttled,
           minute - lag(minute) OVER (PARTITION BY run_id, tool ORDER BY minute) AS gap
    FROM tool_minutes
    WHERE hot OR guarded
),
islands AS (
    SELECT *,
           sum(CASE WHEN gap IS NULL OR gap > 3 THEN 1 ELSE 0 END)
               OVER (PARTITION BY run_id, tool ORDER BY minute ROWS UNBOUNDED PRECEDING) AS island
    FROM active
),
merged AS (
    SELECT run_id, tool, island,
           min(minute) AS first_minute,
           max(minute) + 1 AS end_minute,
           count(*) FILTER (WHERE hot) AS hot_minutes,
           count(*) FILTER (WHERE guarded) AS guarded_minutes,
           sum(parked) AS parked,
           sum(throttled) AS throttled
    FROM islands
    GROUP BY run_id, tool, island
    HAVING count(*) FILTER (WHERE hot) > 0
),
sent AS (
    SELECT m.run_id, m.tool, m.first_minute,
           count(*) FILTER (WHERE a.failed) AS failed_attempts,
           list_sort(list(DISTINCT a.fault_id) FILTER (WHERE a.failed AND coalesce(a.fault_id, '') <> '')) AS fault_ids
    FROM merged m
    JOIN call_rows a
      ON a.run_id = m.run_id AND a.tool = m.tool
     AND a.minute >= m.first_minute AND a.minute < m.end_minute
    GROUP BY m.run_id, m.tool, m.first_minute
),
retried AS (
    SELECT m.run_id, m.tool, m.first_minute, count(*) AS retries_sent
    FROM merged m
    JOIN call_rows a
      ON a.run_id = m.run_id AND a.tool = m.tool
     AND a.minute >= m.first_minute AND a.minute < m.end_minute
    JOIN call_rows r
      ON r.run_id = a.run_id AND r.tool = a.tool AND r.op_key = a.op_key AND r.attempt = a.attempt + 1
    GROUP BY m.run_id, m.tool, m.first_minute
),
hit AS (
    SELECT m.run_id, m.tool, m.first_minute, count(DISTINCT d.root_id) AS affected_investigations
    FROM merged m
    JOIN disruptions d
      ON d.run_id = m.run_id AND d.tool = m.tool
     AND d.minute >= m.first_minute AND d.minute < m.end_minute
     AND d.kind IN ('failed', 'timed_out', 'parked', 'throttled')
    GROUP BY m.run_id, m.tool, m.first_minute
)
SELECT m.run_id,
       row_number() OVER (PARTITION BY m.run_id ORDER BY m.first_minute, m.tool) AS incident,
       m.tool,
       sim_minute_start(m.run_id, m.first_minute) AS start,
       sim_minute_start(m.run_id, m.end_minute) AS "end",
       m.end_minute - m.first_minute AS minutes,
       m.hot_minutes, m.guarded_minutes,
       coalesce(s.failed_attempts, 0) AS failed_attempts,
       coalesce(h.affected_investigations, 0) AS affected_investigations,
       m.parked, m.throttled,
       coalesce(r.retries_sent, 0) AS retries_sent,
       coalesce(s.fault_ids, []::VARCHAR[]) AS fault_ids
FROM merged m
LEFT JOIN sent s USING (run_id, tool, first_minute)
LEFT JOIN retried r USING (run_id, tool, first_minute)
LEFT JOIN hit h USING (run_id, tool, first_minute);
