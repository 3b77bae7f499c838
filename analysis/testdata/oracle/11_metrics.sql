-- metrics: one row per run (every row of runs) with every metric of docs/metrics.md, under
-- the names used there. Root investigations only where the metric counts investigations; a
-- subagent's work (tokens, attempts, executions, escalations) is charged to its root.
-- A ratio with a zero denominator is NULL (undefined), never 0.
--
-- started                 root investigations in the trace (each arrived before the horizon).
-- completed, terminated   roots whose final_state is 'completed' / 'terminated'; a root in
--                         flight at the horizon is neither.
-- completion_rate         completed / started.
-- correct_completion_rate completed roots with truly_valid whose tree has no completed
--                         investigation with a wrong result (roots.tree_wrong = 0) and none
--                         with a reduced scope (roots.tree_reduced = 0) / started: only whole
--                         trees that are correct.
-- validation_pass_rate    completed roots with validated (independent validation) / completed.
-- retry_amplification     attempts sent / distinct op_keys among them (see attempts).
-- duplicate_side_effects  executions with execution > 1 and side_effects (keyed or none).
-- discarded_results       executions with outcome 'ok' or 'lost' and NOT delivered.
-- median_recovery_time,
-- p95_recovery_time       the first episode length at which recovery_curve.recovered_share
--                         reaches 0.5 / 0.95 (to within 1e-9, absorbing rounding): the times
--                         by which half / 95% of the episodes had recovered, with never-
--                         recovered episodes as a competing event and in-flight ones
--                         censored. NULL ("never") when the share never gets there, or when
--                         the run has no episode (episode_recovery_rate NULL tells them apart).
-- episode_recovery_rate   episodes with outcome 'recovered' / episodes; NULL without one.
-- goodput_recovery_time   seconds from the end of the last fault window to the start of the
--                         first minute m, starting at or after the minute in which the window
--                         ended, whose 5-minute window is back (goodput.recovered: valid
--                         results of minutes m .. m+4 at or above the threshold, 90% of the
--                         steady state before the first fault less its noise) and m+4 is no
--                         later than the last minute with an arrival; 0 when that minute is
--                         the window's own last minute. NULL when no such minute exists
--                         (goodput never came back while arrivals continued: then
--                         goodput_recovered is 0), or when nothing can be tested (no fault
--                         window, no steady state before it, a baseline of 0, or arrivals
--                         end within 5 minutes of the window's end: goodput_recovered NULL).
-- goodput_recovered       1 when goodput came back (goodput_recovery_time defined), 0 when it
--                         was tested and never came back, NULL when it could not be tested.
-- full_scope_completion_rate completed roots whose whole tree delivered: no investigation of
--                         the tree, the root included, completed with scope 'reduced'
--                         (roots.tree_reduced = 0) / started.
-- human_intervention_rate roots whose tree (root or a subagent) has escalations > 0 / started.
-- terminated_rate         terminated / started.
-- unfinished_rate         roots neither completed nor terminated at the horizon (running,
--                         parked, waiting for a human) / started: (started - completed -
--                         terminated) / started.
-- termination_reasons     MAP reason -> terminated roots (see termination_reasons).
-- tokens_per_completion   tokens of every investigation (roots and subagents, completed or
--                         not) / completed.
-- compute_per_completion  compute of every tool execution (ground truth, executions.compute)
--                         / completed.
-- wasted_compute_ratio    compute of executions that are duplicate, discarded or for an
--                         investigation that did not complete (see execution_costs) / all
--                         execution compute.
-- wasted_token_ratio      wasted tokens / all tokens of every investigation (see
--                         token_costs).
-- correlated_failure_share failed calls sent to a dependency (a tool or the model) during
--                         one of its incidents (see incidents) / failed calls (see calls).
-- makespan                run_clock.makespan (seconds of simulated time).
-- events                  runs.events (simulation events processed).
--
-- Capacity (workload.workers):
-- median_pending_time     median (quantile_cont) over root investigations of the seconds from
--                         arrived_at to its first transition out of pending (when it got a
--                         worker); one that never started counts until the run's end
--                         (censored). NULL for a run without roots.
-- median_subagent_pending_time the same over subagents; NULL for a run without subagents.
-- backlog_growth          (roots arrived - roots ended by the last arrival) per hour of the
--                         arrival window (first to last arrival); positive means the fleet
--                         falls behind. NULL when all roots arrive at one instant.
-- Money (prices; see costs):
-- cost_per_completion     costs.cost / completed; NULL for an unpriced run or nothing completed.
-- wasted_cost_ratio       costs.wasted_cost / costs.cost (failed paid attempts included);
--                         NULL when unpriced or nothing cost.
-- peak_backlog            the most roots open at once (arrived, not yet ended); arrivals and
--                         ends at one instant are netted before the running count is taken.
CREATE OR REPLACE VIEW metrics_measured AS
WITH inv AS (
    SELECT run_id,
           count(*) AS started,
           count(*) FILTER (WHERE final_state = 'completed') AS completed,
           count(*) FILTER (WHERE final_state = 'completed' AND truly_valid AND tree_wrong = 0 AND tree_reduced = 0) AS completed_valid,
           count(*) FILTER (WHERE final_state = 'completed' AND validated) AS completed_validated,
           count(*) FILTER (WHERE final_state = 'completed' AND tree_reduced = 0) AS completed_full,
           count(*) FILTER (WHERE final_state = 'terminated') AS terminated,
           count(*) FILTER (WHERE tree_escalations > 0) AS escalated
    FROM roots
    GROUP BY run_id
),
tok AS (
    SELECT run_id, sum(tokens) AS tokens, sum(wasted_tokens) AS wasted_tokens
    FROM token_costs GROUP BY run_id
),
-- operations counts the groups of a grouping by op_key, not count(DISTINCT op_key): DuckDB
-- keeps a distinct aggregate's values in memory whole, and a run has an op_key per operation.
att AS (
    SELECT run_id,
           sum(n)::BIGINT AS attempts,
           count(op_key) AS operations
    FROM (SELECT run_id, op_key, count(*) AS n FROM attempts GROUP BY run_id, op_key)
    GROUP BY run_id
),
failed_calls AS (
    SELECT run_id, count(*) FILTER (WHERE failed) AS failed_attempts
    FROM call_rows
    GROUP BY run_id
),
corr AS (
    SELECT run_id, sum(failed_attempts) AS incident_failed_attempts
    FROM incidents
    GROUP BY run_id
),
-- goodput: the rule of docs/metrics.md, in results rather than minutes. gp_res: each valid
-- result and the 30th from it (itself included); gp_b: the first fault window's start fs,
-- the last one's end fe, the first and last root arrivals fa, la; the steady state is the
-- results with 2t >= fa + fs and t < fs; its windows' durations' ceil(0.99 m)-th smallest
-- is the limit; a window is back when 9 d <= 10 limit.
gp_res AS (
    SELECT run_id, epoch_us("end") AS t,
           lead(epoch_us("end"), 29) OVER (PARTITION BY run_id ORDER BY epoch_us("end")) AS t30
    FROM spans WHERE operation = 'validate' AND status = 'ok'
),
gp_b AS (
    SELECT w.run_id, w.fs, w.fe, a.fa, a.la
    FROM (SELECT run_id, min(epoch_us(window_start)) AS fs, max(epoch_us(window_end)) AS fe
          FROM faults WHERE window_end > window_start GROUP BY run_id) w
    JOIN (SELECT run_id, min(epoch_us(arrived_at)) AS fa, max(epoch_us(arrived_at)) AS la FROM roots GROUP BY run_id) a USING (run_id)
    WHERE w.fs > a.fa
),
gp_steady AS (
    SELECT b.run_id, count(*) AS steady
    FROM gp_b b JOIN gp_res r USING (run_id)
    WHERE 2 * r.t >= b.fa + b.fs AND r.t < b.fs
    GROUP BY b.run_id
),
gp_durs AS (
    SELECT b.run_id, r.t30 - r.t AS d,
           row_number() OVER (PARTITION BY b.run_id ORDER BY r.t30 - r.t) AS k,
           count(*) OVER (PARTITION BY b.run_id) AS m
    FROM gp_b b JOIN gp_res r USING (run_id)
    WHERE 2 * r.t >= b.fa + b.fs AND r.t30 < b.fs
),
gp_limit AS (
    SELECT d.run_id, d.d AS lim
    FROM gp_durs d JOIN gp_steady s USING (run_id)
    WHERE s.steady >= 60 AND d.k = (99 * d.m + 99) // 100
),
gp_after AS (
    SELECT b.run_id, r.t, r.t30, row_number() OVER (PARTITION BY b.run_id ORDER BY r.t) AS j
    FROM gp_b b JOIN gp_res r USING (run_id)
    WHERE r.t >= b.fe
),
gp_hit AS (
    SELECT a.run_id, min(a.t) AS t_back
    FROM gp_after a JOIN gp_b b USING (run_id) JOIN gp_limit l USING (run_id)
    WHERE a.t30 IS NOT NULL AND a.t30 <= b.la AND 9 * (a.t30 - a.t) <= 10 * l.lim
    GROUP BY a.run_id
),
-- gp: tested when the window from fe is complete by la, or, without it (fewer than 30
-- results from fe to la), when la comes at least limit/0.9 after fe (that window, complete
-- only after la, lasts longer than a window back can: never back).
gp AS (
    SELECT b.run_id,
           CASE WHEN f.t30 <= b.la AND 9 * (f.t30 - b.fe) <= 10 * l.lim THEN 0.0 ELSE (h.t_back - b.fe) / 1e6 END AS goodput_recovery_time,
           CASE WHEN f.t30 <= b.la AND (9 * (f.t30 - b.fe) <= 10 * l.lim OR h.t_back IS NOT NULL) THEN 1.0 ELSE 0.0 END AS goodput_recovered
    FROM gp_b b
    JOIN gp_limit l USING (run_id)
    LEFT JOIN gp_after f ON f.run_id = b.run_id AND f.j = 1
    LEFT JOIN gp_hit h USING (run_id)
    WHERE f.t30 <= b.la OR 9 * (b.la - b.fe) >= 10 * l.lim
),
ex AS (
    SELECT run_id,
           count(*) FILTER (WHERE duplicate AND side_effects) AS duplicate_side_effects,
           count(*) FILTER (WHERE discarded) AS discarded_results,
           sum(compute) AS compute,
           sum(compute) FILTER (WHERE wasted) AS wasted_compute
    FROM execution_costs
    GROUP BY run_id
),
rec AS (
    SELECT run_id,
           min(seconds) FILTER (WHERE recovered_share >= 0.5 - 1e-9) AS median_recovery_time,
           min(seconds) FILTER (WHERE recovered_share >= 0.95 - 1e-9) AS p95_recovery_time,
           sum(recovered) / sum(recovered + never_recovered + censored) AS episode_recovery_rate
    FROM recovery_curve
    GROUP BY run_id
),
pend AS (
    SELECT i.run_id,
           quantile_cont(epoch_us(coalesce(s.started_at, c.end_at)) - epoch_us(i.arrived_at), 0.5)
               FILTER (WHERE coalesce(i.parent_id, 0) = 0) / 1e6 AS median_pending_time,
           quantile_cont(epoch_us(coalesce(s.started_at, c.end_at)) - epoch_us(i.arrived_at), 0.5)
               FILTER (WHERE coalesce(i.parent_id, 0) <> 0) / 1e6 AS median_subagent_pending_time
    FROM investigations i
    JOIN run_clock c USING (run_id)
    LEFT JOIN (
        SELECT run_id, investigation_id, min("at") AS started_at
        FROM transitions
        WHERE coalesce(nullif(from_state, ''), 'pending') = 'pending' AND to_state <> 'pending'
        GROUP BY ALL
    ) s USING (run_id, investigation_id)
    GROUP BY i.run_id
),
arrivals AS (
    SELECT run_id, min(arrived_at) AS first_at, max(arrived_at) AS last_at, count(*) AS arrived
    FROM roots GROUP BY run_id
),
backlog AS (
    SELECT a.run_id,
           (a.arrived - count(r.ended_at) FILTER (WHERE r.ended_at <= a.last_at))
               / nullif((epoch_us(a.last_at) - epoch_us(a.first_at)) / 3600e6, 0) AS backlog_growth
    FROM arrivals a JOIN roots r USING (run_id)
    GROUP BY a.run_id, a.arrived, a.first_at, a.last_at
),
open_moves AS (
    SELECT run_id, "at", sum(delta) AS delta
    FROM (
        SELECT run_id, arrived_at AS "at", 1 AS delta FROM roots
        UNION ALL
        SELECT run_id, ended_at, -1 FROM roots WHERE ended_at IS NOT NULL
    )
    GROUP BY ALL
),
peak AS (
    SELECT run_id, max(open_roots)::BIGINT AS peak_backlog
    FROM (SELECT run_id, sum(delta) OVER (PARTITION BY run_id ORDER BY "at") AS open_roots FROM open_moves)
    GROUP BY run_id
),
reasons AS (
    SELECT run_id, map_from_entries(list((reason, investigations) ORDER BY reason)) AS termination_reasons
    FROM termination_reasons
    GROUP BY run_id
)
SELECT r.run_id,
       coalesce(inv.completed, 0) / nullif(coalesce(inv.started, 0), 0) AS completion_rate,
       coalesce(inv.completed_valid, 0) / nullif(coalesce(inv.started, 0), 0) AS correct_completion_rate,
       coalesce(inv.completed_validated, 0) / nullif(coalesce(inv.completed, 0), 0) AS validation_pass_rate,
       att.attempts / nullif(att.operations, 0) AS retry_amplification,
       coalesce(ex.duplicate_side_effects, 0) AS duplicate_side_effects,
       coalesce(ex.discarded_results, 0) AS discarded_results,
       rec.median_recovery_time,
       rec.p95_recovery_time,
       rec.episode_recovery_rate,
       gp.goodput_recovery_time,
       gp.goodput_recovered,
       coalesce(inv.completed_full, 0) / nullif(coalesce(inv.started, 0), 0) AS full_scope_completion_rate,
       coalesce(inv.escalated, 0) / nullif(coalesce(inv.started, 0), 0) AS human_intervention_rate,
       coalesce(inv.terminated, 0) / nullif(coalesce(inv.started, 0), 0) AS terminated_rate,
       (coalesce(inv.started, 0) - coalesce(inv.completed, 0) - coalesce(inv.terminated, 0)) / nullif(coalesce(inv.started, 0), 0) AS unfinished_rate,
       coalesce(tok.tokens, 0) / nullif(coalesce(inv.completed, 0), 0) AS tokens_per_completion,
       coalesce(ex.compute, 0) / nullif(coalesce(inv.completed, 0), 0) AS compute_per_completion,
       coalesce(ex.wasted_compute, 0) / nullif(coalesce(ex.compute, 0), 0) AS wasted_compute_ratio,
       coalesce(tok.wasted_tokens, 0) / nullif(coalesce(tok.tokens, 0), 0) AS wasted_token_ratio,
       coalesce(corr.incident_failed_attempts, 0) / nullif(coalesce(fc.failed_attempts, 0), 0) AS correlated_failure_share,
       c.makespan,
       r.events,
       coalesce(inv.started, 0) AS started,
       coalesce(inv.completed, 0) AS completed,
       coalesce(inv.terminated, 0) AS terminated,
       coalesce(reasons.termination_reasons, MAP {}::MAP(VARCHAR, BIGINT)) AS termination_reasons,
       -- capacity
       pend.median_pending_time,
       pend.median_subagent_pending_time,
       backlog.backlog_growth,
       coalesce(peak.peak_backlog, 0) AS peak_backlog,
       -- money
       money.cost / nullif(coalesce(inv.completed, 0), 0) AS cost_per_completion,
       money.wasted_cost / nullif(money.cost, 0) AS wasted_cost_ratio
FROM runs r
JOIN run_clock c USING (run_id)
LEFT JOIN inv USING (run_id)
LEFT JOIN tok USING (run_id)
LEFT JOIN att USING (run_id)
LEFT JOIN failed_calls fc USING (run_id)
LEFT JOIN corr USING (run_id)
LEFT JOIN ex USING (run_id)
LEFT JOIN rec USING (run_id)
LEFT JOIN gp USING (run_id)
LEFT JOIN reasons USING (run_id)
LEFT JOIN pend USING (run_id)
LEFT JOIN backlog USING (run_id)
LEFT JOIN peak USING (run_id)
LEFT JOIN costs money USING (run_id);
