-- sweep: the grid point of each run of a sweep and the scenario values it set, in the order
-- they were stored (the sweep's axis order).
SELECT run_id, point, path, value
FROM sweep_params
ORDER BY rowid;
