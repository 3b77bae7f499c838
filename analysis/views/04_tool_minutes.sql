-- tool_minutes: per run, tool and minute in which the tool received an attempt or was
-- guarded: attempts, failed attempts and retries sent, parks and throttles, and the incident
-- test (docs/metrics.md, incidents and correlated_failure_share). The model provider is a
-- tool here, 'model': its attempts are its calls (see calls).
--
-- baseline: the tool's own failure ratio in ordinary minutes, in two passes so that a
-- disruption does not raise the bar it is tested against. Pass 1 tests every minute against
-- a reference ratio: the tool's failure ratio in the minutes before the run's first fault
-- window (see goodput) when it was called then, else over all its attempts. The baseline is
-- then the ratio over the minutes pass 1 did not find hot (0 when there are none).
-- hot: the minute's failed attempts f out of n sent are far above the baseline p0: f >= 5
-- (the minimum size, so a few unlucky failures never make an incident) and
-- n·KL(f/n ‖ p0) >= ln(10^4), where KL is the Bernoulli relative entropy. By the Chernoff
-- bound P(X >= f) <= exp(−n·KL(f/n ‖ p0)) for X ~ Binomial(n, p0), so a minute of
-- independent failures at the baseline rate is hot with probability at most 10^-4: over a
-- few hundred tool-minutes per run, false incidents are rare. A baseline of 0 makes any
-- minute with >= 5 failures hot; f/n <= p0 is never hot.
-- guarded: the tool's breaker was open or half open, or operations were parked on it, at
-- the minute's end (tool_samples at the next minute's start), or a park on the breaker or
-- a throttle of the retry budget happened at the tool during the minute (see disruptions).
-- Guarded time is part of an incident next to a hot minute (see incidents), never one on
-- its own.
-- Which minutes form an incident is the incidents view's merge rule.
CREATE OR REPLACE VIEW tool_minutes AS
WITH per_minute AS (
    SELECT run_id, tool, minute,
           count(*) AS attempts,
           count(*) FILTER (WHERE failed) AS failed_attempts,
           count(*) FILTER (WHERE retry) AS retries
    FROM calls
    GROUP BY run_id, tool, minute
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
           coalesce(g.parked, 0) AS parked,
           coalesce(g.throttled, 0) AS throttled,
           coalesce(s.guarded, false) OR coalesce(g.parked, 0) + coalesce(g.throttled, 0) > 0 AS guarded
    FROM per_minute p
    FULL JOIN guards g USING (run_id, tool, minute)
    FULL JOIN samples s USING (run_id, tool, minute)
    WHERE coalesce(p.attempts, 0) > 0 OR coalesce(g.parked, 0) + coalesce(g.throttled, 0) > 0 OR coalesce(s.guarded, false)
),
first_window AS (
    SELECT run_id, sim_minute(run_id, min(window_start)) AS minute
    FROM faults
    WHERE window_end > window_start
    GROUP BY run_id
),
pass1 AS (
    SELECT g.run_id, g.tool,
           coalesce(sum(g.failed_attempts) FILTER (WHERE g.minute < w.minute)
                        / nullif(sum(g.attempts) FILTER (WHERE g.minute < w.minute), 0),
                    sum(g.failed_attempts) / nullif(sum(g.attempts), 0)) AS p_all
    FROM grid g LEFT JOIN first_window w USING (run_id)
    GROUP BY g.run_id, g.tool
),
tested1 AS (
    SELECT g.*, p.p_all,
           (CASE WHEN g.failed_attempts < 5 OR p.p_all IS NULL OR g.failed_attempts <= g.attempts * p.p_all THEN false
                 WHEN p.p_all <= 0 THEN true
                 WHEN p.p_all >= 1 THEN false
                 ELSE g.failed_attempts * ln(g.failed_attempts / (g.attempts * p.p_all))
                      + CASE WHEN g.attempts > g.failed_attempts THEN (g.attempts - g.failed_attempts) * ln((g.attempts - g.failed_attempts) / (g.attempts * (1 - p.p_all))) ELSE 0 END
                      >= ln(10000) END) AS hot1
    FROM grid g JOIN pass1 p USING (run_id, tool)
),
pass2 AS (
    SELECT run_id, tool,
           coalesce(sum(failed_attempts) FILTER (WHERE NOT hot1) / nullif(sum(attempts) FILTER (WHERE NOT hot1), 0), 0) AS baseline
    FROM tested1 GROUP BY run_id, tool
)
SELECT t.run_id, t.tool, t.minute,
       sim_minute_start(t.run_id, t.minute) AS start,
       t.attempts, t.failed_attempts, t.retries, t.parked, t.throttled, t.guarded,
       b.baseline,
       (CASE WHEN t.failed_attempts < 5 OR b.baseline IS NULL OR t.failed_attempts <= t.attempts * b.baseline THEN false
                 WHEN b.baseline <= 0 THEN true
                 WHEN b.baseline >= 1 THEN false
                 ELSE t.failed_attempts * ln(t.failed_attempts / (t.attempts * b.baseline))
                      + CASE WHEN t.attempts > t.failed_attempts THEN (t.attempts - t.failed_attempts) * ln((t.attempts - t.failed_attempts) / (t.attempts * (1 - b.baseline))) ELSE 0 END
                      >= ln(10000) END) AS hot
FROM tested1 t JOIN pass2 b USING (run_id, tool);
