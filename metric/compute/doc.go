// Package compute computes the metrics row of a simulated run (every column of the
// `metrics` view, docs/metrics.md) in Go, from the run's records as the simulator emits
// them, without a database: traced runs compute their metrics with it while they load, and
// `mayday run --no-trace` (and check, tune and hunt) without storing anything.
//
// The SQL views in analysis/views/*.sql stay the one definition of every metric; this
// package follows them clause by clause (same NULLs, same rounding of instants to the
// microsecond of a TIMESTAMP, same order of comparisons), and a test in package analysis
// holds its row equal to `SELECT * FROM metrics` on every embedded example and on
// generated scenarios. A change to a view must be made here too, or that test fails.
//
// Sink is a record.Sink. It keeps what the metrics need rather than the records, and only
// while they can still change: an investigation's operations, model turns, keyed spans,
// signs of trouble and valid results are kept until its row arrives, which the simulator
// writes after every span and transition of the investigation; the row settles it (its
// wasted turns, the places of its parks, its recovery episodes, its waste, its pending
// time) and the entry is let go. What stays for the whole run is small: a state word per
// investigation, a few numbers per root and per recovery episode, counters per tool and
// minute. So its memory follows the investigations in flight, not the run's size
// (research-fleet at 100,000 investigations: a 50 MB heap, against 434 MB when it kept
// every operation to the end). Executions, which a tool may finish after its
// investigation ended, are added to the settled totals. A span or transition after its
// investigation's row makes Finish fail with ErrOrder; a traced run then reads the
// metrics view instead. So does a traced run whose open investigations hold more records
// than Options.MaxHeld (an overloaded fleet, all of whose work stays open): the Sink lets
// go of them and Finish fails with ErrTooLarge.
package compute
