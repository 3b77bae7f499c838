-- tables: the tables of the database, to tell a mayday database (it has runs) and a sweep
-- (it has sweep_params) from other files.
SELECT table_name FROM duckdb_tables() ORDER BY table_name;
