-- disruptions: every first-hand sign of trouble of an operation (docs/metrics.md, recovery
-- episodes and incidents), one row per sign. A guard changes which signs occur, never
-- whether a disrupted operation leaves one.
--
-- kind, at (when the sign began), known_at (when the trouble was known), from:
--   'failed'     a call with status 'error' (see calls: a tool attempt, or a model call the
--                provider refused, tool 'model'): at = its send, known_at = its end;
--   'timed_out'  a call with status 'timeout': at = its send (the wait for the timeout
--                counts), known_at = its end;
--   'invalid'    a validate span with status 'invalid' (the result failed validation);
--   'blocked'    an execute_tool span with status 'blocked' (policy stopped it before sending);
--   'parked'     a transition with action 'park' and reason 'breaker_open' (the tool's
--                breaker was open);
--   'throttled'  a transition with action 'park' and reason 'retry_throttled' (the retry
--                budget was empty);
--   'crashed'    a takeover span (the investigation's worker crashed): at = its start, the
--                instant the worker died; known_at = its end, when the lease expired. Its
--                op_key is the operation in hand.
-- For parked and throttled, known_at = at. Transitions carry no operation: a transition's
-- op_key and tool are those of the investigation's keyed span (execute_tool, inspect, or a
-- refused model call) at the same instant (the last one, by span_id, when several are),
-- else of its first one after it, else of its last one before it: a park on the model's
-- guards answers, at the same instant, the refused call before it; a park on a tool's is
-- followed by the send it waited for. So the model's parks and throttles are the model's,
-- never another tool's. A sign of an investigation that never had a keyed span has op_key
-- and tool NULL.
-- A validate span names no tool: its tool is that of its operation's tool spans
-- (execute_tool or inspect; never the model).
-- step_key: '<investigation>/<step>' of op_key; minute: the minute of at.
CREATE OR REPLACE VIEW disruptions AS
WITH keyed AS (
    SELECT run_id, investigation_id, span_id, start, op_key, tool
    FROM spans
    WHERE (operation IN ('execute_tool', 'inspect') OR (operation = 'plan' AND kind = 'model_turn'))
      AND op_key IS NOT NULL
),
signs AS (
    SELECT run_id, investigation_id, op_key, tool,
           CASE WHEN status = 'timeout' THEN 'timed_out' ELSE 'failed' END AS kind,
           start AS "at", "end" AS known_at
    FROM call_rows
    WHERE failed
    UNION ALL
    SELECT run_id, investigation_id, op_key, tool,
           CASE WHEN operation = 'validate' THEN 'invalid'
                WHEN operation = 'takeover' THEN 'crashed'
                ELSE 'blocked' END,
           start, "end"
    FROM spans
    WHERE (operation = 'validate' AND status = 'invalid')
       OR (operation = 'execute_tool' AND status = 'blocked')
       OR operation = 'takeover'
),
marks AS (
    SELECT run_id, investigation_id, "at",
           CASE WHEN reason = 'retry_throttled' THEN 'throttled' ELSE 'parked' END AS kind
    FROM transitions
    WHERE action = 'park' AND reason IN ('breaker_open', 'retry_throttled')
),
-- The nearest keyed span after and before each mark: marks and keyed spans in one timeline
-- per investigation, read by two windows (sorting is n log n, however many marks an
-- investigation has). A keyed span at the mark's instant counts as both after and before;
-- the last one at that instant (prev_op) is taken. Only investigations with a mark are in
-- the timeline: a partition without one yields no row, and most investigations never park,
-- so the windows sort their spans only.
timeline AS (
    SELECT run_id, investigation_id, "at", kind, NULL AS span_id, NULL AS op_tool FROM marks
    UNION ALL
    SELECT run_id, investigation_id, start, NULL, span_id, {'op_key': op_key, 'tool': tool, 'at': start}
    FROM keyed
    SEMI JOIN marks USING (run_id, investigation_id)
),
located AS (
    SELECT run_id, investigation_id,
           CASE WHEN prev_op."at" = "at" OR next_op.op_key IS NULL THEN prev_op.op_key ELSE next_op.op_key END AS op_key,
           CASE WHEN prev_op."at" = "at" OR next_op.op_key IS NULL THEN prev_op.tool ELSE next_op.tool END AS tool,
           kind, "at", "at" AS known_at
    FROM (
        SELECT run_id, investigation_id, "at", kind,
               first_value(op_tool IGNORE NULLS) OVER (
                   PARTITION BY run_id, investigation_id ORDER BY "at", span_id NULLS FIRST
                   ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS next_op,
               last_value(op_tool IGNORE NULLS) OVER (
                   PARTITION BY run_id, investigation_id ORDER BY "at", span_id NULLS LAST
                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS prev_op
        FROM timeline
    )
    WHERE kind IS NOT NULL
),
everything AS (
    SELECT * FROM signs
    UNION ALL
    SELECT * FROM located
),
-- The tool of the operations of the signs without one (see above), from their keyed spans.
-- It reads spans itself rather than keyed: a common table expression read twice is kept
-- whole (DuckDB materializes it), and keyed is every tool attempt and model call.
op_tools AS (
    SELECT run_id, op_key, any_value(tool) AS tool
    FROM spans
    SEMI JOIN (SELECT run_id, op_key FROM everything WHERE tool IS NULL) USING (run_id, op_key)
    WHERE (operation IN ('execute_tool', 'inspect') OR (operation = 'plan' AND kind = 'model_turn'))
      AND op_key IS NOT NULL AND tool <> 'model'
    GROUP BY run_id, op_key
)
SELECT e.run_id, i.root_id, e.investigation_id, e.op_key,
       split_part(e.op_key, '/', 1) || '/' || split_part(e.op_key, '/', 2) AS step_key,
       coalesce(e.tool, o.tool) AS tool, e.kind, e."at", e.known_at,
       sim_minute(e.run_id, e."at") AS minute
FROM everything e
LEFT JOIN op_tools o ON o.run_id = e.run_id AND o.op_key = e.op_key
LEFT JOIN investigations i ON i.run_id = e.run_id AND i.investigation_id = e.investigation_id;
