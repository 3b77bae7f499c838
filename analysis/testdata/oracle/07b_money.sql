-- costs: one row per run, the money the run spent at the prices of its scenario (the
-- `prices` of runs.config), in the scenario's currency; NULL columns for an unpriced run.
--
-- Model tokens: every model turn and supervisor consultation (spans with operation 'plan' or
-- 'supervise') at its model's price per 1000 input and output tokens. Tool calls: every
-- attempt sent (execute_tool spans, blocked ones never were) at its tool's price per call.
-- Compute: every execution (ground truth, executions.compute) at its tool's price per
-- compute-unit second. Usage without a price costs 0.
-- wasted_cost: the compute of wasted executions (execution_costs.wasted: duplicate,
-- discarded or for an investigation that did not complete), the call cost of every paid
-- attempt that failed (status 'error' or 'timeout': paid for, no result), plus the token
-- and call cost of investigations that did not complete or whose root did not.
CREATE OR REPLACE VIEW costs AS
WITH cfg AS (
    SELECT run_id, CASE WHEN json_valid(config) THEN config END AS config FROM runs
),
priced AS (
    SELECT run_id, json_extract_string(config, '$.prices.currency') AS currency
    FROM cfg WHERE json_extract(config, '$.prices') IS NOT NULL
),
model_prices AS (
    SELECT run_id, unnest(from_json(json_extract(config, '$.prices.models'),
        '[{"model":"VARCHAR","input":"DOUBLE","output":"DOUBLE"}]'), recursive := true)
    FROM cfg
),
tool_prices AS (
    SELECT run_id, unnest(from_json(json_extract(config, '$.prices.tools'),
        '[{"tool":"VARCHAR","call":"DOUBLE","compute_second":"DOUBLE"}]'), recursive := true)
    FROM cfg
),
span_costs AS (
    SELECT s.run_id,
           sum(CASE
                   WHEN s.operation IN ('plan', 'supervise') THEN
                       coalesce(s.input_tokens, 0) / 1000 * coalesce(mp.input, 0)
                       + coalesce(s.output_tokens, 0) / 1000 * coalesce(mp.output, 0)
                   WHEN s.operation = 'execute_tool' AND s.status <> 'blocked' THEN coalesce(tp.call, 0)
                   ELSE 0
               END) AS cost,
           sum(CASE
                   WHEN s.operation = 'execute_tool' AND s.status IN ('error', 'timeout') THEN coalesce(tp.call, 0)
                   WHEN coalesce(i.final_state = 'completed' AND r.final_state = 'completed', false) THEN 0
                   WHEN s.operation IN ('plan', 'supervise') THEN
                       coalesce(s.input_tokens, 0) / 1000 * coalesce(mp.input, 0)
                       + coalesce(s.output_tokens, 0) / 1000 * coalesce(mp.output, 0)
                   WHEN s.operation = 'execute_tool' AND s.status <> 'blocked' THEN coalesce(tp.call, 0)
                   ELSE 0
               END) AS wasted
    FROM spans s
    SEMI JOIN priced p ON p.run_id = s.run_id
    LEFT JOIN model_prices mp ON mp.run_id = s.run_id AND mp.model = s.model
    LEFT JOIN tool_prices tp ON tp.run_id = s.run_id AND tp.tool = s.tool
    LEFT JOIN investigations i ON i.run_id = s.run_id AND i.investigation_id = s.investigation_id
    LEFT JOIN investigations r ON r.run_id = i.run_id AND r.investigation_id = i.root_id
    GROUP BY s.run_id
),
exec_costs AS (
    SELECT e.run_id,
           sum(e.compute * coalesce(tp.compute_second, 0)) AS cost,
           sum(e.compute * coalesce(tp.compute_second, 0)) FILTER (WHERE e.wasted) AS wasted
    FROM execution_costs e
    LEFT JOIN tool_prices tp ON tp.run_id = e.run_id AND tp.tool = e.tool
    GROUP BY e.run_id
)
SELECT p.run_id, p.currency,
       coalesce(s.cost, 0) + coalesce(x.cost, 0) AS cost,
       coalesce(s.wasted, 0) + coalesce(x.wasted, 0) AS wasted_cost
FROM priced p
LEFT JOIN span_costs s USING (run_id)
LEFT JOIN exec_costs x USING (run_id);
