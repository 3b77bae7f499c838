-- sweep: the grid point of each run of a sweep and the scenario values it set; a run's rows
-- are stored together in the sweep's axis order, which rowid keeps.
SELECT run_id, point, path, value
FROM sweep_params
ORDER BY rowid;
