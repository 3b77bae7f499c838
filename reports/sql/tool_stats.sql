-- tool_stats: the tool_stats view of one run.
SELECT tool, operations::BIGINT, attempts::BIGINT, amplification, errors::BIGINT,
       timeouts::BIGINT, duplicate_side_effects::BIGINT, discarded_results::BIGINT,
       incidents::BIGINT, median_recovery_time
FROM tool_stats
WHERE run_id = $1
ORDER BY tool;
