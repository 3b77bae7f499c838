-- span_attributes: every attribute of every span (docs/traces.md, "Span attributes"), one
-- row each, as the spans recorded them (redacted): the kind column, the rows of span_attrs,
-- and for an execute_tool span that was sent (not blocked) its tool's static arguments
-- from tool_args under arg.<name>, unless the span keeps arguments of its own in span_attrs
-- (they differed from the tool's recorded set). The marker row 'arg.' (a span with no arguments while its tool
-- has some) only says so and is not an attribute. Row order is not defined.
CREATE OR REPLACE VIEW span_attributes AS
SELECT run_id, span_id, 'kind' AS key, kind AS value
FROM spans
WHERE kind IS NOT NULL
UNION ALL
SELECT run_id, span_id, key, value
FROM span_attrs
WHERE key <> 'arg.'
UNION ALL
SELECT s.run_id, s.span_id, 'arg.' || a.key AS key, a.value
FROM spans s
JOIN tool_args a ON a.run_id = s.run_id AND a.tool = s.tool
WHERE s.operation = 'execute_tool' AND s.status <> 'blocked'
  AND NOT EXISTS (SELECT 1 FROM span_attrs o
                  WHERE o.run_id = s.run_id AND o.span_id = s.span_id AND starts_with(o.key, 'arg.'));
