-- recovery_episodes: one row per disrupted step of an investigation (docs/metrics.md,
-- median_recovery_time): from its first sign of trouble (see disruptions: a failed or
-- timed-out attempt from its send, parking on an open breaker or an empty retry budget,
-- an invalid result, a block, a worker crash) until a valid result of the step is
-- delivered, or the investigation ends. Retries and revisions of a step (its op_keys
-- '<investigation>/<step>/<revision>') belong to one episode: the operation is the step's
-- work, and a revision is how an invalid result is recovered. Human review waits fall
-- inside the episode and count. Signs without an operation (disruptions.op_key NULL) are
-- not episodes.
--
-- The first sign is the earliest; among signs at the same instant, that of the earliest
-- revision (an invalid result comes before its revision's trouble), then by kind in the
-- order failed, timed_out, blocked, invalid, crashed, parked, throttled (a refused call
-- before the park that answers it).
-- start: the first sign's at; detected_at: its known_at (the end of a failed attempt, when
-- its failure was known; the sign itself otherwise).
-- end, outcome:
--   'recovered'  the end of the step's first validate span with status 'ok' at or after
--                start (any revision of the step): a valid result was delivered;
--   'ended'      the end of the investigation that owns the step (ended_as: its
--                final_state, e.g. completed after the step was dropped, or terminated);
--   'in_flight'  the run's end (run_clock.end_at), for an investigation still open at the
--                horizon. These censored episodes are kept: dropping them would hide the
--                longest recoveries.
-- seconds = end - start; detection_seconds = detected_at - start; repair_seconds = end -
-- detected_at. signs: how many signs the episode saw; first_kind: the first sign's kind.
-- tool: the first sign's tool. Steps of subagents count like those of roots.
CREATE OR REPLACE VIEW recovery_episodes AS
WITH ordered AS (
    SELECT *,
           split_part(op_key, '/', 3)::INTEGER AS revision,
           list_position(['failed', 'timed_out', 'blocked', 'invalid', 'crashed', 'parked', 'throttled'], kind) AS rank
    FROM disruptions
    WHERE op_key IS NOT NULL
),
-- The first sign of each step, by one window over the step's signs in that order rather
-- than arg_min over a struct key: an aggregate whose state holds a struct or a string is
-- kept in memory whole, a group per disrupted step, while a window's partitions spill to
-- disk. Each column but tool is the first non-NULL value in that order (of these only
-- tool can be NULL: a sign of an operation none of whose spans names a tool); tool is the
-- first sign's, NULL included.
firsts AS (
    SELECT run_id, step_key, root_id, investigation_id, op_key, tool, first_kind, start,
           detected_at, signs, failed_attempts
    FROM (
        SELECT run_id, step_key, "at" AS start,
               row_number() OVER w AS n,
               first_value(root_id IGNORE NULLS) OVER steps AS root_id,
               first_value(investigation_id IGNORE NULLS) OVER steps AS investigation_id,
               first_value(op_key IGNORE NULLS) OVER steps AS op_key,
               first_value(tool) OVER steps AS tool,
               first_value(kind IGNORE NULLS) OVER steps AS first_kind,
               first_value(known_at IGNORE NULLS) OVER steps AS detected_at,
               count(*) OVER steps AS signs,
               count(*) FILTER (WHERE kind IN ('failed', 'timed_out')) OVER steps AS failed_attempts
        FROM ordered
        WINDOW w AS (PARTITION BY run_id, step_key ORDER BY "at", revision, rank, known_at, tool NULLS LAST),
               steps AS (PARTITION BY run_id, step_key ORDER BY "at", revision, rank, known_at, tool NULLS LAST
                         ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
    )
    WHERE n = 1
),
valid AS (
    SELECT run_id,
           split_part(op_key, '/', 1) || '/' || split_part(op_key, '/', 2) AS step_key,
           "end"
    FROM spans
    WHERE operation = 'validate' AND status = 'ok' AND op_key IS NOT NULL
),
recovered AS (
    SELECT f.run_id, f.step_key, min(v."end") AS valid_at
    FROM firsts f
    JOIN valid v ON v.run_id = f.run_id AND v.step_key = f.step_key AND v."end" >= f.start
    GROUP BY f.run_id, f.step_key
),
bounded AS (
    SELECT f.*,
           CASE WHEN r.valid_at IS NOT NULL THEN r.valid_at
                WHEN i.ended_at IS NOT NULL THEN i.ended_at
                ELSE c.end_at END AS "end",
           CASE WHEN r.valid_at IS NOT NULL THEN 'recovered'
                WHEN i.ended_at IS NOT NULL THEN 'ended'
                ELSE 'in_flight' END AS outcome,
           i.final_state AS ended_as
    FROM firsts f
    JOIN run_clock c ON c.run_id = f.run_id
    LEFT JOIN recovered r ON r.run_id = f.run_id AND r.step_key = f.step_key
    LEFT JOIN investigations i ON i.run_id = f.run_id AND i.investigation_id = f.investigation_id
)
SELECT run_id, root_id, investigation_id, tool, op_key, step_key, first_kind, signs,
       failed_attempts, start, detected_at, "end", outcome, ended_as,
       (epoch_us("end") - epoch_us(start)) / 1e6 AS seconds,
       (epoch_us(detected_at) - epoch_us(start)) / 1e6 AS detection_seconds,
       (epoch_us("end") - epoch_us(detected_at)) / 1e6 AS repair_seconds
FROM bounded;
