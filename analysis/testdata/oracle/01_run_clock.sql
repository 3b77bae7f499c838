-- The run's clock, from every record: the latest arrival, investigation end, span end,
-- transition or execution end of the run (not fault windows, not executions that never
-- finished). The product's run_clock reads the stored makespan instead; this is the second
-- computation it is held to, and every time-based table of the oracle reads it.
CREATE OR REPLACE VIEW run_clock AS
WITH marks AS (
    SELECT run_id, max(greatest(arrived_at, coalesce(ended_at, arrived_at))) AS "at"
    FROM investigations GROUP BY run_id
    UNION ALL
    SELECT run_id, max("end") FROM spans GROUP BY run_id
    UNION ALL
    SELECT run_id, max("at") FROM transitions GROUP BY run_id
    UNION ALL
    SELECT run_id, max("end") FROM executions WHERE outcome <> 'hung' GROUP BY run_id
),
ends AS (
    SELECT r.run_id, coalesce(max(m."at"), make_timestamp(run_origin_us(r.run_id))) AS end_at
    FROM runs r LEFT JOIN marks m USING (run_id)
    GROUP BY r.run_id
)
SELECT
    run_id,
    end_at,
    sim_seconds(run_id, end_at) AS makespan,
    sim_minute(run_id, end_at) + 1 AS minutes
FROM ends;
