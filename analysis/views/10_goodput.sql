-- goodput: per run and minute (0 .. run_clock.minutes-1), the work completed in that
-- minute and what goodput_recovery_time (docs/metrics.md) compares it with.
--
-- valid_results: validate spans with status 'ok' that end in the minute (a step's result
-- delivered and valid; subagents' steps included): the work completed per minute.
-- Fault windows: faults with a window (parameters.duration_seconds: outage, hang,
-- brownout); faults drawn per call over the whole run (transient, lost_response, ...) are
-- not windows. first_fault_at: the earliest window's start; fault_end_at: the latest
-- window's end. Both NULL when the run has no window.
-- baseline: the median of valid_results over the minutes before first_fault_at's minute,
-- from the first minute with a valid result on (the ramp-up before it is not the level).
-- NULL without a window or without such a minute.
-- recovered: valid_results >= 0.9 · baseline.
-- arrivals_continue: a root investigation arrives in this minute or later.
CREATE OR REPLACE VIEW goodput AS
WITH grid AS (
    SELECT run_id, unnest(range(minutes)) AS minute FROM run_clock
),
valid AS (
    SELECT run_id, (epoch_us("end") - 1767225600000000) // 60000000 AS minute, count(*) AS n
    FROM spans
    WHERE operation = 'validate' AND status = 'ok'
    GROUP BY ALL
),
windows AS (
    SELECT run_id, min(start) AS first_fault_at, max("end") AS fault_end_at
    FROM faults
    WHERE json_extract(parameters, '$.duration_seconds') IS NOT NULL AND "end" > start
    GROUP BY run_id
),
last_arrival AS (
    SELECT run_id, (epoch_us(max(arrived_at)) - 1767225600000000) // 60000000 AS minute
    FROM roots GROUP BY run_id
),
series AS (
    SELECT g.run_id, g.minute, coalesce(v.n, 0) AS valid_results
    FROM grid g LEFT JOIN valid v USING (run_id, minute)
),
first_work AS (
    SELECT run_id, min(minute) AS minute FROM series WHERE valid_results > 0 GROUP BY run_id
),
baseline AS (
    SELECT s.run_id, median(s.valid_results) AS baseline
    FROM series s
    JOIN windows w USING (run_id)
    JOIN first_work f USING (run_id)
    WHERE s.minute >= f.minute
      AND s.minute < (epoch_us(w.first_fault_at) - 1767225600000000) // 60000000
    GROUP BY s.run_id
)
SELECT s.run_id, s.minute,
       TIMESTAMP '2026-01-01 00:00:00' + to_microseconds(s.minute * 60000000) AS start,
       s.valid_results,
       w.first_fault_at, w.fault_end_at,
       b.baseline,
       s.valid_results >= 0.9 * b.baseline AS recovered,
       s.minute <= coalesce(a.minute, -1) AS arrivals_continue
FROM series s
LEFT JOIN windows w USING (run_id)
LEFT JOIN baseline b USING (run_id)
LEFT JOIN last_arrival a USING (run_id);
