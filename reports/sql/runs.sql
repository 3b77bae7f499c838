-- runs: every run of a database in the order it was stored, with its resolved configuration
-- (runs.config, JSON) and the scenario's description from it. A sweep stores its runs as
-- they finish: readRuns puts them in grid order (analysis.GridOrder) once sweep.sql is read.
SELECT run_id, scenario, seed, config_hash, status, coalesce(digest, '') AS digest,
       coalesce(json_extract_string(config, '$.description'), '') AS description,
       coalesce(config, '') AS config
FROM runs
ORDER BY rowid;
