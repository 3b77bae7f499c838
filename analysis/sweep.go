//go:build duckdb_arrow

package analysis

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// SweepParam is one row of the sweep_params table: run RunID ran grid point Point, where
// the scenario value at Path was Value (as YAML text). A point has one row per axis and run.
type SweepParam struct {
	RunID string
	Point int
	Path  string
	Value string
}

//go:embed sweep_params.sql
var sweepParamsDDL string

// WriteSweepParams creates the sweep_params table if needed and appends rows to it.
func WriteSweepParams(ctx context.Context, db *DB, rows []SweepParam) error {
	tx, err := db.SQL().BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("analysis: sweep_params: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, sweepParamsDDL); err != nil {
		return fmt.Errorf("analysis: creating sweep_params: %w", err)
	}
	stmt, err := tx.PrepareContext(ctx, "INSERT INTO sweep_params (run_id, point, path, value) VALUES (?, ?, ?, ?)")
	if err != nil {
		return fmt.Errorf("analysis: sweep_params: %w", err)
	}
	defer stmt.Close()
	for _, r := range rows {
		if _, err := stmt.ExecContext(ctx, r.RunID, r.Point, r.Path, r.Value); err != nil {
			return fmt.Errorf("analysis: sweep_params row %s: %w", r.RunID, err)
		}
	}
	return tx.Commit()
}

// RunInfo describes one run stored in a database: its runs row and, for a sweep, its grid
// point and the values that point set.
type RunInfo struct {
	RunID      string
	Scenario   string
	Seed       uint64
	ConfigHash string
	Status     string
	Version    string // the mayday binary that ran it
	Point      int    // -1 when the run is not part of a sweep
	Params     []SweepParam
}

// ListRuns returns every run of db with its sweep point when the database holds a
// sweep_params table: in the order the runs were stored, except that sweep runs are in grid
// order (see GridOrder), since a sweep stores its runs in the order they finish.
func ListRuns(parent context.Context, db *DB) (_ []RunInfo, err error) {
	ctx, cancel := db.limit(parent)
	defer cancel()
	defer func() { err = db.limitErr(parent, ctx, err) }()
	rows, err := db.SQL().QueryContext(ctx,
		"SELECT run_id, coalesce(scenario, ''), CAST(coalesce(seed, 0) AS UBIGINT), coalesce(config_hash, ''), coalesce(status, ''), "+
			"coalesce(version, '') FROM runs ORDER BY rowid")
	if err != nil {
		return nil, fmt.Errorf("analysis: listing runs: %w", err)
	}
	var runs []RunInfo
	index := map[string]int{}
	for rows.Next() {
		r := RunInfo{Point: -1}
		if err := rows.Scan(&r.RunID, &r.Scenario, &r.Seed, &r.ConfigHash, &r.Status, &r.Version); err != nil {
			rows.Close()
			return nil, fmt.Errorf("analysis: listing runs: %w", err)
		}
		if err := CheckRunID(r.RunID); err != nil {
			rows.Close()
			return nil, fmt.Errorf("analysis: %s: %w", db.name(), err)
		}
		index[r.RunID] = len(runs)
		runs = append(runs, r)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("analysis: listing runs: %w", err)
	}
	has, err := hasTable(ctx, db, "sweep_params")
	if err != nil || !has {
		return runs, err
	}
	prow, err := db.SQL().QueryContext(ctx, "SELECT run_id, point, path, value FROM sweep_params ORDER BY rowid")
	if err != nil {
		return nil, fmt.Errorf("analysis: reading sweep_params: %w", err)
	}
	defer prow.Close()
	for prow.Next() {
		var p SweepParam
		if err := prow.Scan(&p.RunID, &p.Point, &p.Path, &p.Value); err != nil {
			return nil, fmt.Errorf("analysis: reading sweep_params: %w", err)
		}
		if i, ok := index[p.RunID]; ok {
			runs[i].Point = p.Point
			runs[i].Params = append(runs[i].Params, p)
		}
	}
	if err := prow.Err(); err != nil {
		return nil, fmt.Errorf("analysis: reading sweep_params: %w", err)
	}
	GridOrder(runs, func(r RunInfo) (int, uint64, string) { return r.Point, r.Seed, r.RunID })
	return runs, nil
}

// GridOrder puts the sweep runs of a list in stored order into grid order (by point, then
// seed, then run_id), each in a place a sweep run held, so runs from outside a sweep keep
// their places. The runs of a sweep are committed in the order they finish, which depends on
// timing; this order does not. key returns a run's point (-1 outside a sweep), seed and id.
func GridOrder[T any](runs []T, key func(T) (point int, seed uint64, id string)) {
	var at []int
	var sweep []T
	for i, r := range runs {
		if p, _, _ := key(r); p >= 0 {
			at = append(at, i)
			sweep = append(sweep, r)
		}
	}
	slices.SortFunc(sweep, func(a, b T) int {
		pa, sa, ia := key(a)
		pb, sb, ib := key(b)
		return cmp.Or(cmp.Compare(pa, pb), cmp.Compare(sa, sb), strings.Compare(ia, ib))
	})
	for k, i := range at {
		runs[i] = sweep[k]
	}
}

func hasTable(ctx context.Context, db *DB, name string) (bool, error) {
	if db.sandbox {
		return db.tables[name], nil
	}
	var n int
	err := db.SQL().QueryRowContext(ctx,
		"SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' AND table_name = ?",
		name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("analysis: looking for table %s: %w", name, err)
	}
	return n > 0, nil
}
