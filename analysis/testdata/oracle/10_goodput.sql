-- goodput: per run and minute (0 .. run_clock.minutes-1), the work completed in that
-- minute and what goodput_recovery_time (docs/metrics.md) compares it with.
--
-- valid_results: validate spans with status 'ok' that end in the minute (a step's result
-- delivered and valid; subagents' steps included): the work completed per minute.
-- Fault windows: faults with a window (window_start not NULL: outage, hang, brownout,
-- zone crash); faults drawn per call over the whole run (transient, lost_response, ...)
-- are not windows. first_fault_at: the earliest window's start;
-- fault_end_at: the latest window's end. Both NULL when the run has no window.
-- Steady state: the minutes of the second half of [first arrival's minute, first_fault_at's
-- minute): the first half is the warm-up, while the fleet fills up. baseline: the mean of
-- valid_results over them; baseline_sd: their sample standard deviation. Both NULL without a
-- window, or when the steady state has fewer than 5 minutes (a fault in the first 10
-- minutes of arrivals leaves no level to return to).
-- window_results: valid_results of this minute and the next 4 (NULL past the run's end).
-- threshold: what window_results must reach to be back at >= 90% of the baseline, less
-- the noise of a steady state: 0.9 · 5 · baseline − 2.326 · √5 · baseline_sd. A window of
-- 5 minutes of a steady state at the baseline level (minutes independent, normal
-- approximation) falls below it with probability at most 1%; a collapse to a fraction f of
-- the baseline stays below it whenever f < 0.9 − 2.326 · baseline_sd / (√5 · baseline).
-- recovered: window_results >= threshold (the 5 minutes from this one are back).
-- arrivals_continue: a root investigation arrives in this minute or later.
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
    SELECT run_id,
           sim_minute(run_id, min(arrived_at)) AS first_minute,
           sim_minute(run_id, max(arrived_at)) AS last_minute
    FROM roots GROUP BY run_id
),
series AS (
    SELECT g.run_id, g.minute, coalesce(v.n, 0) AS valid_results,
           sum(coalesce(v.n, 0)) OVER (PARTITION BY g.run_id ORDER BY g.minute
                                       ROWS BETWEEN CURRENT ROW AND 4 FOLLOWING) AS window_sum,
           count(*) OVER (PARTITION BY g.run_id ORDER BY g.minute
                          ROWS BETWEEN CURRENT ROW AND 4 FOLLOWING) AS window_minutes
    FROM grid g LEFT JOIN valid v USING (run_id, minute)
),
steady AS (
    SELECT w.run_id,
           a.first_minute + (sim_minute(w.run_id, w.first_fault_at) - a.first_minute + 1) // 2 AS from_minute,
           sim_minute(w.run_id, w.first_fault_at) AS to_minute
    FROM windows w JOIN arrivals a USING (run_id)
),
baseline AS (
    SELECT s.run_id, avg(s.valid_results) AS baseline, stddev_samp(s.valid_results) AS baseline_sd
    FROM series s JOIN steady t USING (run_id)
    WHERE s.minute >= t.from_minute AND s.minute < t.to_minute
    GROUP BY s.run_id
    HAVING count(*) >= 5
)
SELECT s.run_id, s.minute,
       sim_minute_start(s.run_id, s.minute) AS start,
       s.valid_results,
       w.first_fault_at, w.fault_end_at,
       b.baseline, b.baseline_sd,
       CASE WHEN s.window_minutes = 5 THEN s.window_sum END AS window_results,
       4.5 * b.baseline - 2.326 * sqrt(5) * b.baseline_sd AS threshold,
       s.window_minutes = 5 AND s.window_sum >= 4.5 * b.baseline - 2.326 * sqrt(5) * b.baseline_sd AS recovered,
       s.minute <= coalesce(a.last_minute, -1) AS arrivals_continue
FROM series s
LEFT JOIN windows w USING (run_id)
LEFT JOIN baseline b USING (run_id)
LEFT JOIN arrivals a USING (run_id);
