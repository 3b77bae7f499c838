-- tool_stats: per run and tool, the traffic, failures, guards' effect and cost. The model
-- provider has its row, tool 'model', wherever the run made a model call: its attempts
-- are its calls (see calls), its operations the calls that are not retries (one per model
-- turn asked for), its errors its refused calls; it has no executions.
--
-- attempts, operations, retries, amplification (= attempts / operations), ok, errors,
-- timeouts, invalid: over sent attempts (see attempts); blocked: execute_tool spans stopped
-- by policy before sending; inspections: inspect spans.
-- mean_queue_wait, p95_queue_wait (seconds, interpolated quantile): over sent attempts
-- (a fast failure answers without queueing, with queue_wait 0).
-- executions, duplicate_executions, duplicate_side_effects, discarded_results, compute,
-- wasted_compute: over the tool's executions (see execution_costs).
-- incident_minutes, incidents, incident_failed_attempts: the tool's incidents' minutes,
-- count and failed attempts (see incidents).
-- recovery_episodes, median_recovery_time, p95_recovery_time: see recovery_episodes.
-- Ratios and quantiles are NULL when undefined (no attempt, no episode).
CREATE OR REPLACE VIEW tool_stats AS
WITH tools AS (
    SELECT DISTINCT run_id, tool FROM spans WHERE operation IN ('execute_tool', 'inspect')
    UNION
    SELECT DISTINCT run_id, tool FROM call_rows
    UNION
    SELECT DISTINCT run_id, tool FROM executions
),
att AS (
    SELECT run_id, tool,
           count(*) AS attempts,
           CASE WHEN tool = 'model' THEN count(*) FILTER (WHERE NOT retry)
                ELSE count(DISTINCT op_key) END AS operations,
           count(*) FILTER (WHERE retry) AS retries,
           count(*) FILTER (WHERE status = 'ok') AS ok,
           count(*) FILTER (WHERE status = 'error') AS errors,
           count(*) FILTER (WHERE status = 'timeout') AS timeouts,
           count(*) FILTER (WHERE status = 'invalid') AS invalid,
           avg(queue_wait) AS mean_queue_wait,
           quantile_cont(queue_wait, 0.95) AS p95_queue_wait
    FROM calls
    GROUP BY run_id, tool
),
other AS (
    SELECT run_id, tool,
           count(*) FILTER (WHERE operation = 'execute_tool' AND status = 'blocked') AS blocked,
           count(*) FILTER (WHERE operation = 'inspect') AS inspections
    FROM spans
    WHERE operation IN ('execute_tool', 'inspect')
    GROUP BY run_id, tool
),
ex AS (
    SELECT run_id, tool,
           count(*) AS executions,
           count(*) FILTER (WHERE duplicate) AS duplicate_executions,
           count(*) FILTER (WHERE duplicate AND side_effects) AS duplicate_side_effects,
           count(*) FILTER (WHERE discarded) AS discarded_results,
           sum(compute) AS compute,
           coalesce(sum(compute) FILTER (WHERE wasted), 0) AS wasted_compute
    FROM execution_costs
    GROUP BY run_id, tool
),
mins AS (
    SELECT run_id, tool,
           sum(minutes) AS incident_minutes,
           count(*) AS incidents,
           sum(failed_attempts) AS incident_failed_attempts
    FROM incidents
    GROUP BY run_id, tool
),
rec AS (
    SELECT run_id, tool,
           count(*) AS recovery_episodes,
           quantile_cont(seconds, 0.5) AS median_recovery_time,
           quantile_cont(seconds, 0.95) AS p95_recovery_time
    FROM recovery_episodes
    GROUP BY run_id, tool
)
SELECT t.run_id, t.tool,
       coalesce(att.attempts, 0) AS attempts,
       coalesce(att.operations, 0) AS operations,
       coalesce(att.retries, 0) AS retries,
       att.attempts / nullif(att.operations, 0) AS amplification,
       coalesce(att.ok, 0) AS ok,
       coalesce(att.errors, 0) AS errors,
       coalesce(att.timeouts, 0) AS timeouts,
       coalesce(att.invalid, 0) AS invalid,
       coalesce(other.blocked, 0) AS blocked,
       coalesce(other.inspections, 0) AS inspections,
       att.mean_queue_wait,
       att.p95_queue_wait,
       coalesce(ex.executions, 0) AS executions,
       coalesce(ex.duplicate_executions, 0) AS duplicate_executions,
       coalesce(ex.duplicate_side_effects, 0) AS duplicate_side_effects,
       coalesce(ex.discarded_results, 0) AS discarded_results,
       coalesce(ex.compute, 0) AS compute,
       coalesce(ex.wasted_compute, 0) AS wasted_compute,
       coalesce(mins.incident_minutes, 0) AS incident_minutes,
       coalesce(mins.incidents, 0) AS incidents,
       coalesce(mins.incident_failed_attempts, 0) AS incident_failed_attempts,
       coalesce(rec.recovery_episodes, 0) AS recovery_episodes,
       rec.median_recovery_time,
       rec.p95_recovery_time
FROM tools t
LEFT JOIN att USING (run_id, tool)
LEFT JOIN other USING (run_id, tool)
LEFT JOIN ex USING (run_id, tool)
LEFT JOIN mins USING (run_id, tool)
LEFT JOIN rec USING (run_id, tool);
