-- faults: the injected fault windows on tools ($2: the kinds that are such windows, comma
-- separated, from sim.ToolWindowKinds), in seconds of simulated time.
SELECT fault_id, kind, coalesce(tool, '') AS tool,
       (epoch_us(start) - 1767225600000000) / 1e6 AS start_s,
       (epoch_us("end") - 1767225600000000) / 1e6 AS end_s
FROM faults
WHERE run_id = $1 AND list_contains(string_split($2, ','), kind)
ORDER BY start, fault_id;
