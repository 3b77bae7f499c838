// Package compute computes the metrics row of a simulated run (every column of the
// `metrics` view, docs/metrics.md) in Go, from the run's records as the simulator emits
// them, without a database: the fast path of `mayday run --no-trace`.
//
// The SQL views in analysis/views/*.sql stay the one definition of every metric; this
// package follows them clause by clause (same NULLs, same rounding of instants to the
// microsecond of a TIMESTAMP, same order of comparisons), and a test in package analysis
// holds its row equal to `SELECT * FROM metrics` on every embedded example and on
// generated scenarios. A change to a view must be made here too, or that test fails.
//
// Sink is a record.Sink. It keeps what the metrics need rather than the records: one
// summary per investigation, per operation and per model turn, counters per tool and
// minute, the signs of trouble, the keyed spans of investigations (to place a park) and the
// valid results of steps; Finish computes the row. It does not depend on the order in which
// the tables arrive.
package compute
