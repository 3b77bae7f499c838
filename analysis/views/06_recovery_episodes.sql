-- recovery_episodes: one row per logical tool operation that failed at least once (design
-- section 5: "from the first failure of an operation to its success, or to the
-- investigation's end"; seconds).
--
-- start: the end of the operation's first failed attempt (see attempts: status error or
-- timeout), i.e. when the failure became known.
-- end, outcome:
--   'recovered'  the end of the first span of the operation, at or after start, that
--                delivered its result: an execute_tool attempt with status 'ok' (a keyed
--                tool's answer from its record included), or an inspection with status 'ok'
--                whose lookup found the operation completed (attrs['lookup'] = 'completed';
--                'running' and 'not_found' deliver nothing);
--   'ended'      otherwise the end of the investigation that owns the operation;
--   'in_flight'  otherwise (the investigation was still open at the horizon) the run's end
--                (run_clock.end_at). These censored episodes are kept: dropping them would
--                hide the longest recoveries.
-- Operations of subagents count like those of roots.
CREATE OR REPLACE VIEW recovery_episodes AS
WITH first_failure AS (
    SELECT run_id, op_key,
           any_value(tool) AS tool,
           any_value(investigation_id) AS investigation_id,
           any_value(root_id) AS root_id,
           min("end") AS failed_at,
           count(*) AS failed_attempts
    FROM attempts
    WHERE failed
    GROUP BY run_id, op_key
),
recovered AS (
    SELECT f.run_id, f.op_key, min(s."end") AS recovered_at
    FROM first_failure f
    JOIN spans s
      ON s.run_id = f.run_id AND s.op_key = f.op_key
     AND s.status = 'ok'
     AND (s.operation = 'execute_tool' OR (s.operation = 'inspect' AND s.attrs['lookup'] = 'completed'))
     AND s."end" >= f.failed_at
    GROUP BY f.run_id, f.op_key
),
bounded AS (
    SELECT f.run_id, f.root_id, f.investigation_id, f.tool, f.op_key, f.failed_attempts,
           f.failed_at AS start,
           coalesce(r.recovered_at, i.ended_at, c.end_at) AS "end",
           CASE
               WHEN r.recovered_at IS NOT NULL THEN 'recovered'
               WHEN i.ended_at IS NOT NULL THEN 'ended'
               ELSE 'in_flight'
           END AS outcome
    FROM first_failure f
    JOIN run_clock c ON c.run_id = f.run_id
    LEFT JOIN recovered r ON r.run_id = f.run_id AND r.op_key = f.op_key
    LEFT JOIN investigations i ON i.run_id = f.run_id AND i.investigation_id = f.investigation_id
)
SELECT *, (epoch_us("end") - epoch_us(start)) / 1e6 AS seconds
FROM bounded;
