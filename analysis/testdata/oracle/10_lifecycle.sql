-- lifecycle: per run, minute (0 .. run_clock.minutes-1) and agent ('root' or 'subagent'),
-- how many investigations of that kind are in each lifecycle state at the end of that
-- minute (`at`), from the transitions, for charts. Every minute has both rows.
--
-- A root counts as pending from its arrival (arrived_at); each transition then moves it
-- from from_state to to_state. A transition without a from_state leaves the initial state,
-- pending. Transitions that change no state (refusals and audit notes, from = to; an
-- arrival record NULL -> pending) move nothing. Summing moves, not ordering them, keeps the
-- counts independent of the order of transitions that share a timestamp.
CREATE OR REPLACE VIEW lifecycle AS
WITH kinds AS (
    SELECT run_id, investigation_id, arrived_at,
           CASE WHEN coalesce(parent_id, 0) = 0 THEN 'root' ELSE 'subagent' END AS agent
    FROM investigations
),
kind_transitions AS (
    SELECT t.run_id, k.agent, t."at", coalesce(nullif(t.from_state, ''), 'pending') AS from_state, t.to_state
    FROM transitions t
    JOIN kinds k ON k.run_id = t.run_id AND k.investigation_id = t.investigation_id
),
moves AS (
    SELECT run_id, agent, arrived_at AS "at", 'pending' AS state, 1 AS delta FROM kinds
    UNION ALL
    SELECT run_id, agent, "at", from_state, -1 FROM kind_transitions WHERE from_state <> to_state
    UNION ALL
    SELECT run_id, agent, "at", to_state, 1 FROM kind_transitions WHERE from_state <> to_state
),
per_minute AS (
    SELECT run_id, agent,
           sim_minute(run_id, "at") AS minute,
           sum(delta) FILTER (WHERE state = 'pending') AS pending,
           sum(delta) FILTER (WHERE state = 'running') AS running,
           sum(delta) FILTER (WHERE state = 'waiting') AS waiting,
           sum(delta) FILTER (WHERE state = 'recovering') AS recovering,
           sum(delta) FILTER (WHERE state = 'awaiting_human') AS awaiting_human,
           sum(delta) FILTER (WHERE state = 'completed') AS completed,
           sum(delta) FILTER (WHERE state = 'terminated') AS terminated
    FROM moves
    GROUP BY ALL
),
grid AS (
    SELECT run_id, a.agent, unnest(range(minutes)) AS minute
    FROM run_clock CROSS JOIN (VALUES ('root'), ('subagent')) a(agent)
)
SELECT g.run_id, g.minute, g.agent,
       sim_minute_start(g.run_id, g.minute + 1) AS "at",
       sum(coalesce(p.pending, 0)) OVER w AS pending,
       sum(coalesce(p.running, 0)) OVER w AS running,
       sum(coalesce(p.waiting, 0)) OVER w AS waiting,
       sum(coalesce(p.recovering, 0)) OVER w AS recovering,
       sum(coalesce(p.awaiting_human, 0)) OVER w AS awaiting_human,
       sum(coalesce(p.completed, 0)) OVER w AS completed,
       sum(coalesce(p.terminated, 0)) OVER w AS terminated
FROM grid g
LEFT JOIN per_minute p USING (run_id, agent, minute)
WINDOW w AS (PARTITION BY g.run_id, g.agent ORDER BY g.minute ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);
