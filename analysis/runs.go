//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// What a batch of runs (package pipeline) needs of a database besides Load: its workers'
// databases, a check that its run_ids are new, removing a failed run, checkpoints between
// runs, and copying finished runs into the database they belong in.

// CreateWorker creates the database one batch worker loads its runs into, with DuckDB held
// to one thread: the workers, not DuckDB's pool, use the cores.
func CreateWorker(ctx context.Context, path string) (*DB, error) {
	db, err := Create(path)
	if err != nil {
		return nil, fmt.Errorf("analysis: batch worker database %s: %w", path, err)
	}
	if _, err := db.SQL().ExecContext(ctx, "SET threads = 1"); err != nil {
		db.Close()
		return nil, fmt.Errorf("analysis: batch worker database %s: %w", path, err)
	}
	return db, nil
}

// CleanStale removes the folders in parent named prefix+PID-... of processes that no longer
// run (a command killed with SIGKILL cannot clean up after itself) and says what it removed;
// what names what such a folder was for, e.g. "a batch".
func CleanStale(parent, prefix, what string) []string { return cleanStale(parent, prefix, what) }

// NewRunIDs refuses a list of run_ids that names one twice, or one db already holds: a
// batch loading into a shared database removes a failed run by its run_id, which must be
// the batch's own. Indices in the error count from 0 in the order of ids.
func NewRunIDs(ctx context.Context, db *DB, ids []string) error {
	seen := make(map[string]int, len(ids))
	for i, id := range ids {
		if j, dup := seen[id]; dup {
			return fmt.Errorf("analysis: batch: specs %d and %d are both run %q: %w", j, i, id, ErrDuplicateRun)
		}
		seen[id] = i
	}
	if len(ids) == 0 {
		return nil
	}
	var held string
	err := db.SQL().QueryRowContext(ctx, "SELECT run_id FROM runs WHERE list_contains(?, run_id) LIMIT 1", ids).Scan(&held)
	switch {
	case err == nil:
		return fmt.Errorf("analysis: batch: %s already holds run %q: %w", db.name(), held, ErrDuplicateRun)
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("analysis: batch: reading the runs of %s: %w", db.name(), err)
	}
	return nil
}

// DropRun deletes whatever a failed run committed (a run whose invariants failed is stored
// before they are checked), so that a database shared by a batch holds only runs that ran.
func DropRun(ctx context.Context, db *DB, runID string) error {
	conn, err := db.SQL().Conn(ctx)
	if err != nil {
		return fmt.Errorf("analysis: removing failed run %s: %w", runID, err)
	}
	defer conn.Close()
	var name string
	if err := conn.QueryRowContext(ctx, "SELECT current_database()").Scan(&name); err != nil {
		return fmt.Errorf("analysis: removing failed run %s: %w", runID, err)
	}
	tables, err := runTables(ctx, conn, name)
	if err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("analysis: removing failed run %s: %w", runID, err)
	}
	defer tx.Rollback()
	for _, t := range tables {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+qualified(name, t)+" WHERE run_id = ?", runID); err != nil {
			return fmt.Errorf("analysis: removing failed run %s from %s: %w", runID, t, err)
		}
	}
	return tx.Commit()
}

// Checkpoint writes what committed transactions left in the write-ahead log into the
// database file, waiting for none: it fails while another transaction writes.
func Checkpoint(ctx context.Context, db *DB) error {
	_, err := db.SQL().ExecContext(ctx, "CHECKPOINT")
	return err
}

// TryCheckpoint writes what the committed runs left in the write-ahead log into the database
// file, when no other run is loading at that moment; DuckDB refuses a checkpoint while
// another transaction writes, and then the next run's end or the sweep's close does it.
// Without it the whole sweep's checkpoint waits for the end, and a 6-run sweep spent a third
// of its wall time there, after the last run.
func TryCheckpoint(ctx context.Context, db *DB) error {
	err := Checkpoint(ctx, db)
	if err != nil && !strings.Contains(err.Error(), "other write transactions active") {
		return fmt.Errorf("analysis: checkpoint of %s: %w", db.name(), err)
	}
	return nil
}

// RunCopy names one run to copy: the database file that holds it and its run_id.
type RunCopy struct {
	Path  string
	RunID string
}

// CopyRuns copies runs into dst, one run after another in the order given.
func CopyRuns(ctx context.Context, dst *DB, runs []RunCopy) error {
	var srcs []mergeSource
	alias := map[string]string{}
	var plan []copyStep
	for _, r := range runs {
		a, ok := alias[r.Path]
		if !ok {
			a = "mayday_worker_" + strconv.Itoa(len(srcs))
			alias[r.Path] = a
			srcs = append(srcs, mergeSource{path: r.Path, alias: a})
		}
		plan = append(plan, copyStep{alias: a, runID: r.RunID})
	}
	if len(plan) == 0 {
		return nil
	}
	return copyInto(ctx, dst, srcs, plan)
}
