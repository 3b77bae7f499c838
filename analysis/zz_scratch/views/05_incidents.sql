-- incidents: correlated failures (design section 5). An incident minute of a tool is a
-- tool_minutes row with incident = true (failed attempts > mu + 4·sqrt(mu)); consecutive
-- incident minutes of the same tool merge into one incident.
--
-- start / end: the first incident minute's start and the last one's end (end exclusive).
-- failed_attempts: failed attempts sent during the incident's minutes (see attempts).
-- affected_investigations: distinct root investigations (a subagent counts as its root)
-- with at least one failed attempt at the tool during the incident.
-- retries_sent: attempts with attempt > 1 sent to the tool during the incident.
-- fault_ids: the faults the failed attempts carried (sorted; empty when none was tagged).
-- incident: 1, 2, ... per run, in order of start, then tool.
CREATE OR REPLACE VIEW incidents AS
WITH marked AS (
    SELECT run_id, tool, minute, failed_attempts,
           minute - row_number() OVER (PARTITION BY run_id, tool ORDER BY minute) AS island
    FROM tool_minutes
    WHERE incident
),
merged AS (
    SELECT run_id, tool,
           min(minute) AS first_minute,
           max(minute) + 1 AS end_minute,
           sum(failed_attempts) AS failed_attempts
    FROM marked
    GROUP BY run_id, tool, island
),
touched AS (
    SELECT m.run_id, m.tool, m.first_minute,
           count(DISTINCT a.root_id) FILTER (WHERE a.failed) AS affected_investigations,
           count(*) FILTER (WHERE a.retry) AS retries_sent,
           list_sort(list(DISTINCT a.fault_id) FILTER (WHERE a.failed AND coalesce(a.fault_id, '') <> '')) AS fault_ids
    FROM merged m
    JOIN attempts a
      ON a.run_id = m.run_id AND a.tool = m.tool
     AND a.minute >= m.first_minute AND a.minute < m.end_minute
    GROUP BY m.run_id, m.tool, m.first_minute
)
SELECT m.run_id,
       row_number() OVER (PARTITION BY m.run_id ORDER BY m.first_minute, m.tool) AS incident,
       m.tool,
       TIMESTAMP '2026-01-01 00:00:00' + to_microseconds(m.first_minute * 60000000) AS start,
       TIMESTAMP '2026-01-01 00:00:00' + to_microseconds(m.end_minute * 60000000) AS "end",
       m.end_minute - m.first_minute AS minutes,
       m.failed_attempts,
       t.affected_investigations,
       t.retries_sent,
       coalesce(t.fault_ids, []::VARCHAR[]) AS fault_ids
FROM merged m
JOIN touched t USING (run_id, tool, first_minute);
