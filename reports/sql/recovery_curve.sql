-- recovery_curve: the share of one run's recovery episodes recovered by each episode length
-- (recovery_curve view: never-recovered episodes never count, in-flight ones are censored).
SELECT seconds, recovered_share
FROM recovery_curve
WHERE run_id = $1
ORDER BY seconds;
