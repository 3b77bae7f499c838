// Package analysis stores mayday's traces in DuckDB and measures them.
//
// Every file that touches DuckDB needs the build tag duckdb_arrow (duckdb-go's Arrow
// interface): build and test with `-tags duckdb_arrow`. Without the tag the package holds
// only what needs no database: run folders (folder.go), the Metrics type and metric names
// (metrics.go), a stored run's Outcome and run_id names (outcome.go) and the bootstrap
// statistics (stats.go), so reports can use them cheaply.
//
// Storage contract:
//   - Create makes a new database file with the trace tables (tables.sql, mirroring the
//     Arrow schemas of package traces) and the views; Open opens one read-only, so any
//     write fails with ErrReadOnly; OpenWrite opens one to add runs. One process may hold
//     a file open once at a time.
//   - DB.Load streams one run's records into the database while the simulation runs: the
//     simulation's goroutine redacts, digests and batches them (traces.Writer); every trace
//     table has its own lane, a goroutine with its own connection and transaction that
//     inserts the table's batches, in order, through a registered Arrow view. A bounded
//     queue in front of each lane limits memory and slows the simulation when DuckDB falls
//     behind.
//   - A run is all or nothing: once Finish closes their queues, the tables' lanes commit as
//     each drains, and then, last, the runs row's; if any lane fails, every lane rolls back
//     and rows a lane had committed are deleted again. A cancelled load context stores the
//     run as partial. Rows of a table are stored in the order the simulation emitted them,
//     and runs.digest does not depend on goroutine timing.
//   - Every connection uses the UTC time zone, so results never depend on the host's.
//
// Measurement contract:
//   - The metrics of docs/metrics.md are SQL views (views/*.sql, embedded and created with
//     the tables): metrics, incidents, recovery_episodes, tool_stats and lifecycle, on top of
//     small helper views. Each file's header states how it reads the definitions in docs/metrics.md.
//     Tests compare every metric with an independent Go computation from the raw records.
//   - This package never simulates: package pipeline runs simulations into it. What a batch
//     of runs needs of a database is here (CreateWorker, NewRunIDs, DropRun, TryCheckpoint,
//     CopyRuns), as are the sweep_params table and ListRuns, which lists a sweep's runs in
//     grid order whatever order they were stored in. Merge combines run databases and
//     refuses a run_id seen twice.
//   - BootstrapCI and BootstrapDiff give percentile bootstrap intervals across seeds from a
//     seeded source, so the same inputs always print the same interval.
//
// Export contract (docs/export.md):
//   - Export writes every run of a database as OTLP/JSON (ExportTraceServiceRequest files of
//     whole traces, ids derived from run and row ids, so the same run exports to the same
//     ids) or as zstd Parquet files of every table (a hive layout by point and seed for a
//     sweep). The folder is staged and renamed into place whole; a cancelled context leaves
//     nothing. Values are copied as stored, so redacted values stay redacted.
package analysis
