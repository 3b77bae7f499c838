-- roots: one row per root investigation (docs/metrics.md: "root investigations only"),
-- with the totals of its whole tree (the root and every subagent below it).
--
-- A root is an investigation without a parent (parent_id 0 or NULL). Subagents' work is
-- charged to the root that spawned them: tree_tokens, tree_compute and tree_escalations sum
-- the tree's rows, each of which counts only its own agent's usage. in_flight: the root had
-- not ended at the horizon (ended_at NULL); such a root is neither completed nor terminated.
CREATE OR REPLACE VIEW roots AS
WITH trees AS (
    SELECT run_id, root_id,
           count(*) - 1 AS subagents,
           sum(tokens) AS tree_tokens,
           sum(compute) AS tree_compute,
           sum(escalations) AS tree_escalations
    FROM investigations
    GROUP BY run_id, root_id
)
SELECT i.*,
       i.ended_at IS NULL AS in_flight,
       t.subagents, t.tree_tokens, t.tree_compute, t.tree_escalations
FROM investigations i
JOIN trees t ON t.run_id = i.run_id AND t.root_id = i.investigation_id
WHERE coalesce(i.parent_id, 0) = 0;
