-- failures: failed attempts per tool and minute (tool_minutes view), for the tools with at
-- least one; minutes without traffic are absent and count as zero.
SELECT tool, minute::BIGINT, failed_attempts::BIGINT
FROM tool_minutes
WHERE run_id = $1
  AND tool IN (SELECT tool FROM tool_minutes WHERE run_id = $1 GROUP BY tool HAVING sum(failed_attempts) > 0)
ORDER BY tool, minute;
