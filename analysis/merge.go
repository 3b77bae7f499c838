//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// ErrDuplicateRun reports a run_id that a merge would store twice.
var ErrDuplicateRun = errors.New("duplicate run_id")

// ErrLayout reports a source database whose tables have columns the target's tables have
// not: it was written by a mayday with another trace layout, and merging it would lose them.
var ErrLayout = errors.New("another trace layout")

// Merge copies every run of the databases at paths into dst: each table whole, one scan per
// source and table (ATTACH, then INSERT … BY NAME SELECT *, so column order may differ
// between versions), at the pace of DuckDB's own copy; tables dst lacks (such as
// sweep_params, or one a newer version added) are created. Runs keep their run_id; one that
// dst already holds, or that two sources both hold, is refused with ErrDuplicateRun before
// anything is copied. It returns the run_ids copied in the order ListRuns gives them:
// source by source in stored order, sweep runs in grid order, so merging a sweep's shards
// yields the database the unsharded sweep writes. Either every run is copied or none. The
// metrics rows and derived tables a source stores are not copied: the target computes its
// own from the records it copied (by the same Go code, replayed), so a source's stored rows
// are never trusted.
func Merge(ctx context.Context, dst *DB, paths []string) ([]string, error) {
	return MergeWith(ctx, dst, paths, MergeOptions{})
}

// MergeOptions tunes Merge.
type MergeOptions struct {
	// Progress, when set, is called before each table of each source is copied: table i of
	// n in all.
	Progress func(path, table string, i, n int)
}

// MergeWith is Merge with options.
func MergeWith(ctx context.Context, dst *DB, paths []string, opts MergeOptions) ([]string, error) {
	srcs := make([]mergeSource, len(paths))
	for i, p := range paths {
		srcs[i] = mergeSource{path: p, alias: "mayday_src_" + strconv.Itoa(i)}
	}
	var copied []string
	err := withAttached(ctx, dst, srcs, func(conn *sql.Conn, dstName string) error {
		// The sources are input from elsewhere: once attached, nothing they hold (a
		// generated column, a default) may reach another file while they are copied.
		if _, err := conn.ExecContext(ctx, "SET enable_external_access = false"); err != nil {
			return fmt.Errorf("analysis: merge: %w", err)
		}
		runs, tables, err := mergePlan(ctx, conn, dstName, srcs)
		if err != nil {
			return err
		}
		GridOrder(runs, func(r RunInfo) (int, uint64, string) { return r.Point, r.Seed, r.RunID })
		for _, r := range runs {
			copied = append(copied, r.RunID)
		}
		return copyTables(ctx, conn, dstName, srcs, tables, opts.Progress)
	})
	if err != nil {
		return nil, err
	}
	if err := dst.fillMetrics(ctx); err != nil {
		return nil, fmt.Errorf("analysis: merge: %w", err)
	}
	return copied, nil
}

// mergePlan reads the runs of every source in stored order, refusing a run_id found twice,
// and the tables of each source.
func mergePlan(ctx context.Context, conn *sql.Conn, dstName string, srcs []mergeSource) ([]RunInfo, [][]string, error) {
	seen := map[string]string{} // run_id → where it is already
	existing, err := queryStrings(ctx, conn, "SELECT run_id FROM "+qualified(dstName, "runs"))
	if err != nil {
		return nil, nil, fmt.Errorf("analysis: merge: reading the target's runs: %w", err)
	}
	for _, id := range existing {
		seen[id] = "the target database"
	}
	var runs []RunInfo
	tables := make([][]string, len(srcs))
	for si, s := range srcs {
		set, err := tableSet(ctx, conn, s.alias)
		if err != nil {
			return nil, nil, err
		}
		if !set["runs"] {
			return nil, nil, fmt.Errorf("analysis: merge: %s is not a mayday database (it has no runs table)", s.path)
		}
		if tables[si], err = runTables(ctx, conn, s.alias); err != nil {
			return nil, nil, fmt.Errorf("%w (in %s)", err, s.path)
		}
		// A source's stored metrics rows are not copied: the target stores its own,
		// recomputed from the trace it copies (MergeWith).
		tables[si] = slices.DeleteFunc(tables[si], func(t string) bool { return t == storedMetrics })
		if err := checkLayout(ctx, conn, dstName, s); err != nil {
			return nil, nil, err
		}
		q := "SELECT run_id, CAST(seed AS UBIGINT), -1 FROM " + qualified(s.alias, "runs") + " ORDER BY rowid"
		if set["sweep_params"] {
			q = "SELECT r.run_id, CAST(r.seed AS UBIGINT), coalesce(p.point, -1) FROM " + qualified(s.alias, "runs") + " r LEFT JOIN " +
				"(SELECT run_id, min(point) AS point FROM " + qualified(s.alias, "sweep_params") + " GROUP BY run_id) p " +
				"USING (run_id) ORDER BY r.rowid"
		}
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			return nil, nil, fmt.Errorf("analysis: merge: reading the runs of %s: %w", s.path, err)
		}
		for rows.Next() {
			var r RunInfo
			if err := rows.Scan(&r.RunID, &r.Seed, &r.Point); err != nil {
				rows.Close()
				return nil, nil, fmt.Errorf("analysis: merge: reading the runs of %s: %w", s.path, err)
			}
			if where, dup := seen[r.RunID]; dup {
				rows.Close()
				return nil, nil, fmt.Errorf("analysis: merge: run %q of %s is already in %s: %w (was the same database or shard given twice?)",
					r.RunID, s.path, where, ErrDuplicateRun)
			}
			seen[r.RunID] = s.path
			runs = append(runs, r)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, nil, fmt.Errorf("analysis: merge: reading the runs of %s: %w", s.path, err)
		}
	}
	return runs, tables, nil
}

// copyTables copies every table of every source whole into dstName, in one transaction.
// Every run of a source is taken, so one scan per table does, in the source's row order:
// the rows of each run stay in the order they were written.
func copyTables(ctx context.Context, conn *sql.Conn, dstName string, srcs []mergeSource, tables [][]string, progress func(path, table string, i, n int)) error {
	dstTables, tx, err := beginCopy(ctx, conn, dstName)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	n := 0
	for _, ts := range tables {
		n += len(ts)
	}
	i := 0
	for si, s := range srcs {
		for _, t := range tables[si] {
			if progress != nil {
				progress(s.path, t, i, n)
			}
			i++
			if err := createMissing(ctx, tx, dstName, s.alias, t, dstTables); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO "+qualified(dstName, t)+" BY NAME SELECT * FROM "+qualified(s.alias, t)); err != nil {
				return fmt.Errorf("analysis: merge: copying table %s of %s: %w", t, s.path, err)
			}
		}
	}
	return tx.Commit()
}

// createMissing creates a table the target lacks (sweep_params, or one a newer version
// added) with the source's columns.
func createMissing(ctx context.Context, tx *sql.Tx, dstName, alias, t string, dstTables map[string]bool) error {
	if dstTables[t] {
		return nil
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE "+qualified(dstName, t)+" AS SELECT * FROM "+
		qualified(alias, t)+" LIMIT 0"); err != nil {
		return fmt.Errorf("analysis: merge: creating table %s: %w", t, err)
	}
	dstTables[t] = true
	return nil
}

// MergeBufferLimit is the DuckDB buffer memory (memory_limit) of a database that many runs
// are written into at once: a merge's output, a sweep's database. With DuckDB's default, 80%
// of the machine, the copy keeps the blocks it wrote cached and a sweep's committed runs
// stay in memory, since concurrent loads leave no moment for a checkpoint: measured on a
// 27-run, 774 MB sweep, merge peaked at 1.6 GB and the sweep at 6.2 GB, against 1.1 GB and
// (on 12 runs) 1.4 GB with this limit, at the same speed. DuckDB evicts or spills beyond it.
const MergeBufferLimit = 1 << 30

// SweepBufferLimit is the DuckDB buffer memory of a sweep's database when jobs runs load
// into it at once: sweepBufferPerJob for each, at least DefaultMemory (a single run's) and
// at most MergeBufferLimit. A sweep's database had MergeBufferLimit whatever its jobs, and
// with two jobs DuckDB used all of it: research-fleet at 100,000 investigations, 2 points ×
// 3 seeds, --jobs 2, peaked at 1,608,524 KB (DuckDB's own duckdb_memory() at 1.1 GB) in
// 104.5 s, and at 912,444 KB in 115.0 s with 384 MB; the sweep of 4 runs at 4,000
// investigations took 3.86 s (median of 4) with 1 GiB and 3.76 s with 384 MB.
func SweepBufferLimit(jobs int) uint64 {
	return min(max(uint64(max(jobs, 1))*sweepBufferPerJob, defaultMemoryBytes), MergeBufferLimit)
}

// sweepBufferPerJob is a sweep's DuckDB buffer memory per run loading at once: half a
// single run's, as a sweep's runs share the blocks the database caches.
const sweepBufferPerJob = defaultMemoryBytes / 2

// LimitBuffers sets the DuckDB buffer memory of db to bytes (rounded down to MiB, at least
// 64 MiB), or to CapMemory's cap when that is lower; 0 leaves it as it is, and so does a
// limit the user set with MemoryEnv, which wins over every default.
func LimitBuffers(ctx context.Context, db *DB, bytes uint64) error {
	if bytes == 0 || strings.TrimSpace(os.Getenv(MemoryEnv)) != "" {
		return nil
	}
	if c := memoryCap.Load(); c > 0 {
		bytes = min(bytes, c)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	db.buffers = max(bytes>>20, 64) << 20 // while loads run, theirs; after the last
	if err := db.fitLoadBuffers(ctx); err != nil {
		return fmt.Errorf("analysis: limiting the buffer memory of %s: %w", db.name(), err)
	}
	return nil
}

// mergeSource is a database attached under alias for copying.
type mergeSource struct{ path, alias string }

// copyStep copies one run from the database attached as alias.
type copyStep struct{ alias, runID string }

// copyInto attaches srcs to dst and copies the runs of plan, in order.
func copyInto(ctx context.Context, dst *DB, srcs []mergeSource, plan []copyStep) error {
	return withAttached(ctx, dst, srcs, func(conn *sql.Conn, dstName string) error {
		return copyRuns(ctx, conn, dstName, plan)
	})
}

// withAttached runs f on one connection of dst with every source attached read-only. ATTACH
// belongs to the connection's database instance; one connection keeps it and the
// transaction of f together.
func withAttached(ctx context.Context, dst *DB, srcs []mergeSource, f func(conn *sql.Conn, dstName string) error) (err error) {
	conn, err := dst.SQL().Conn(ctx)
	if err != nil {
		return fmt.Errorf("analysis: merge: %w", err)
	}
	defer conn.Close()
	var dstName string
	if err := conn.QueryRowContext(ctx, "SELECT current_database()").Scan(&dstName); err != nil {
		return fmt.Errorf("analysis: merge: %w", err)
	}
	for _, s := range srcs {
		if _, err := conn.ExecContext(ctx, "ATTACH "+literal(s.path)+" AS "+ident(s.alias)+" (READ_ONLY)"); err != nil {
			return fmt.Errorf("analysis: merge: opening %s: %w", s.path, err)
		}
		defer func() {
			_, derr := conn.ExecContext(context.WithoutCancel(ctx), "DETACH "+ident(s.alias))
			if err == nil && derr != nil {
				err = fmt.Errorf("analysis: merge: closing %s: %w", s.path, derr)
			}
		}()
	}
	return f(conn, dstName)
}

// beginCopy lists the tables dstName has and begins the transaction a copy into it runs in.
func beginCopy(ctx context.Context, conn *sql.Conn, dstName string) (map[string]bool, *sql.Tx, error) {
	dstTables, err := tableSet(ctx, conn, dstName)
	if err != nil {
		return nil, nil, err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("analysis: merge: %w", err)
	}
	return dstTables, tx, nil
}

// copyRuns copies the runs of plan into the database dstName, in one transaction: every
// table of the source that has a run_id column, rows of that run only.
func copyRuns(ctx context.Context, conn *sql.Conn, dstName string, plan []copyStep) error {
	dstTables, tx, err := beginCopy(ctx, conn, dstName)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	type key struct{ alias, table string }
	srcTables := map[string][]string{}
	stmts := map[key]*sql.Stmt{}
	defer func() {
		for _, s := range stmts {
			s.Close()
		}
	}()
	for _, step := range plan {
		tables, ok := srcTables[step.alias]
		if !ok {
			if tables, err = runTables(ctx, conn, step.alias); err != nil {
				return err
			}
			for _, t := range tables {
				if err := createMissing(ctx, tx, dstName, step.alias, t, dstTables); err != nil {
					return err
				}
			}
			srcTables[step.alias] = tables
		}
		for _, t := range tables {
			k := key{step.alias, t}
			st := stmts[k]
			if st == nil {
				if st, err = tx.PrepareContext(ctx, "INSERT INTO "+qualified(dstName, t)+" BY NAME SELECT * FROM "+
					qualified(step.alias, t)+" WHERE run_id = ?"); err != nil {
					return fmt.Errorf("analysis: merge: table %s: %w", t, err)
				}
				stmts[k] = st
			}
			if _, err := st.ExecContext(ctx, step.runID); err != nil {
				return fmt.Errorf("analysis: merge: copying run %s, table %s: %w", step.runID, t, err)
			}
		}
	}
	return tx.Commit()
}

// checkLayout refuses a source whose tables have a column that the target's table of the
// same name has not (a database of an older or newer trace layout, such as one with the
// spans.attrs map this version no longer stores), naming the first such column and the
// version that wrote the source. A column the source lacks is filled with NULL, as before.
func checkLayout(ctx context.Context, conn *sql.Conn, dstName string, s mergeSource) error {
	var table, column, version string
	err := conn.QueryRowContext(ctx, `SELECT c.table_name, c.column_name,
			coalesce((SELECT any_value(version) FROM `+qualified(s.alias, "runs")+`), 'unknown')
		FROM duckdb_columns() c
		WHERE c.database_name = `+literal(s.alias)+` AND c.schema_name = 'main'
		  AND c.table_name <> `+literal(storedMetrics)+`
		  AND c.table_name IN (SELECT table_name FROM duckdb_tables()
			WHERE database_name = `+literal(dstName)+` AND schema_name = 'main')
		  AND NOT EXISTS (SELECT 1 FROM duckdb_columns() d
			WHERE d.database_name = `+literal(dstName)+` AND d.schema_name = 'main'
			  AND d.table_name = c.table_name AND d.column_name = c.column_name)
		ORDER BY c.table_name, c.column_index LIMIT 1`).Scan(&table, &column, &version)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("analysis: merge: reading the columns of %s: %w", s.path, err)
	}
	return fmt.Errorf("analysis: merge: %s was written with %w (by mayday %s): its table %s has a column %s, "+
		"which this version does not store; merge it with the version that wrote it, or run its scenarios again",
		s.path, ErrLayout, version, table, column)
}

// runTables lists the base tables of an attached database, refusing one without run_id:
// every mayday table has it, so that many runs can live in one database.
func runTables(ctx context.Context, conn *sql.Conn, db string) ([]string, error) {
	tables, err := queryStrings(ctx, conn,
		"SELECT table_name FROM duckdb_tables() WHERE database_name = "+literal(db)+" AND schema_name = 'main' ORDER BY table_name")
	if err != nil {
		return nil, fmt.Errorf("analysis: merge: listing tables: %w", err)
	}
	withRunID, err := queryStrings(ctx, conn,
		"SELECT table_name FROM duckdb_columns() WHERE database_name = "+literal(db)+" AND schema_name = 'main' AND column_name = 'run_id'")
	if err != nil {
		return nil, fmt.Errorf("analysis: merge: listing columns: %w", err)
	}
	for _, t := range tables {
		if err := checkTableName(t); err != nil {
			return nil, fmt.Errorf("analysis: merge: %w", err)
		}
		if !slices.Contains(withRunID, t) {
			return nil, fmt.Errorf("analysis: merge: table %s has no run_id column, so its rows cannot be told apart by run; is this a mayday database?", t)
		}
	}
	return tables, nil
}

func tableSet(ctx context.Context, conn *sql.Conn, db string) (map[string]bool, error) {
	names, err := queryStrings(ctx, conn,
		"SELECT table_name FROM duckdb_tables() WHERE database_name = "+literal(db)+" AND schema_name = 'main'")
	if err != nil {
		return nil, fmt.Errorf("analysis: merge: listing tables: %w", err)
	}
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	return set, nil
}

// querier is what *sql.DB and *sql.Conn share for reading rows.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryStrings reads the first column of every row of q as strings.
func queryStrings(ctx context.Context, q querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// ident quotes an SQL identifier; literal quotes a string literal. Paths and aliases are
// spliced into ATTACH, which takes no parameters.
func ident(s string) string   { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func qualified(db, table string) string { return ident(db) + ".main." + ident(table) }
