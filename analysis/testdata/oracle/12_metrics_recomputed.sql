-- metrics_recomputed: one row per run with every metric of docs/metrics.md, recomputed
-- from the trace tables (see metrics_measured, which computes them): the definition of the
-- metrics. The metrics view reads the rows stored with each run (run_metrics), which equal
-- these. A run imported from OpenTelemetry traces (mayday import) lists in
-- runs.config, under $.import.unknown, the metrics its trace cannot give (tool-side ground
-- truth, true validity, compute, pending time, ...), each with the reason; those are NULL
-- here, whatever the views would make of the columns the import left NULL. Every other
-- metric, and every metric of a simulated run, is metrics_measured's value.
CREATE OR REPLACE VIEW metrics_recomputed AS
WITH unknown AS (
    SELECT run_id,
           CASE WHEN json_valid(config) THEN json_extract(config, '$.import.unknown') END AS unknown
    FROM runs
)
SELECT m.* REPLACE (
       CASE WHEN json_exists(u.unknown, '$.correct_completion_rate') THEN NULL ELSE m.correct_completion_rate END AS correct_completion_rate,
       CASE WHEN json_exists(u.unknown, '$.validation_pass_rate') THEN NULL ELSE m.validation_pass_rate END AS validation_pass_rate,
       CASE WHEN json_exists(u.unknown, '$.duplicate_side_effects') THEN NULL ELSE m.duplicate_side_effects END AS duplicate_side_effects,
       CASE WHEN json_exists(u.unknown, '$.discarded_results') THEN NULL ELSE m.discarded_results END AS discarded_results,
       CASE WHEN json_exists(u.unknown, '$.goodput_recovery_time') THEN NULL ELSE m.goodput_recovery_time END AS goodput_recovery_time,
       CASE WHEN json_exists(u.unknown, '$.goodput_recovered') THEN NULL ELSE m.goodput_recovered END AS goodput_recovered,
       CASE WHEN json_exists(u.unknown, '$.full_scope_completion_rate') THEN NULL ELSE m.full_scope_completion_rate END AS full_scope_completion_rate,
       CASE WHEN json_exists(u.unknown, '$.compute_per_completion') THEN NULL ELSE m.compute_per_completion END AS compute_per_completion,
       CASE WHEN json_exists(u.unknown, '$.wasted_compute_ratio') THEN NULL ELSE m.wasted_compute_ratio END AS wasted_compute_ratio,
       CASE WHEN json_exists(u.unknown, '$.events') THEN NULL ELSE m.events END AS events,
       CASE WHEN json_exists(u.unknown, '$.median_pending_time') THEN NULL ELSE m.median_pending_time END AS median_pending_time,
       CASE WHEN json_exists(u.unknown, '$.median_subagent_pending_time') THEN NULL ELSE m.median_subagent_pending_time END AS median_subagent_pending_time,
       CASE WHEN json_exists(u.unknown, '$.cost_per_completion') THEN NULL ELSE m.cost_per_completion END AS cost_per_completion,
       CASE WHEN json_exists(u.unknown, '$.wasted_cost_ratio') THEN NULL ELSE m.wasted_cost_ratio END AS wasted_cost_ratio
)
FROM metrics_measured m
LEFT JOIN unknown u USING (run_id);
