-- incidents: the incidents view of one run, in seconds of simulated time.
SELECT tool,
       sim_seconds(run_id, start) AS start_s,
       sim_seconds(run_id, "end") AS end_s,
       failed_attempts::BIGINT, affected_investigations::BIGINT, retries_sent::BIGINT,
       array_to_string(fault_ids, ', ') AS faults
FROM incidents
WHERE run_id = $1
ORDER BY incident;
