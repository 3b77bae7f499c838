-- has_sweep: whether the database holds a sweep (mayday sweep writes sweep_params).
SELECT count(*) > 0 FROM duckdb_tables() WHERE table_name = 'sweep_params';
