-- faults: the injected fault windows (design section 3: outage, brownout and hang are the
-- kinds with a start and a duration), in seconds of simulated time.
SELECT fault_id, kind, coalesce(tool, '') AS tool,
       (epoch_us(start) - 1767225600000000) / 1e6 AS start_s,
       (epoch_us("end") - 1767225600000000) / 1e6 AS end_s
FROM faults
WHERE run_id = $1 AND kind IN ('outage', 'brownout', 'hang')
ORDER BY start, fault_id;
