-- metrics: one row per run with every metric of docs/metrics.md, as stored when the run
-- was written (the table run_metrics). A simulated run's row is computed in Go from its
-- records while it is simulated (package metric/compute), and stored in the transaction
-- that stores the run; any other run's row (an import, a run whose records the Go side
-- cannot hold, a merged run) is metrics_recomputed's. Tests hold the stored rows equal to
-- metrics_recomputed, the definition, on every example and on generated scenarios. A
-- database whose stored rows are missing or of another layout reads metrics_recomputed
-- here instead.
CREATE OR REPLACE VIEW metrics AS
SELECT * FROM run_metrics;
