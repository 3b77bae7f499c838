-- calls: every call sent to a dependency, one row per call: the tool attempts (see
-- attempts) and the calls to the model provider, whose tool is 'model'. The model is a
-- dependency like any tool (docs/metrics.md): its refusals are failed calls, and they count
-- in disruptions, incidents, recovery episodes, tool_stats and correlated_failure_share.
--
-- A model call is a plan span of kind 'model_turn': an admitted turn (status 'ok', from the
-- call to the turn's end) or a failed call (status 'error': rate limited, a provider
-- failure or a fault on the model; a refused call fails at once, start = end, and one in
-- flight when an outage of the model began fails when its answer was due; it names tool
-- 'model', the op_key of the operation the turn is for, and in attempt its number among the
-- calls since the investigation's last completed turn). A turn never finished (its worker
-- crashed, or the run ended) left no span and is no call. Consultations of a model
-- supervisor (supervise spans) go through the same provider but are not calls here.
-- failed: status 'error' or 'timeout'. retry: a tool attempt with attempt > 1; a model
-- call whose investigation's previous call was refused. queue_wait and compute are 0 for
-- the model. minute: the minute of the call's start.
-- retry_amplification stays over tool attempts only (see metrics).
-- The rows are call_rows'; only retry is added here. A model call's retry needs a window over
-- its investigation's model calls, which DuckDB runs wherever the view is read, whether or
-- not retry is, so the views that count no retries read call_rows.
CREATE OR REPLACE VIEW calls AS
SELECT run_id, root_id, investigation_id, span_id, tool, op_key, attempt, start, "end",
       queue_wait, status, failure_class, fault_id, compute, failed, attempt > 1 AS retry, minute
FROM call_rows
WHERE NOT model_call
UNION ALL
SELECT run_id, root_id, investigation_id, span_id, tool, op_key, attempt, start, "end",
       queue_wait, status, failure_class, fault_id, compute, failed,
       coalesce(lag(status) OVER (PARTITION BY run_id, investigation_id ORDER BY start, span_id)
                    IN ('error', 'timeout'), false) AS retry,
       minute
FROM call_rows
WHERE model_call;
