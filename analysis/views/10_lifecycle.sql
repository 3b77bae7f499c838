-- lifecycle: per run and minute (0 .. run_clock.minutes-1), how many root investigations
-- are in each lifecycle state at the end of that minute (`at`), from the transitions
-- (design section 4), for charts.
--
-- A root counts as pending from its arrival (arrived_at) until its first transition leaves
-- pending; each later transition moves it from from_state to to_state. Transitions that
-- change no state (from_state = to_state: refusals, audit records) and transitions without
-- a from_state (an arrival record, already counted by arrived_at) move nothing. Summing
-- moves, not ordering them, keeps the counts independent of the order of transitions that
-- share a timestamp. Subagents are not counted (root investigations only).
CREATE OR REPLACE VIEW lifecycle AS
WITH moves AS (
    SELECT run_id, arrived_at AS "at", 'pending' AS state, 1 AS delta FROM roots
    UNION ALL
    SELECT t.run_id, t."at", t.from_state, -1
    FROM transitions t SEMI JOIN roots r ON r.run_id = t.run_id AND r.investigation_id = t.investigation_id
    WHERE coalesce(t.from_state, '') <> '' AND t.from_state <> t.to_state
    UNION ALL
    SELECT t.run_id, t."at", t.to_state, 1
    FROM transitions t SEMI JOIN roots r ON r.run_id = t.run_id AND r.investigation_id = t.investigation_id
    WHERE coalesce(t.from_state, '') <> '' AND t.from_state <> t.to_state
),
per_minute AS (
    SELECT run_id,
           (epoch_us("at") - 1767225600000000) // 60000000 AS minute,
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
    SELECT run_id, unnest(range(minutes)) AS minute FROM run_clock
)
SELECT g.run_id, g.minute,
       TIMESTAMP '2026-01-01 00:00:00' + to_microseconds((g.minute + 1) * 60000000) AS "at",
       sum(coalesce(p.pending, 0)) OVER w AS pending,
       sum(coalesce(p.running, 0)) OVER w AS running,
       sum(coalesce(p.waiting, 0)) OVER w AS waiting,
       sum(coalesce(p.recovering, 0)) OVER w AS recovering,
       sum(coalesce(p.awaiting_human, 0)) OVER w AS awaiting_human,
       sum(coalesce(p.completed, 0)) OVER w AS completed,
       sum(coalesce(p.terminated, 0)) OVER w AS terminated
FROM grid g
LEFT JOIN per_minute p USING (run_id, minute)
WINDOW w AS (PARTITION BY g.run_id ORDER BY g.minute ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);
