-- guards: the periodic samples (tool_samples) of every tool that had a failed attempt:
-- retries sent since the previous sample, retry-budget tokens (NULL when the budget is off,
-- read as -1) and the breaker's state.
SELECT tool,
       sim_seconds(run_id, "at") AS at_s,
       retries::BIGINT, coalesce(budget_tokens, -1) AS budget_tokens,
       coalesce(breaker_state, 'off') AS breaker_state, failures::BIGINT
FROM tool_samples
WHERE run_id = $1
  AND tool IN (SELECT tool FROM tool_samples WHERE run_id = $1 GROUP BY tool HAVING sum(failures) > 0)
ORDER BY tool, "at";
