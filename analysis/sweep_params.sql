-- sweep_params: which grid point each run of a sweep ran. A point sets one value per axis of
-- the grid (a path into the scenario file, e.g. recovery.retry.max_attempts, and the value as
-- YAML text, e.g. 5), so a point of a two-axis grid has two rows per run. Join on run_id:
--   SELECT p.value AS max_attempts, m.completion_rate
--   FROM metrics m JOIN sweep_params p USING (run_id)
--   WHERE p.path = 'recovery.retry.max_attempts';
CREATE TABLE IF NOT EXISTS sweep_params (
    run_id VARCHAR NOT NULL,
    point  INTEGER NOT NULL,
    path   VARCHAR NOT NULL,
    value  VARCHAR NOT NULL
);
