-- recovery_episodes: one row per logical tool operation that failed at least once (design
-- section 5: "from the first failure of an operation to its success, or to the
-- investigation's end"; seconds).
--
-- start: the end of the operation's first failed attempt (see attempts: status error or
-- timeout), i.e. when the failure became known.
-- A delivery is a span that brought an operation's result to its investigation: an
-- execute_tool attempt with status 'ok' (a keyed tool's answer from its record included),
-- or an inspection with status 'ok' whose lookup found the operation completed
-- (attrs['lookup'] = 'completed'; 'running' and 'not_found' deliver nothing).
-- end, outcome: the first of these that applies:
--   'recovered'  the end of the operation's first delivery at or after start;
--   'revised'    the end of the first delivery at or after start of a later revision of
--                the same step (same investigation and step, higher revision), when that
--                comes first. After retries run out, an approved escalation goes on with
--                the step as a new logical operation (design section 4): the step's
--                success is the failed operation's recovery, not the investigation's end;
--   'ended'      the end of the investigation that owns the operation;
--   'in_flight'  the run's end (run_clock.end_at), for an investigation still open at the
--                horizon. These censored episodes are kept: dropping them would hide the
--                longest recoveries.
-- Operations of subagents count like those of roots.
CREATE OR REPLACE VIEW recovery_episodes AS
WITH first_failure AS (
    SELECT run_id, op_key,
           any_value(tool) AS tool,
           any_value(investigation_id) AS investigation_id,
           any_value(root_id) AS root_id,
           min("end") AS failed_at,
           count(*) AS failed_attempts,
           split_part(op_key, '/', 1) || '/' || split_part(op_key, '/', 2) AS step_key,
           CAST(split_part(op_key, '/', 3) AS INTEGER) AS revision
    FROM attempts
    WHERE failed
    GROUP BY run_id, op_key
),
deliveries AS (
    SELECT run_id, "end",
           split_part(op_key, '/', 1) || '/' || split_part(op_key, '/', 2) AS step_key,
           CAST(split_part(op_key, '/', 3) AS INTEGER) AS revision
    FROM spans
    WHERE op_key IS NOT NULL AND status = 'ok'
      AND (operation = 'execute_tool' OR (operation = 'inspect' AND attrs['lookup'] = 'completed'))
),
recovered AS (
    SELECT f.run_id, f.op_key,
           min(d."end") FILTER (WHERE d.revision = f.revision) AS own_at,
           min(d."end") FILTER (WHERE d.revision > f.revision) AS revision_at
    FROM first_failure f
    JOIN deliveries d
      ON d.run_id = f.run_id AND d.step_key = f.step_key
     AND d.revision >= f.revision AND d."end" >= f.failed_at
    GROUP BY f.run_id, f.op_key
),
bounded AS (
    SELECT f.run_id, f.root_id, f.investigation_id, f.tool, f.op_key, f.failed_attempts,
           f.failed_at AS start,
           CASE
               WHEN r.own_at IS NOT NULL AND (r.revision_at IS NULL OR r.own_at <= r.revision_at) THEN r.own_at
               WHEN r.revision_at IS NOT NULL THEN r.revision_at
               WHEN i.ended_at IS NOT NULL THEN i.ended_at
               ELSE c.end_at
           END AS "end",
           CASE
               WHEN r.own_at IS NOT NULL AND (r.revision_at IS NULL OR r.own_at <= r.revision_at) THEN 'recovered'
               WHEN r.revision_at IS NOT NULL THEN 'revised'
               WHEN i.ended_at IS NOT NULL THEN 'ended'
               ELSE 'in_flight'
           END AS outcome
    FROM first_failure f
    JOIN run_clock c ON c.run_id = f.run_id
    LEFT JOIN recovered r ON r.run_id = f.run_id AND r.op_key = f.op_key
    LEFT JOIN investigations i ON i.run_id = f.run_id AND i.investigation_id = f.investigation_id
)
SELECT run_id, root_id, investigation_id, tool, op_key, failed_attempts, start, "end", outcome,
       (epoch_us("end") - epoch_us(start)) / 1e6 AS seconds
FROM bounded;
