-- attempts: every tool attempt that was sent, one row per execute_tool span.
--
-- An attempt is an execute_tool span whose status is not 'blocked' (a blocked operation is
-- stopped before sending: policy_violation, docs/scenarios.md). Inspections (operation
-- 'inspect') are lookups, not attempts, and are not here.
-- failed: the attempt did not bring its result back: status 'error' (a fast failure:
-- transient fault, outage, brownout error; or the caller's worker crashed during the
-- attempt, failure_class uncertain_completion) or 'timeout' (hang, lost reply, slow
-- service). A result that arrived but failed validation is the agent's failure, not the
-- tool's: it is a validate span, and no failed attempt.
-- retry: attempt > 1 (a further attempt of the same logical operation).
-- minute: the minute of simulated time in which the attempt was sent (its start), so an
-- attempt that hangs until its timeout is counted when it met the broken tool.
-- Attempts of subagents count like those of roots: every subagent belongs to a root's tree.
CREATE OR REPLACE VIEW attempts AS
SELECT run_id, trace_id AS root_id, investigation_id, span_id, tool, op_key, attempt,
       start, "end", queue_wait, status, failure_class, fault_id, compute,
       status IN ('error', 'timeout') AS failed,
       attempt > 1 AS retry,
       sim_minute(run_id, start) AS minute
FROM spans
WHERE operation = 'execute_tool' AND status <> 'blocked';
