-- token_costs: the model tokens of every investigation, and how many of them were wasted
-- (docs/metrics.md, wasted_token_ratio; the token counterpart of execution_costs).
--
-- tokens: investigations.tokens (the agent's own model turns and supervisor consultations).
-- incomplete: the investigation did not complete, or its root did not: all its tokens are
-- wasted.
-- Otherwise a model turn (plan span of kind 'model_turn') is wasted when the work it decided
-- was thrown away or repeated: an execute_tool span names it in caused_by (the simulator
-- links every attempt, and a blocked operation, to the model turn that decided its
-- operation; retries keep the link) and that span's operation never passed validation (no
-- validate span with status 'ok' for its op_key: an invalid result that was revised, a
-- blocked operation, or a step dropped), or another, earlier turn had already decided the
-- same operation (the same operation thought out again).
-- wasted_tokens: tokens counted as wasted (each turn once).
CREATE OR REPLACE VIEW token_costs AS
WITH plans AS (
    SELECT rowid AS plan_row, run_id, investigation_id, span_id, start,
           coalesce(input_tokens, 0) + coalesce(output_tokens, 0) AS tokens
    FROM spans
    WHERE operation = 'plan' AND kind = 'model_turn'
),
-- Every link from an execute_tool span to a span in its caused_by. Most links name spans
-- that are no model turn, and retries repeat their operation's links.
links AS (
    SELECT run_id, unnest(caused_by) AS plan_span, op_key
    FROM spans
    WHERE operation = 'execute_tool' AND op_key IS NOT NULL
),
-- caused: each model turn with each operation it decided, once. The links are joined to
-- the model turns before the repeated ones are dropped, so the DISTINCT sees only the
-- links to model turns (about a third of them). plan_row keeps two rows of spans that
-- are alike in every column here two turns.
caused AS (
    SELECT DISTINCT p.plan_row, p.run_id, p.investigation_id, p.span_id, p.start, p.tokens, l.op_key
    FROM links l
    JOIN plans p ON p.run_id = l.run_id AND p.span_id = l.plan_span
),
valid_ops AS (
    SELECT DISTINCT run_id, op_key FROM spans
    WHERE operation = 'validate' AND status = 'ok' AND op_key IS NOT NULL
),
turns AS (
    SELECT c.run_id, c.investigation_id, c.span_id, c.tokens, c.op_key,
           v.op_key IS NULL AS discarded,
           row_number() OVER (PARTITION BY c.run_id, c.op_key ORDER BY c.start, c.span_id) > 1 AS duplicate
    FROM caused c
    LEFT JOIN valid_ops v ON v.run_id = c.run_id AND v.op_key = c.op_key
),
wasted_turns AS (
    SELECT run_id, investigation_id, span_id, any_value(tokens) AS tokens
    FROM turns
    WHERE discarded OR duplicate
    GROUP BY run_id, investigation_id, span_id
),
per_inv AS (
    SELECT run_id, investigation_id, sum(tokens) AS turn_waste
    FROM wasted_turns GROUP BY run_id, investigation_id
)
SELECT i.run_id, i.investigation_id, i.root_id, i.tokens,
       NOT coalesce(i.final_state = 'completed' AND r.final_state = 'completed', false) AS incomplete,
       CASE WHEN NOT coalesce(i.final_state = 'completed' AND r.final_state = 'completed', false) THEN i.tokens
            ELSE least(coalesce(w.turn_waste, 0), i.tokens) END AS wasted_tokens
FROM investigations i
LEFT JOIN investigations r ON r.run_id = i.run_id AND r.investigation_id = i.root_id
LEFT JOIN per_inv w ON w.run_id = i.run_id AND w.investigation_id = i.investigation_id;
