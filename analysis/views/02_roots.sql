-- roots: one row per root investigation (docs/metrics.md: "root investigations only"),
-- with the totals of its whole tree (the root and every subagent below it).
--
-- A root is an investigation without a parent (parent_id 0 or NULL). Subagents' work is
-- charged to the root that spawned them: tree_tokens, tree_compute and tree_escalations sum
-- the tree's rows, each of which counts only its own agent's usage. in_flight: the root had
-- not ended at the horizon (ended_at NULL); such a root is neither completed nor terminated.
--
-- Whether the whole tree delivered (docs/metrics.md, full_scope_completion_rate and
-- correct_completion_rate): tree_reduced counts the tree's investigations, the root
-- included, that completed with scope 'reduced' (steps dropped, or a subagent's work lost:
-- the simulator reduces a parent's scope when a subagent fails and the policy goes on
-- without it, or when a subagent itself finished reduced); tree_wrong counts those that
-- completed with a result that is not truly valid. A subagent the policy replaced
-- (recovery.subagents.on_failure: respawn) and whose replacement delivered leaves no mark;
-- one the policy failed the parent for makes the parent terminated.
CREATE OR REPLACE VIEW roots AS
WITH trees AS (
    SELECT run_id, root_id,
           count(*) - 1 AS subagents,
           sum(tokens) AS tree_tokens,
           sum(compute) AS tree_compute,
           sum(escalations) AS tree_escalations,
           count(*) FILTER (WHERE final_state = 'completed' AND coalesce(scope, 'full') <> 'full') AS tree_reduced,
           count(*) FILTER (WHERE final_state = 'completed' AND NOT coalesce(truly_valid, false)) AS tree_wrong
    FROM investigations
    GROUP BY run_id, root_id
)
SELECT i.*,
       i.ended_at IS NULL AS in_flight,
       t.subagents, t.tree_tokens, t.tree_compute, t.tree_escalations, t.tree_reduced, t.tree_wrong
FROM investigations i
JOIN trees t ON t.run_id = i.run_id AND t.root_id = i.investigation_id
WHERE coalesce(i.parent_id, 0) = 0;
