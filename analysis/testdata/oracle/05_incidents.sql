-- incidents (test-only second computation): for each incident as stored (its tool and span
-- [start, end), found by the rule of package metric/detect, which its own tests hold to a
-- brute-force recomputation), everything the row adds up over the span, recomputed from
-- the trace: the calls sent to the tool in it, those that failed, the root investigations
-- disrupted at the tool (failed or timed-out calls, parks, throttles), the parks and
-- throttles, the retries that followed its calls, and the faults its failed calls carried.
CREATE OR REPLACE VIEW incidents AS
WITH windows AS (
    SELECT run_id, incident, tool, start, "end", detected_at, baseline FROM main.incidents
),
sent AS (
    SELECT w.run_id, w.incident,
           count(*) AS calls,
           count(*) FILTER (WHERE a.failed) AS failed_attempts,
           list_sort(list(DISTINCT a.fault_id) FILTER (WHERE a.failed AND coalesce(a.fault_id, '') <> '')) AS fault_ids
    FROM windows w
    JOIN call_rows a ON a.run_id = w.run_id AND a.tool = w.tool AND a.start >= w.start AND a.start < w."end"
    GROUP BY ALL
),
retried AS (
    SELECT w.run_id, w.incident, count(*) AS retries_sent
    FROM windows w
    JOIN call_rows a ON a.run_id = w.run_id AND a.tool = w.tool AND a.start >= w.start AND a.start < w."end"
    JOIN call_rows r ON r.run_id = a.run_id AND r.tool = a.tool AND r.op_key = a.op_key AND r.attempt = a.attempt + 1
    GROUP BY ALL
),
hit AS (
    SELECT w.run_id, w.incident,
           count(DISTINCT d.root_id) AS affected_investigations,
           count(*) FILTER (WHERE d.kind = 'parked') AS parked,
           count(*) FILTER (WHERE d.kind = 'throttled') AS throttled
    FROM windows w
    JOIN disruptions d ON d.run_id = w.run_id AND d.tool = w.tool AND d."at" >= w.start AND d."at" < w."end"
     AND d.kind IN ('failed', 'timed_out', 'parked', 'throttled')
    GROUP BY ALL
)
SELECT w.run_id, w.incident, w.tool, w.start, w."end",
       (epoch_us(w."end") - epoch_us(w.start)) / 60e6 AS minutes,
       w.detected_at,
       coalesce(s.calls, 0) AS calls,
       coalesce(s.failed_attempts, 0) AS failed_attempts,
       coalesce(h.affected_investigations, 0) AS affected_investigations,
       coalesce(h.parked, 0) AS parked,
       coalesce(h.throttled, 0) AS throttled,
       coalesce(r.retries_sent, 0) AS retries_sent,
       w.baseline,
       coalesce(s.fault_ids, []::VARCHAR[]) AS fault_ids
FROM windows w
LEFT JOIN sent s USING (run_id, incident)
LEFT JOIN retried r USING (run_id, incident)
LEFT JOIN hit h USING (run_id, incident);
