-- sweep: the grid point of each run of a sweep and the scenario values it set.
SELECT run_id, point, path, value
FROM sweep_params
ORDER BY point, path, run_id;
