-- The run's clock, shared by every time-based view and by the report queries.
--
-- sim_epoch(): simulated time 0, 2026-01-01T00:00:00Z (the simulator's record.Epoch); the one
-- place the epoch is written.
-- run_origin_us(r): time 0 of run r in microseconds since the Unix epoch: sim_epoch() for a
-- simulated run; for a run imported from traces, which keeps its timestamps as recorded,
-- the first span's start rounded down to the minute ($.import.time_zero_us of its config;
-- a config that is no JSON reads as a simulated run's).
-- sim_seconds(r, t): seconds of run r's time at timestamp t.
-- sim_minute(r, t): the minute t falls in; minute m of a run is [m, m+1) minutes after its
-- time 0. sim_minute_start(r, m): the timestamp at which minute m of run r starts.
CREATE OR REPLACE MACRO sim_epoch() AS TIMESTAMP '2026-01-01 00:00:00';
CREATE OR REPLACE MACRO run_origin_us(r) AS coalesce(
    (SELECT max(CASE WHEN json_valid(o.config) THEN TRY_CAST(json_extract_string(o.config, '$.import.time_zero_us') AS BIGINT) END)
     FROM runs o WHERE o.run_id = r),
    epoch_us(sim_epoch()));
CREATE OR REPLACE MACRO sim_us(r, t) AS epoch_us(t) - run_origin_us(r);
CREATE OR REPLACE MACRO sim_seconds(r, t) AS sim_us(r, t) / 1e6;
CREATE OR REPLACE MACRO sim_minute(r, t) AS sim_us(r, t) // 60000000;
CREATE OR REPLACE MACRO sim_minute_start(r, m) AS make_timestamp(run_origin_us(r) + m * 60000000);

-- run_clock: the simulated extent of each run, for the report's time axes.
--
-- end_at / makespan (docs/metrics.md: seconds of simulated time): the run's last recorded
-- instant, i.e. the latest arrival, investigation end, span end, transition or execution
-- end of the run (fault windows are configuration, not activity, and do not count; nor do
-- executions that never finished, outcome 'hung'). It is the makespan metric, stored with
-- every run (run_metrics), so the view reads one row per run instead of every record.
-- minutes: how many minute buckets the run touches, floor(makespan / 60) + 1, so that every
-- recorded instant (end_at included) falls in a minute 0 .. minutes-1: the length of
-- lifecycle and the denominator of each tool's mean failures per minute in tool_minutes.
CREATE OR REPLACE VIEW run_clock AS
WITH ends AS (
    SELECT r.run_id, CAST(round(coalesce(m.makespan, 0) * 1e6) AS BIGINT) AS us
    FROM runs r LEFT JOIN run_metrics m USING (run_id)
)
SELECT
    run_id,
    make_timestamp(run_origin_us(run_id) + us) AS end_at,
    us / 1e6 AS makespan,
    us // 60000000 + 1 AS minutes
FROM ends;
