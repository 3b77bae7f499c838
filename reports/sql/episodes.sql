-- episodes: every recovery episode of one run (recovery_episodes view), longest first; ties
-- in a fixed order so the "slowest" table is the same on every read.
SELECT investigation_id, root_id, tool, CAST(op_key AS VARCHAR) AS op_key,
       sim_seconds(run_id, start) AS start_s,
       seconds, outcome, failed_attempts::BIGINT
FROM recovery_episodes
WHERE run_id = $1
ORDER BY seconds DESC, investigation_id, CAST(op_key AS VARCHAR);
