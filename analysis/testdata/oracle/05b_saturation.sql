-- saturation (test-only second computation): for each saturation span as stored, the calls
-- sent to the tool in it and those refused for capacity, recomputed from the trace.
CREATE OR REPLACE VIEW saturation AS
WITH windows AS (
    SELECT run_id, episode, tool, start, "end" FROM main.saturation
),
refusals AS (
    SELECT DISTINCT run_id, span_id FROM span_attrs
    WHERE (key IN ('error', 'mayday.attr.error') AND value IN ('rate_limited', 'overloaded'))
       OR (key = 'error.type' AND regexp_matches(lower(value), 'ratelimit|rate_limit|too_many_requests|toomanyrequests|overloaded|429'))
       OR (key IN ('http.response.status_code', 'http.status_code') AND value = '429')
),
sent AS (
    SELECT w.run_id, w.episode, count(*) AS calls,
           count(*) FILTER (WHERE a.failed AND f.span_id IS NOT NULL) AS refused
    FROM windows w
    JOIN call_rows a ON a.run_id = w.run_id AND a.tool = w.tool AND a.start >= w.start AND a.start < w."end"
    LEFT JOIN refusals f ON f.run_id = a.run_id AND f.span_id = a.span_id
    GROUP BY ALL
)
SELECT w.run_id, w.episode, w.tool, w.start, w."end",
       (epoch_us(w."end") - epoch_us(w.start)) / 60e6 AS minutes,
       coalesce(s.calls, 0) AS calls, coalesce(s.refused, 0) AS refused
FROM windows w LEFT JOIN sent s USING (run_id, episode);
