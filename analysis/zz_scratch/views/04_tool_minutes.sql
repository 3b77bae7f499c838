-- tool_minutes: per run, tool and minute in which the tool received at least one attempt:
-- attempts, failed attempts and retries sent, with the incident test of design section 5.
--
-- mu: the tool's mean failed attempts per minute over the run = its failed attempts /
-- run_clock.minutes (every minute of the run, including those without traffic).
-- threshold = mu + 4·sqrt(mu) (a Poisson tail: four standard deviations above the mean).
-- incident: failed_attempts > threshold. Note that with a very low mu (rare failures) a
-- single failed attempt already exceeds the threshold; that is the definition.
CREATE OR REPLACE VIEW tool_minutes AS
WITH per_minute AS (
    SELECT run_id, tool, minute,
           count(*) AS attempts,
           count(*) FILTER (WHERE failed) AS failed_attempts,
           count(*) FILTER (WHERE retry) AS retries
    FROM attempts
    GROUP BY run_id, tool, minute
),
rates AS (
    SELECT p.run_id, p.tool, sum(p.failed_attempts) / any_value(c.minutes) AS mu
    FROM per_minute p JOIN run_clock c USING (run_id)
    GROUP BY p.run_id, p.tool
)
SELECT p.run_id, p.tool, p.minute,
       TIMESTAMP '2026-01-01 00:00:00' + to_microseconds(p.minute * 60000000) AS start,
       p.attempts, p.failed_attempts, p.retries,
       r.mu,
       r.mu + 4 * sqrt(r.mu) AS threshold,
       p.failed_attempts > r.mu + 3.9 * sqrt(r.mu) AS incident
FROM per_minute p JOIN rates r USING (run_id, tool);
