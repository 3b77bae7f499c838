// Package reports turns run databases into what people and CI jobs read: the summary a run
// prints and stores (summary.json), the HTML and Markdown reports of `mayday report`, and the
// outputs of check and compare.
//
// A report (Load, New, Report.Write) promises:
//   - every figure comes from the run databases, opened read-only, through the views of
//     package analysis (metrics, lifecycle, tool_minutes, incidents, recovery_episodes,
//     tool_stats) and the trace tables; the queries live in sql/*.sql;
//   - the metrics table shows the metrics view's values unchanged (formatted with Format;
//     the exact value is in each cell's data-value attribute), or with several seeds their
//     mean and the bootstrap interval Summarize computes;
//   - report.html is self-contained: charts inline as SVG, styles inline, no script, font,
//     image or stylesheet to fetch; report.md links PNG charts written beside it;
//   - the same runs give the same files, byte for byte.
//
// The drawing side (Run and the types beside it, Charts, Report) needs no database, so it is
// built without the duckdb_arrow tag; loading (Load) and the summaries need it.
package reports
