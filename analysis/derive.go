//go:build duckdb_arrow

package analysis

import (
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/metric/compute"
)

// derivedRuns is the table that names the runs whose derived tables are stored, with the
// layout they were stored in: a run that is not there (stored by an older version, or a
// process stopped between its commit and its derived rows) has them computed again, from
// its records, when the database is next opened.
const derivedRuns = "derived_runs"

// derivedLayout names the layout of every derived table: a digest of their columns and
// types. A database whose tables have another layout has them made again.
var derivedLayout = func() string {
	h := sha256.New()
	for _, d := range derivedTables {
		fmt.Fprintf(h, "%s(%s);", d.name, strings.Join(d.layout(), ","))
	}
	fmt.Fprintf(h, "%s(%s);", storedMetrics, strings.Join(runMetricsLayout(), ","))
	return hex.EncodeToString(h.Sum(nil))[:16]
}()

// derivedDDL is the statements that create derived_runs, run_metrics and the derived
// tables, in the order of derivedNames.
func derivedDDL() []string {
	stmts := []string{"CREATE TABLE " + derivedRuns + " (run_id VARCHAR NOT NULL, layout VARCHAR NOT NULL)", runMetricsDDL()}
	for _, d := range derivedTables {
		stmts = append(stmts, d.createStatement())
	}
	return stmts
}

// derivedNames lists derived_runs, run_metrics and the derived tables.
func derivedNames() []string {
	return append([]string{derivedRuns, storedMetrics}, derivedTableNames()...)
}

// derivedTableNames lists the derived tables.
func derivedTableNames() []string {
	var names []string
	for _, d := range derivedTables {
		names = append(names, d.name)
	}
	return names
}

// derivedLayouts are the layouts every derived table must have, by name ("name TYPE" each).
func derivedLayouts() map[string][]string {
	out := map[string][]string{storedMetrics: runMetricsLayout()}
	for _, d := range derivedTables {
		out[d.name] = d.layout()
	}
	return out
}

// derivedCurrent reports whether every derived table in the catalog q reads (the database's
// own, or the file's through a reader's search path) has this version's layout and every run
// is named in derived_runs with it.
func (db *DB) derivedCurrent(ctx context.Context) (bool, error) {
	for name, want := range derivedLayouts() {
		got, err := columnsOf(ctx, db.db, "SELECT * FROM "+name)
		if err != nil || !slices.Equal(got, want) {
			return false, nil // missing, not a table of rows mayday can read, or another layout
		}
	}
	var bad int
	err := db.db.QueryRowContext(ctx, "SELECT count(*) FROM ("+runsToDerive+")").Scan(&bad)
	if err != nil {
		return false, nil
	}
	var twice int
	err = db.db.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT run_id FROM "+storedMetrics+
		" GROUP BY run_id HAVING count(*) > 1 OR run_id NOT IN (SELECT run_id FROM runs))").Scan(&twice)
	return err == nil && bad == 0 && twice == 0, nil
}

// prepareDerived readies the derived tables of a database opened for writing: made again
// when they are missing or of another layout, and computed for every run that lacks them.
func (db *DB) prepareDerived(ctx context.Context) error {
	fits := true
	for name, want := range derivedLayouts() {
		got, err := columnsOf(ctx, db.db, "SELECT * FROM "+name)
		if err != nil || !slices.Equal(got, want) {
			fits = false
			break
		}
	}
	if _, err := columnsOf(ctx, db.db, "SELECT * FROM "+derivedRuns); err != nil {
		fits = false
	}
	if !fits {
		for _, n := range derivedNames() {
			if _, err := db.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+ident(n)); err != nil {
				return fmt.Errorf("analysis: replacing %s of another layout: %w", n, err)
			}
		}
		for _, q := range derivedDDL() {
			if _, err := db.db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("analysis: creating the derived tables: %w", err)
			}
		}
	}
	return nil
}

// derivedBatch is how many rows of a derived table are inserted in one Arrow batch.
const derivedBatch = 1 << 16

// fillDerived computes and stores the derived tables of every run that lacks them, once
// the views of a new database are defined: a run's clock is their run_origin_us.
func (db *DB) fillDerived(ctx context.Context) error {
	if err := db.waitViews(); err != nil {
		return err
	}
	return db.deriveMissing(ctx)
}

// deriveMissing is fillDerived with the views defined (the goroutine that defines them
// calls it last).
func (db *DB) deriveMissing(ctx context.Context) error {
	db.deriveMu.Lock()
	defer db.deriveMu.Unlock()
	ids, err := queryStrings(ctx, db.db, runsToDerive+" ORDER BY run_id")
	if err != nil {
		return fmt.Errorf("analysis: looking for runs without derived tables: %w", err)
	}
	for _, id := range ids {
		t, m, err := db.deriveRun(ctx, id)
		if err != nil {
			return err
		}
		if err := db.storeDerived(ctx, id, t, &m); err != nil {
			return err
		}
	}
	return nil
}

// runsToDerive selects the runs whose derived tables or metrics row are not stored in this
// version's layout.
var runsToDerive = "SELECT run_id FROM runs r WHERE NOT EXISTS (SELECT 1 FROM " + derivedRuns +
	" d WHERE d.run_id = r.run_id AND d.layout = " + literal(derivedLayout) + ") OR NOT EXISTS (SELECT 1 FROM " +
	storedMetrics + " m WHERE m.run_id = r.run_id)"

// deriveRun computes the metrics row and the derived tables of run runID from its stored
// records. The metrics an imported run cannot measure ($.import.unknown of its config) are
// undefined.
func (db *DB) deriveRun(ctx context.Context, runID string) (compute.Tables, Metrics, error) {
	var origin, events int64
	var config string
	if err := db.db.QueryRowContext(ctx, "SELECT run_origin_us(run_id), coalesce(config, ''), coalesce(events, 0) FROM runs WHERE run_id = ?",
		runID).Scan(&origin, &config, &events); err != nil {
		return compute.Tables{}, Metrics{}, fmt.Errorf("analysis: run %s: reading its clock: %w", runID, err)
	}
	opts := replayOptions(origin, config)
	// A trace that records no tool's queue wait (an import from another producer) has
	// tool_stats' queue waits from the model's calls only, as the stored NULLs say.
	var waits, tools int64
	if err := db.db.QueryRowContext(ctx, "SELECT count(*) FILTER (WHERE queue_wait IS NOT NULL), count(*) FROM spans"+
		" WHERE run_id = ? AND operation = 'execute_tool'", runID).Scan(&waits, &tools); err != nil {
		return compute.Tables{}, Metrics{}, fmt.Errorf("analysis: run %s: %w", runID, err)
	}
	opts.UnknownQueueWait = tools > 0 && waits == 0
	sink := compute.New(opts)
	if err := replay(ctx, db.db, runID, origin, sink); err != nil {
		return compute.Tables{}, Metrics{}, fmt.Errorf("analysis: run %s: %w", runID, memoryHint(err))
	}
	row, err := sink.Finish(events)
	if err != nil {
		return compute.Tables{}, Metrics{}, fmt.Errorf("analysis: run %s: computing its metrics: %w", runID, err)
	}
	for _, name := range unknownMetrics(config) {
		if i := metric.Index(name); i >= 0 {
			row.Values[i] = math.NaN()
		}
	}
	m, err := NewMetrics(runID, row.Values, row.TerminationReasons, row.Currency)
	if err != nil {
		return compute.Tables{}, Metrics{}, err
	}
	return sink.Tables(runID), m, nil
}

// replayOptions are the options of the Sink that computes a stored run's metrics row and
// derived tables from its records, replayed (deriveRun) or as an import stores them
// (storedOrder): time 0 at origin, the prices of its config (none when it names none).
func replayOptions(origin int64, config string) compute.Options {
	opts := compute.Options{Guards: true, Origin: origin, Tables: true, Replay: true}
	if prices, err := compute.StoredPrices(config); err == nil {
		opts.Prices = prices
	}
	return opts
}

// unknownMetrics are the metrics an imported run's config names under $.import.unknown.
func unknownMetrics(config string) []string {
	var c struct {
		Import struct {
			Unknown map[string]json.RawMessage `json:"unknown"`
		} `json:"import"`
	}
	if json.Unmarshal([]byte(config), &c) != nil {
		return nil
	}
	return slices.Sorted(maps.Keys(c.Import.Unknown))
}

// storeDerived stores the derived tables t of run runID, in one transaction, in place of any
// rows the run had there, and names the run in derived_runs.
// m, when set, is the run's metrics row, stored in run_metrics in the same transaction.
func (db *DB) storeDerived(ctx context.Context, runID string, t compute.Tables, m *Metrics) error {
	conn, err := db.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("analysis: run %s: storing its derived tables: %w", runID, err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		ar, exec, err := arrowOn(ctx, dc)
		if err != nil {
			return err
		}
		arg := []driver.NamedValue{{Ordinal: 1, Value: runID}}
		if err := exec("BEGIN TRANSACTION", nil); err != nil {
			return err
		}
		err = exec("DELETE FROM "+derivedRuns+" WHERE run_id = ?", arg)
		for _, d := range derivedTables {
			if err != nil {
				break
			}
			if err = exec("DELETE FROM "+d.name+" WHERE run_id = ?", arg); err != nil {
				break
			}
			// In batches of derivedBatch rows, so that a large run's rows are not all made
			// Arrow at once. Each has a view of its own name: runs stored at once into one
			// database (a batch's workers) would otherwise register the same view (see
			// loadSeq).
			n := d.count(&t)
			for from := 0; err == nil && from < n; from += derivedBatch {
				rec := d.batch(reflect.ValueOf(d.rows(&t, from, min(from+derivedBatch, n))))
				view := "mayday_derived_" + d.name + "_" + strconv.FormatUint(loadSeq.Add(1), 10)
				if err = insertInto(ar, exec, d.name, view, rec); err == nil {
					err = exec("DROP VIEW IF EXISTS "+view, nil)
				}
			}
		}
		if err == nil && m != nil {
			err = exec("DELETE FROM "+storedMetrics+" WHERE run_id = ?", arg)
			if err == nil {
				var q string
				var args []any
				if q, args, err = db.storeStatement(*m); err == nil {
					named := make([]driver.NamedValue, len(args))
					for i, a := range args {
						named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
					}
					err = exec(q, named)
				}
			}
		}
		if err == nil {
			err = exec("INSERT INTO "+derivedRuns+" VALUES (?, ?)", append(arg, driver.NamedValue{Ordinal: 2, Value: derivedLayout}))
		}
		if err != nil {
			return errors.Join(err, exec("ROLLBACK", nil))
		}
		return exec("COMMIT", nil)
	})
	if err != nil {
		return fmt.Errorf("analysis: run %s: storing its derived tables: %w", runID, err)
	}
	return nil
}
