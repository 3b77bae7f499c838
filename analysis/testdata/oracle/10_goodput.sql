-- goodput (test-only second computation): the valid results (validate spans with status
-- ok) delivered in each minute of the run, by the minute of their end, beside the first
-- fault window's start and the last one's end, and whether roots still arrived.
CREATE OR REPLACE VIEW goodput AS
WITH grid AS (
    SELECT run_id, unnest(range(minutes)) AS minute FROM run_clock
),
valid AS (
    SELECT run_id, sim_minute(run_id, "end") AS minute, count(*) AS n
    FROM spans
    WHERE operation = 'validate' AND status = 'ok'
    GROUP BY ALL
),
windows AS (
    SELECT run_id, min(window_start) AS first_fault_at, max(window_end) AS fault_end_at
    FROM faults
    WHERE window_end > window_start
    GROUP BY run_id
),
arrivals AS (
    SELECT run_id, sim_minute(run_id, max(arrived_at)) AS last_minute
    FROM roots GROUP BY run_id
)
SELECT g.run_id, g.minute,
       sim_minute_start(g.run_id, g.minute) AS start,
       coalesce(v.n, 0) AS valid_results,
       w.first_fault_at, w.fault_end_at,
       g.minute <= coalesce(a.last_minute, -1) AS arrivals_continue
FROM grid g
LEFT JOIN valid v USING (run_id, minute)
LEFT JOIN windows w USING (run_id)
LEFT JOIN arrivals a USING (run_id);
