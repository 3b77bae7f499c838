-- call_rows: the rows of calls (see there), every call sent to a dependency, without the
-- retry flag: the tool attempts (see attempts) and the model provider's calls (plan spans of
-- kind 'model_turn', tool 'model', queue_wait and compute 0). model_call: a call to the
-- model provider (a tool may itself be named 'model'). failed: status 'error' or
-- 'timeout'. minute: the minute of the call's start.
-- The views that count no retries read this view instead of calls, whose retry flag of a
-- model call takes a window over the investigation's model calls.
CREATE OR REPLACE VIEW call_rows AS
SELECT run_id, root_id, investigation_id, span_id, tool, op_key, attempt, start, "end",
       queue_wait, status, failure_class, fault_id, compute, failed, false AS model_call, minute
FROM attempts
UNION ALL
SELECT run_id, trace_id AS root_id, investigation_id, span_id, 'model' AS tool, op_key,
       attempt, start, "end", 0.0 AS queue_wait, status, failure_class, fault_id,
       0.0 AS compute,
       status IN ('error', 'timeout') AS failed,
       true AS model_call,
       sim_minute(run_id, start) AS minute
FROM spans
WHERE operation = 'plan' AND kind = 'model_turn';
