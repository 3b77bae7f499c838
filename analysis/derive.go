//go:build duckdb_arrow

package analysis

import (
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

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
	return hex.EncodeToString(h.Sum(nil))[:16]
}()

// derivedDDL is the statements that create the derived tables and derived_runs.
func derivedDDL() []string {
	stmts := []string{"CREATE TABLE " + derivedRuns + " (run_id VARCHAR NOT NULL, layout VARCHAR NOT NULL)"}
	for _, d := range derivedTables {
		stmts = append(stmts, d.createStatement())
	}
	return stmts
}

// derivedNames lists the derived tables and derived_runs.
func derivedNames() []string {
	names := []string{derivedRuns}
	for _, d := range derivedTables {
		names = append(names, d.name)
	}
	return names
}

// derivedCurrent reports whether every derived table in the catalog q reads (the database's
// own, or the file's through a reader's search path) has this version's layout and every run
// is named in derived_runs with it.
func (db *DB) derivedCurrent(ctx context.Context) (bool, error) {
	for _, d := range derivedTables {
		got, err := columnsOf(ctx, db.db, "SELECT * FROM "+d.name)
		if err != nil {
			return false, nil // missing, or not a table of rows mayday can read
		}
		if !slices.Equal(got, d.layout()) {
			return false, nil
		}
	}
	var missing int
	err := db.db.QueryRowContext(ctx, "SELECT count(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM "+derivedRuns+
		" d WHERE d.run_id = r.run_id AND d.layout = ?)", derivedLayout).Scan(&missing)
	if err != nil {
		return false, nil
	}
	return missing == 0, nil
}

// prepareDerived readies the derived tables of a database opened for writing: made again
// when they are missing or of another layout, and computed for every run that lacks them.
func (db *DB) prepareDerived(ctx context.Context) error {
	fits := true
	for _, d := range derivedTables {
		got, err := columnsOf(ctx, db.db, "SELECT * FROM "+d.name)
		if err != nil || !slices.Equal(got, d.layout()) {
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

// fillDerived computes and stores the derived tables of every run that lacks them.
func (db *DB) fillDerived(ctx context.Context) error {
	db.deriveMu.Lock()
	defer db.deriveMu.Unlock()
	ids, err := queryStrings(ctx, db.db, "SELECT run_id FROM runs r WHERE NOT EXISTS (SELECT 1 FROM "+derivedRuns+
		" d WHERE d.run_id = r.run_id AND d.layout = "+literal(derivedLayout)+") ORDER BY run_id")
	if err != nil {
		return fmt.Errorf("analysis: looking for runs without derived tables: %w", err)
	}
	for _, id := range ids {
		t, err := db.deriveRun(ctx, id)
		if err != nil {
			return err
		}
		if err := db.storeDerived(ctx, id, t); err != nil {
			return err
		}
	}
	return nil
}

// deriveRun computes the derived tables of run runID from its stored records.
func (db *DB) deriveRun(ctx context.Context, runID string) (compute.Tables, error) {
	var origin int64
	var config string
	var events int64
	if err := db.db.QueryRowContext(ctx, "SELECT run_origin_us(run_id), coalesce(config, ''), coalesce(events, 0) FROM runs WHERE run_id = ?",
		runID).Scan(&origin, &config, &events); err != nil {
		return compute.Tables{}, fmt.Errorf("analysis: run %s: reading its clock: %w", runID, err)
	}
	var opts compute.Options
	opts.Guards = true // parks are placed wherever they are stored
	opts.Tables = true
	opts.Replay = true
	opts.Origin = origin
	if prices, err := compute.StoredPrices(config); err == nil {
		opts.Prices = prices
	}
	sink := compute.New(opts)
	if err := replay(ctx, db.db, runID, origin, sink); err != nil {
		return compute.Tables{}, fmt.Errorf("analysis: run %s: %w", runID, memoryHint(err))
	}
	if _, err := sink.Finish(events); err != nil {
		return compute.Tables{}, fmt.Errorf("analysis: run %s: computing its derived tables: %w", runID, err)
	}
	return sink.Tables(runID), nil
}

// storeDerived stores the derived tables t of run runID, in one transaction, in place of any
// rows the run had there, and names the run in derived_runs.
func (db *DB) storeDerived(ctx context.Context, runID string, t compute.Tables) error {
	conn, err := db.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("analysis: run %s: storing its derived tables: %w", runID, err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		dconn, ok := dc.(driver.Conn)
		ex, ok2 := dc.(driver.ExecerContext)
		if !ok || !ok2 {
			return fmt.Errorf("DuckDB connection %T cannot take Arrow batches", dc)
		}
		ar, err := duckdb.NewArrowFromConn(dconn)
		if err != nil {
			return err
		}
		exec := func(q string, args []driver.NamedValue) error {
			_, err := ex.ExecContext(ctx, q, args)
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
			if rec := d.batch(d.rows(&t)); rec != nil {
				// Its own name: runs stored at once into one database (a batch's workers)
				// would otherwise register the same view (see loadSeq).
				view := "mayday_derived_" + d.name + "_" + strconv.FormatUint(loadSeq.Add(1), 10)
				if err = insertInto(ar, exec, d.name, view, rec); err == nil {
					err = exec("DROP VIEW IF EXISTS "+view, nil)
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
