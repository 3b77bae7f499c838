-- incidents: the incidents view of one run, in seconds of simulated time.
SELECT tool,
       (epoch_us(start) - 1767225600000000) / 1e6 AS start_s,
       (epoch_us("end") - 1767225600000000) / 1e6 AS end_s,
       failed_attempts::BIGINT, affected_investigations::BIGINT, retries_sent::BIGINT,
       array_to_string(fault_ids, ', ') AS faults
FROM incidents
WHERE run_id = $1
ORDER BY incident;
