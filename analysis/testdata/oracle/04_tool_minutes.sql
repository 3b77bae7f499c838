-- tool_minutes (test-only second computation): per run, tool and minute in which the tool
-- was sent a call or was guarded: calls, failed calls, retries, capacity refusals, parks
-- and throttles, whether it was guarded, and whether an incident of the tool (as stored)
-- covered part of the minute.
CREATE OR REPLACE VIEW tool_minutes AS
WITH refusals AS (
    SELECT DISTINCT run_id, span_id FROM span_attrs
    WHERE (key IN ('error', 'mayday.attr.error') AND value IN ('rate_limited', 'overloaded'))
       OR (key = 'error.type' AND regexp_matches(lower(value), 'ratelimit|rate_limit|too_many_requests|toomanyrequests|overloaded|429'))
       OR (key IN ('http.response.status_code', 'http.status_code') AND value = '429')
),
per_minute AS (
    SELECT c.run_id, c.tool, c.minute,
           count(*) AS attempts,
           count(*) FILTER (WHERE c.failed) AS failed_attempts,
           count(*) FILTER (WHERE c.retry) AS retries,
           count(*) FILTER (WHERE c.failed AND r.span_id IS NOT NULL) AS refused
    FROM calls c LEFT JOIN refusals r ON r.run_id = c.run_id AND r.span_id = c.span_id
    WHERE c.tool IS NOT NULL
    GROUP BY ALL
),
guards AS (
    SELECT run_id, tool, minute,
           count(*) FILTER (WHERE kind = 'parked') AS parked,
           count(*) FILTER (WHERE kind = 'throttled') AS throttled
    FROM disruptions
    WHERE kind IN ('parked', 'throttled') AND tool IS NOT NULL
    GROUP BY run_id, tool, minute
),
samples AS (
    SELECT run_id, tool,
           sim_minute(run_id, "at") - 1 AS minute,
           bool_or(breaker_state IN ('open', 'half_open') OR parked > 0) AS guarded
    FROM tool_samples
    GROUP BY ALL
),
grid AS (
    SELECT run_id, tool, minute,
           coalesce(p.attempts, 0) AS attempts,
           coalesce(p.failed_attempts, 0) AS failed_attempts,
           coalesce(p.retries, 0) AS retries,
           coalesce(p.refused, 0) AS refused,
           coalesce(g.parked, 0) AS parked,
           coalesce(g.throttled, 0) AS throttled,
           coalesce(s.guarded, false) OR coalesce(g.parked, 0) + coalesce(g.throttled, 0) > 0 AS guarded
    FROM per_minute p
    FULL JOIN guards g USING (run_id, tool, minute)
    FULL JOIN samples s USING (run_id, tool, minute)
    WHERE coalesce(p.attempts, 0) > 0 OR coalesce(g.parked, 0) + coalesce(g.throttled, 0) > 0 OR coalesce(s.guarded, false)
)
SELECT m.run_id, m.tool, m.minute, sim_minute_start(m.run_id, m.minute) AS start,
       m.attempts, m.failed_attempts, m.retries, m.refused, m.parked, m.throttled, m.guarded,
       EXISTS (SELECT 1 FROM main.incidents i
               WHERE i.run_id = m.run_id AND i.tool = m.tool
                 AND i.start < sim_minute_start(m.run_id, m.minute + 1)
                 AND i."end" > sim_minute_start(m.run_id, m.minute)) AS in_incident
FROM grid m;
