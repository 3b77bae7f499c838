-- metrics: one row per run with every metric of docs/metrics.md, as stored with the run (the
-- table run_metrics, docs/tables.md). Every row is computed in Go (package metric/compute):
-- a simulated run's from its records while it is simulated, stored in the transaction that
-- stores the run; any other run's (an import, a merged run, a run whose records the Go side
-- could not hold while it ran, a run an older version stored) by replaying its stored
-- records. The tests hold the rows equal to a second computation in SQL written for them
-- (analysis/testdata/oracle).
CREATE OR REPLACE VIEW metrics AS
SELECT * FROM run_metrics;
