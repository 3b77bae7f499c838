-- recovery_curve: per run, the share of recovery episodes recovered by each time since their
-- start (docs/metrics.md, median_recovery_time), one row per distinct episode length.
--
-- Each episode (see recovery_episodes) is one observation of a time to recovery, seconds
-- long, with one of three outcomes: 'recovered' (a valid result at that time), 'ended' (the
-- investigation ended without a valid result for the step: it never recovers, a competing
-- event), 'in_flight' (still open at the horizon: right-censored, it may recover later).
--
-- The estimator is the cumulative incidence of recovery with never-recovered as a competing
-- event (Aalen–Johansen): at each time t with at_risk episodes of length >= t,
--   open_before = Π over earlier times u of (1 − (recovered(u) + never(u)) / at_risk(u))
--   recovered_share(t) = Σ over times u <= t of open_before(u) · recovered(u) / at_risk(u)
-- An episode that never recovers leaves for good: the curve never reaches 1 when work is
-- abandoned, so giving up can never look like fast recovery. A censored episode leaves the
-- risk set without an event. Without censoring, recovered_share(t) is exactly the episodes
-- recovered by t / all episodes.
CREATE OR REPLACE VIEW recovery_curve AS
WITH times AS (
    SELECT run_id, seconds,
           count(*) FILTER (WHERE outcome = 'recovered') AS recovered,
           count(*) FILTER (WHERE outcome = 'ended') AS never_recovered,
           count(*) FILTER (WHERE outcome = 'in_flight') AS censored
    FROM recovery_episodes
    GROUP BY run_id, seconds
),
risk AS (
    SELECT *,
           sum(recovered + never_recovered + censored)
               OVER (PARTITION BY run_id ORDER BY seconds DESC) AS at_risk
    FROM times
),
survival AS (
    SELECT *,
           coalesce(product(1 - (recovered + never_recovered) / at_risk)
               OVER (PARTITION BY run_id ORDER BY seconds
                     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 1) AS open_before
    FROM risk
)
SELECT run_id, seconds, at_risk::BIGINT AS at_risk, recovered, never_recovered, censored,
       open_before,
       sum(open_before * recovered / at_risk)
           OVER (PARTITION BY run_id ORDER BY seconds) AS recovered_share
FROM survival;
