-- execution_costs: every tool-side execution (ground truth) with the reasons its compute
-- may be wasted (docs/metrics.md, wasted_compute_ratio).
--
-- duplicate: an execution beyond the first of the same logical operation at the tool
-- (execution > 1), at any tool. duplicate_side_effects counts only those with side_effects
-- (idempotency keyed or none; NULL, unknown, counts as none); wasted compute counts them
-- all, since a repeated read costs compute too.
-- discarded: a successful execution, outcome 'ok' or 'lost' (the work was done; a lost
-- reply is still done work), whose result never reached the investigation (NOT delivered).
-- incomplete: the execution's investigation did not complete, or its root did not (work
-- for an investigation that never completed, in flight at the horizon included).
-- wasted: duplicate OR discarded OR incomplete; each execution's compute counts once.
CREATE OR REPLACE VIEW execution_costs AS
SELECT e.run_id, e.tool, e.op_key, e.investigation_id, i.root_id, e.execution,
       e.start, e."end", e.outcome, e.delivered, e.side_effects, e.compute,
       e.execution > 1 AS duplicate,
       e.outcome IN ('ok', 'lost') AND NOT e.delivered AS discarded,
       NOT coalesce(i.final_state = 'completed' AND r.final_state = 'completed', false) AS incomplete,
       e.execution > 1
           OR (e.outcome IN ('ok', 'lost') AND NOT e.delivered)
           OR NOT coalesce(i.final_state = 'completed' AND r.final_state = 'completed', false) AS wasted
FROM executions e
LEFT JOIN investigations i ON i.run_id = e.run_id AND i.investigation_id = e.investigation_id
LEFT JOIN investigations r ON r.run_id = i.run_id AND r.investigation_id = i.root_id;
