-- refusals: supervisor suggestions the engine refused. The engine journals a refusal as a
-- note that changes no state (from_state = to_state), decided by the supervisor, whose
-- action is the suggestion and whose reason names the guardrail (refused_*).
SELECT from_state, action, reason, count(*) AS n, min(investigation_id) AS example
FROM transitions
WHERE run_id = $1 AND from_state = to_state AND decided_by = 'supervisor'
GROUP BY ALL
ORDER BY n DESC, action, reason, from_state;
