-- failures: failed attempts per tool and minute (tool_minutes view); minutes without
-- traffic are absent and count as zero. Tools that never failed are dropped by the reader
-- (one pass over tool_minutes instead of a second one to find them).
SELECT tool, minute::BIGINT, failed_attempts::BIGINT
FROM tool_minutes
WHERE run_id = $1
ORDER BY tool, minute;
