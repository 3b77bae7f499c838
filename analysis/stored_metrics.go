//go:build duckdb_arrow

package analysis

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mayday-sim/mayday/metric"
)

// The metrics view reads rows stored with each run, in the table run_metrics, instead of
// recomputing them from the trace on every read: recomputing groups every row of the trace
// (half a second per million rows), reading a stored row takes milliseconds whatever the
// run's size. metrics_recomputed, the view that recomputes them from the trace tables, stays
// the definition: run_metrics has its columns, a simulated run's row comes from package
// metric/compute (tests hold the two equal on every example and on generated scenarios),
// and every other run's row is metrics_recomputed's own.
//
// A run's row is written in the transaction that writes its runs row (Load.SetMetrics), so
// a run is stored with its metrics or not at all. A run stored without one (an import, a
// run whose records the Go side could not hold, a merged run, a database an older version
// wrote) gets metrics_recomputed's row the next time the database is opened for writing or
// its metrics are read through Metrics or Query (fillMetrics). A database opened read-only
// whose stored rows are missing, duplicated or of another layout than this version's reads
// metrics_recomputed in the metrics view instead.

const (
	// storedMetrics is the table of the stored rows.
	storedMetrics = "run_metrics"
	// recomputedView is the view that recomputes the metrics from the trace tables.
	recomputedView = "metrics_recomputed"
)

// prepareStored readies run_metrics after metrics_recomputed is defined and reports whether
// the metrics view may read it. A database opened for writing gets the table (created, or
// created again when an older version left another layout) and a row for every run that
// lacks one; a database opened read-only only has its table checked.
func (db *DB) prepareStored(ctx context.Context) (bool, error) {
	if !db.readOnly {
		// metrics_recomputed reads the derived tables: they come first.
		if err := db.prepareDerived(ctx); err != nil {
			return false, err
		}
	}
	if db.recompute {
		db.storedCols = nil
		return false, nil
	}
	if db.readOnly {
		return db.storedReadable(ctx)
	}
	want, err := columnsOf(ctx, db.db, "SELECT * FROM "+recomputedView)
	if err != nil {
		return false, err
	}
	has, err := db.hasStoredTable(ctx)
	if err != nil {
		return false, err
	}
	var got []string
	if has {
		if got, err = columnsOf(ctx, db.db, "SELECT * FROM "+storedMetrics); err != nil {
			return false, err
		}
	}
	same := has && slices.Equal(got, want)
	if has && !same {
		if _, err := db.db.ExecContext(ctx, "DROP TABLE "+storedMetrics); err != nil {
			return false, fmt.Errorf("analysis: replacing %s of another layout: %w", storedMetrics, err)
		}
	}
	if !same {
		if _, err := db.db.ExecContext(ctx, "CREATE TABLE "+storedMetrics+" AS SELECT * FROM "+recomputedView+" LIMIT 0"); err != nil {
			return false, fmt.Errorf("analysis: creating %s: %w", storedMetrics, err)
		}
	} else if _, err := db.db.ExecContext(ctx, "DELETE FROM "+storedMetrics+
		" WHERE run_id IS NULL OR run_id NOT IN (SELECT run_id FROM runs)"+
		" OR run_id IN (SELECT run_id FROM "+storedMetrics+" GROUP BY run_id HAVING count(*) > 1)"); err != nil {
		// A row of no run, or a run with two rows: fillMetrics stores the run's again.
		return false, fmt.Errorf("analysis: clearing rows of %s that fit no run: %w", storedMetrics, err)
	}
	db.storedCols = make([]string, len(want))
	for i, c := range want {
		db.storedCols[i], _, _ = strings.Cut(c, " ")
	}
	return true, db.fillMetrics(ctx)
}

// storedReadable reports whether the metrics view of a database opened read-only may read
// the file's run_metrics: a table whose columns are run_id (text), termination_reasons (a
// map of text to counts) and the metrics of MetricNames (numbers): the columns of
// metrics_recomputed, read from the catalog without binding that view; with exactly one
// row per run.
func (db *DB) storedReadable(ctx context.Context) (bool, error) {
	rows, err := db.db.QueryContext(ctx, "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = "+
		literal(srcAlias)+" AND schema_name = 'main' AND table_name = "+literal(storedMetrics)+" ORDER BY column_name")
	if err != nil {
		return false, fmt.Errorf("analysis: reading the columns of %s: %w", storedMetrics, err)
	}
	defer rows.Close()
	var got []string
	fits := true
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return false, fmt.Errorf("analysis: reading the columns of %s: %w", storedMetrics, err)
		}
		got = append(got, name)
		switch name {
		case "run_id":
			fits = fits && typ == "VARCHAR"
		case "termination_reasons":
			fits = fits && typ == "MAP(VARCHAR, BIGINT)"
		default:
			fits = fits && (slices.Contains(numberTypes, typ) || strings.HasPrefix(typ, "DECIMAL("))
		}
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("analysis: reading the columns of %s: %w", storedMetrics, err)
	}
	want := append([]string{"run_id", "termination_reasons"}, MetricNames...)
	slices.Sort(want)
	if !fits || !slices.Equal(got, want) {
		return false, nil
	}
	return db.storedComplete(ctx)
}

// numberTypes are the DuckDB types a stored metric may have besides DECIMAL(p, s).
var numberTypes = []string{"DOUBLE", "FLOAT", "BIGINT", "INTEGER", "HUGEINT", "SMALLINT", "TINYINT", "UBIGINT", "UINTEGER"}

// hasStoredTable reports whether a database opened for writing holds a base table
// run_metrics.
func (db *DB) hasStoredTable(ctx context.Context) (bool, error) {
	var n int
	err := db.db.QueryRowContext(ctx, "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()"+
		" AND schema_name = 'main' AND table_name = "+literal(storedMetrics)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("analysis: looking for %s: %w", storedMetrics, err)
	}
	return n > 0, nil
}

// storedComplete reports whether run_metrics holds exactly one row for each run and none
// for a run the database does not hold.
func (db *DB) storedComplete(ctx context.Context) (bool, error) {
	var ok bool
	err := db.db.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM `+storedMetrics+`) = (SELECT count(*) FROM runs)
		AND (SELECT count(DISTINCT run_id) FROM `+storedMetrics+`) = (SELECT count(*) FROM runs)
		AND NOT EXISTS (SELECT 1 FROM runs r WHERE NOT EXISTS (SELECT 1 FROM `+storedMetrics+` m WHERE m.run_id = r.run_id))`).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("analysis: reading %s: %w", storedMetrics, err)
	}
	return ok, nil
}

// columnsOf lists the columns of query's result as "name TYPE".
func columnsOf(ctx context.Context, q querier, query string) ([]string, error) {
	cols, err := queryStrings(ctx, q, "SELECT column_name || ' ' || column_type FROM (DESCRIBE "+query+")")
	if err != nil {
		return nil, fmt.Errorf("analysis: the columns of %s: %w", query, err)
	}
	return cols, nil
}

// fillMetrics stores metrics_recomputed's row for every run of a database opened for writing
// that has none. It does nothing when every run has its row, or when the metrics view
// recomputes (a read-only database, a test's).
func (db *DB) fillMetrics(ctx context.Context) error {
	if db.readOnly {
		return nil
	}
	if err := db.fillDerived(ctx); err != nil {
		return err
	}
	if db.storedCols == nil {
		return nil
	}
	db.fillMu.Lock()
	defer db.fillMu.Unlock()
	missing := "SELECT run_id FROM runs r WHERE NOT EXISTS (SELECT 1 FROM " + storedMetrics + " m WHERE m.run_id = r.run_id)"
	var n int
	if err := db.db.QueryRowContext(ctx, "SELECT count(*) FROM ("+missing+")").Scan(&n); err != nil {
		return fmt.Errorf("analysis: looking for runs without stored metrics: %w", err)
	}
	if n == 0 {
		return nil
	}
	if _, err := db.db.ExecContext(ctx, "INSERT INTO "+storedMetrics+" SELECT * FROM "+recomputedView+
		" WHERE run_id IN ("+missing+")"); err != nil {
		return fmt.Errorf("analysis: storing the metrics of %d runs: %w", n, memoryHint(err))
	}
	return nil
}

// ready waits for the views Create defines and stores the metrics rows runs lack, before a
// read of the database's metrics.
func (db *DB) ready(ctx context.Context) error {
	if err := db.waitViews(); err != nil {
		return err
	}
	return db.fillMetrics(ctx)
}

// errNoStored reports a metrics row given to a database whose metrics view recomputes.
var errNoStored = errors.New("analysis: the database stores no metrics rows")

// storeStatement returns the statement that stores m as run_metrics' row, with its
// arguments: every column of run_metrics by name, NULL for an undefined metric.
func (db *DB) storeStatement(m Metrics) (string, []any, error) {
	if db.storedCols == nil {
		return "", nil, errNoStored
	}
	cols := make([]string, 0, len(db.storedCols))
	args := make([]any, 0, len(db.storedCols)+1)
	for _, c := range db.storedCols {
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
			cols = append(cols, "?::DOUBLE AS "+ident(c))
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
