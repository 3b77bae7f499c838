// Package metric is the one table of mayday's metrics: for each, its name (the column of
// the `metrics` view and the key of `expect`, `tolerances`, summaries and comparisons), its
// unit, which direction is better, the range of values it can take, how text prints it, and
// a line of help. Scenarios (expect validation), analysis (the view's columns), reports
// (summary, check, compare, sweep, the HTML report) and the commands all read this table,
// so adding a metric is the SQL of the view, one entry in All, and docs/metrics.md.
//
// The package is a leaf: it imports only the standard library, so scenarios can use it
// without pulling in DuckDB.
package metric
