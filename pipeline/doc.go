// Package pipeline runs simulations into databases: the one path from a scenario and a seed
// to a stored, measured run, shared by every command that simulates (`mayday run`, `check`,
// `sweep`).
//
// Every file but this one and shard.go needs the build tag duckdb_arrow, as package
// analysis does.
//
//   - Execute runs one Spec (scenario, seed, run_id) into an analysis.DB: the simulator's
//     records stream through the Arrow writer into DuckDB while it runs, then the runs row
//     and the metrics are read back into an analysis.Outcome. Serial runs specs one after
//     another into one database (`mayday run`).
//   - Batch runs a list of specs in parallel on a bounded number of workers, either straight
//     into one database (a sweep; the runs' metrics are read in one query at the end) or
//     each run into a temporary database of its own, whose runs are copied where they belong
//     afterwards (check's run folders). Progress comes through each spec's
//     callbacks and Batch.Done; a cancelled context stops dispatching and cuts the runs under
//     way short (stored as partial). BatchResult lists outcomes in spec order, so nothing a
//     command prints or stores depends on which worker finished first.
//   - SweepJobs expands a sweep's grid points (scenarios.Expand) × seeds into specs and
//     sweep_params rows; Shard, ParseShard and ResolveShard cut a grid into slices for
//     several machines (`--shard I/N`, or the batch engine's environment).
//   - WatchMemory is the memory watchdog of a command's runs (`--memory-limit`): checked at
//     every progress callback it wraps, it cancels the runs' context before the process
//     runs out of memory, so they stop as consistent partial runs, as on Ctrl-C.
//
// It imports analysis for storage and sim to simulate; analysis itself never simulates.
package pipeline
