-- faults: the injected fault windows on calls (to a tool, every tool or the model), in
-- seconds of simulated time.
SELECT fault_id, kind, coalesce(tool, '') AS tool,
       sim_seconds(run_id, window_start) AS start_s,
       sim_seconds(run_id, window_end) AS end_s
FROM faults
WHERE run_id = $1 AND window_start IS NOT NULL AND hits = 'calls'
ORDER BY window_start, fault_id;
