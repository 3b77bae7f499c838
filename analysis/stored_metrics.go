//go:build duckdb_arrow

package analysis

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mayday-sim/mayday/metric"
)

// The metrics view reads the row stored with each run, in the table run_metrics: a
// simulated run's is the Go row of package metric/compute, computed while it ran and written
// in the transaction of its runs row (Load.SetMetrics); every other run's (an import, a
// merged run, a run an older version stored, a run whose records the Go side could not hold
// while it ran) is computed by the same code from its stored records (derive.go) when it is
// imported or merged, or when the database is next opened. run_metrics is one of the
// derived tables: its layout is this version's (runMetricsLayout), and derived_runs names
// the runs whose rows are stored. The SQL that recomputes the row from the trace
// (testdata/oracle/11_metrics.sql) is the tests' second computation.

// storedMetrics is the table of the stored rows.
const storedMetrics = "run_metrics"

// runMetricsLayout is run_metrics' columns, "name TYPE": run_id, every metric of
// metric.All (counts BIGINT, the others DOUBLE), and the termination reasons.
func runMetricsLayout() []string {
	out := []string{"run_id VARCHAR"}
	for _, m := range metric.All {
		typ := "DOUBLE"
		if m.Unit == metric.Count {
			typ = "BIGINT"
		}
		out = append(out, m.Name+" "+typ)
	}
	return append(out, "termination_reasons MAP(VARCHAR, BIGINT)")
}

// runMetricsDDL creates run_metrics.
func runMetricsDDL() string {
	cols := runMetricsLayout()
	for i, c := range cols {
		name, typ, _ := strings.Cut(c, " ")
		cols[i] = ident(name) + " " + typ
	}
	return "CREATE TABLE " + storedMetrics + " (" + strings.Join(cols, ", ") + ")"
}

// storedColumns are run_metrics' column names.
var storedColumns = func() []string {
	var out []string
	for _, c := range runMetricsLayout() {
		name, _, _ := strings.Cut(c, " ")
		out = append(out, name)
	}
	return out
}()

// prepareStored readies the stored rows of a database opened for writing, once its views
// are defined: the derived tables (run_metrics among them) of this version's layout, no row
// of a run the database does not hold or twice for one run, and a row for every run.
func (db *DB) prepareStored(ctx context.Context) error {
	if db.readOnly {
		return nil
	}
	for _, d := range append([]string{storedMetrics}, derivedTableNames()...) {
		if _, err := db.db.ExecContext(ctx, "DELETE FROM "+ident(d)+" WHERE run_id IS NULL OR run_id NOT IN (SELECT run_id FROM runs)"); err != nil {
			return fmt.Errorf("analysis: clearing rows of %s that fit no run: %w", d, err)
		}
	}
	// A run with two metrics rows is computed again.
	if _, err := db.db.ExecContext(ctx, "DELETE FROM "+derivedRuns+" WHERE run_id IN (SELECT run_id FROM "+storedMetrics+
		" GROUP BY run_id HAVING count(*) > 1)"); err != nil {
		return fmt.Errorf("analysis: clearing runs stored twice: %w", err)
	}
	return db.deriveMissing(ctx)
}

// columnsOf lists the columns of query's result as "name TYPE".
func columnsOf(ctx context.Context, q querier, query string) ([]string, error) {
	cols, err := queryStrings(ctx, q, "SELECT column_name || ' ' || column_type FROM (DESCRIBE "+query+")")
	if err != nil {
		return nil, fmt.Errorf("analysis: the columns of %s: %w", query, err)
	}
	return cols, nil
}

// fillMetrics stores the metrics row and derived tables of every run of a database opened
// for writing that lacks them.
func (db *DB) fillMetrics(ctx context.Context) error {
	if db.readOnly {
		return nil
	}
	return db.fillDerived(ctx)
}

// ready waits for the views Create defines and stores the metrics rows runs lack, before a
// read of the database's metrics.
func (db *DB) ready(ctx context.Context) error {
	if err := db.waitViews(); err != nil {
		return err
	}
	return db.fillMetrics(ctx)
}

// storeStatement returns the statement that stores m as run_metrics' row, with its
// arguments: every column of run_metrics by name, NULL for an undefined metric.
func (db *DB) storeStatement(m Metrics) (string, []any, error) {
	cols := make([]string, 0, len(storedColumns))
	args := make([]any, 0, len(storedColumns)+1)
	for _, c := range storedColumns {
		switch {
		case c == "run_id":
			cols = append(cols, "?::VARCHAR AS run_id")
			args = append(args, m.RunID)
		case c == "termination_reasons":
			reasons := slices.Sorted(maps.Keys(m.TerminationReasons))
			counts := make([]int64, len(reasons))
			for i, r := range reasons {
				counts[i] = m.TerminationReasons[r]
			}
			cols = append(cols, "MAP(?::VARCHAR[], ?::BIGINT[]) AS termination_reasons")
			args = append(args, reasons, counts)
		case metric.Index(c) >= 0:
			cols = append(cols, "?::DOUBLE AS "+ident(c)) // cast again to the column's type
			if v, ok := m.Value(c); ok {
				args = append(args, v)
			} else {
				args = append(args, nil)
			}
		default:
			return "", nil, fmt.Errorf("analysis: %s has a column %s that is not a metric", storedMetrics, c)
		}
	}
	return "INSERT INTO " + storedMetrics + " BY NAME SELECT " + strings.Join(cols, ", "), args, nil
}
