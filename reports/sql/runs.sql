-- runs: every run of a database in the order it was stored, with its resolved configuration
-- (runs.config, JSON) and the scenario's description from it. A sweep stores its runs as
-- they finish: readRuns puts them in grid order (analysis.GridOrder) once sweep.sql is read.
-- A run imported from traces (mayday import) has no seed, configuration hash or digest of
-- a simulation (NULL): they read as 0 and ''; unknown lists, as JSON, the metrics its trace
-- cannot give ($.import.unknown), '' for a simulated run.
SELECT run_id, coalesce(scenario, '') AS scenario, CAST(coalesce(seed, 0) AS UBIGINT) AS seed,
       coalesce(config_hash, '') AS config_hash, coalesce(status, '') AS status,
       coalesce(digest, '') AS digest,
       coalesce(CASE WHEN json_valid(config) THEN json_extract_string(config, '$.description') END, '') AS description,
       coalesce(CASE WHEN json_valid(config) THEN CAST(json_extract(config, '$.import.unknown') AS VARCHAR) END, '') AS unknown,
       coalesce(config, '') AS config
FROM runs
ORDER BY rowid;
