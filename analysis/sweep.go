//go:build duckdb_arrow

package analysis

import (
	"cmp"
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A sweep runs a grid of scenario variants × seeds. Runs are independent and each is
// single-threaded and deterministic, so they spread over cores (Batch) and over machines
// (Shard, then Merge) without changing a single row: a run's trace depends only on its
// scenario and seed, never on which worker or machine ran it.

// SweepRunID names the run of seed `seed` at grid point `point` of a sweep:
// "<name>-p<point>-s<seed>".
func SweepRunID(name string, point int, seed uint64) string {
	return name + "-p" + strconv.Itoa(point) + "-s" + strconv.FormatUint(seed, 10)
}

// Shard is the slice Index (1 ≤ Index ≤ Count) of a grid cut into Count slices: grid point p
// belongs to slice p mod Count + 1. Dealing points round-robin, rather than in contiguous
// blocks, spreads an axis that makes runs slower (more investigations, a longer horizon)
// evenly over the slices. The zero Shard is the whole grid.
type Shard struct {
	Index, Count int
}

// ParseShard reads `I/N`, as `--shard` takes it.
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || err1 != nil || err2 != nil || n < 1 {
		return Shard{}, fmt.Errorf("--shard %q: want I/N with 1 <= I <= N, e.g. 2/4 for the second of four slices", s)
	}
	if i < 1 || i > n {
		return Shard{}, fmt.Errorf("--shard %q: I counts from 1 to N (1/%d ... %d/%d); in a Kubernetes Indexed Job or Slurm array use --shard auto --shards %d", s, n, n, n, n)
	}
	return Shard{Index: i, Count: n}, nil
}

// Has reports whether grid point p belongs to the shard.
func (s Shard) Has(p int) bool { return s.Count <= 1 || p%s.Count == s.Index-1 }

// Whole reports whether the shard is the whole grid.
func (s Shard) Whole() bool { return s.Count <= 1 }

func (s Shard) String() string {
	if s.Whole() {
		return "1/1"
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

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

// Batch executes many runs in parallel: Workers goroutines (default runtime.NumCPU()), each
// run single-threaded as always. With Into, every worker loads its runs straight into that
// one database, each run a transaction of its own on its own connection: DuckDB commits
// concurrent appends to the same tables without conflict, so a run is in Into, whole, as
// soon as it finishes, and nothing is copied afterwards. Without Into, each worker loads
// into its own temporary database, and CopyRuns copies the runs wanted. While any load
// runs, DuckDB is held to one thread (see DB.Load), so that the workers, not DuckDB's pool,
// use the cores. Results are identical to running the specs one by one: a run's records
// depend on its scenario and seed only. Only the physical order of rows across runs
// depends on which run finished first; every reader orders explicitly (ListRuns).
type Batch struct {
	Workers int
	// Into is the database the runs load into; nil = temporary worker databases under Dir.
	Into *DB
	Dir  string // where the temporary worker databases go; "" = os.TempDir()
	// KeepGoing records a failed run in BatchResult.Errs and goes on with the others;
	// without it the first failure stops the batch and is returned.
	KeepGoing bool
	// Done is called after each run ends (err is its failure), in completion order, one
	// call at a time.
	Done func(i int, out Outcome, err error)
}

// batchPrefix starts the name of a batch's temporary folder.
const batchPrefix = ".mayday-batch-"

// BatchResult holds what a Batch ran until Close removes its temporary databases.
type BatchResult struct {
	Outcomes []Outcome       // in spec order
	Ran      []bool          // true for the runs that finished (possibly partial, when interrupted)
	Errs     []error         // with KeepGoing: why spec i failed
	Elapsed  []time.Duration // each run's own wall time: loading, simulating, committing, its metrics, and with Into the checkpoint after it
	Stale    []string        // batch folders of killed processes that were removed
	into     bool            // the runs are in Batch.Into already
	holder   []int           // worker whose database holds spec i
	paths    []string        // the workers' databases
	dir      string
}

// Run executes specs and returns their outcomes in spec order. A cancelled ctx stops
// dispatching; runs under way finish as partial runs (status `partial`), the rest do not
// start. The first run that fails cancels the others and is returned as the error (with
// Into, the runs that finished before stay in it). A run that fails is never left in Into.
func (b Batch) Run(ctx context.Context, specs []Spec) (*BatchResult, error) {
	workers := b.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	workers = max(1, min(workers, len(specs)))
	r := &BatchResult{
		Outcomes: make([]Outcome, len(specs)),
		Ran:      make([]bool, len(specs)),
		Errs:     make([]error, len(specs)),
		Elapsed:  make([]time.Duration, len(specs)),
		holder:   make([]int, len(specs)),
		into:     b.Into != nil,
	}
	if b.Into != nil {
		if err := newRunIDs(ctx, b.Into, specs); err != nil {
			return nil, err
		}
	} else if err := r.makeDir(b.Dir, workers); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		jobs = make(chan int)
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
		cancel(err)
	}
	for w := range workers {
		wg.Go(func() {
			db, closeDB := b.Into, func() {}
			if db == nil {
				defer func() { closeDB() }()
			}
			for i := range jobs {
				if ctx.Err() != nil {
					continue // drain: the batch is stopping
				}
				if db == nil {
					var err error
					// Not ctx: an interrupt that lands while a worker opens its database
					// must stop the batch, not fail it.
					if db, err = openWorker(context.WithoutCancel(ctx), r.paths[w]); err != nil {
						fail(err) // the environment, not a run: stop whatever KeepGoing says
						continue
					}
					closeDB = func() {
						if err := db.Close(); err != nil {
							fail(fmt.Errorf("analysis: batch worker database: %w", err))
						}
					}
				}
				out, elapsed, err, dberr := b.execute(ctx, db, specs[i])
				if dberr != nil {
					fail(dberr) // the database, not the run
					continue
				}
				if err != nil && !b.KeepGoing {
					fail(err)
					continue
				}
				mu.Lock()
				if err != nil {
					r.Errs[i] = err
				} else {
					r.Outcomes[i], r.Ran[i], r.holder[i], r.Elapsed[i] = out, true, w, elapsed
				}
				if b.Done != nil {
					b.Done(i, out, err)
				}
				mu.Unlock()
			}
		})
	}
dispatch:
	for i := range specs {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break dispatch
		}
	}
	close(jobs)
	wg.Wait()
	if len(errs) > 0 {
		r.Close()
		return nil, errs[0]
	}
	return r, nil
}

// execute runs one spec into db and returns its outcome, its own wall time, its failure and
// a failure of the database itself. With Into, a failed run is removed and a finished one
// checkpointed when it can be.
func (b Batch) execute(ctx context.Context, db *DB, spec Spec) (Outcome, time.Duration, error, error) {
	start := time.Now()
	out, err := Execute(ctx, db, spec)
	if b.Into == nil {
		return out, time.Since(start), err, nil
	}
	if err != nil {
		return out, time.Since(start), errors.Join(err, dropRun(context.WithoutCancel(ctx), db, runIDOf(spec))), nil
	}
	dberr := tryCheckpoint(context.WithoutCancel(ctx), db)
	return out, time.Since(start), nil, dberr
}

// tryCheckpoint writes what the committed runs left in the write-ahead log into the database
// file, when no other run is loading at that moment; DuckDB refuses a checkpoint while
// another transaction writes, and then the next run's end or the sweep's close does it.
// Without it the whole sweep's checkpoint waits for the end, and a 6-run sweep spent a third
// of its wall time there, after the last run.
func tryCheckpoint(ctx context.Context, db *DB) error {
	_, err := db.SQL().ExecContext(ctx, "CHECKPOINT")
	if err != nil && !strings.Contains(err.Error(), "other write transactions active") {
		return fmt.Errorf("analysis: checkpoint of %s: %w", db.name(), err)
	}
	return nil
}

// makeDir creates the folder of the workers' databases. It is named after this process, so
// the next batch in the same place can tell a folder left by a killed process from one of a
// batch still running.
func (r *BatchResult) makeDir(parent string, workers int) error {
	if parent == "" {
		parent = os.TempDir()
	}
	r.Stale = cleanStale(parent, batchPrefix, "a batch")
	dir, err := os.MkdirTemp(parent, batchPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return fmt.Errorf("analysis: batch: %w", err)
	}
	r.dir = dir
	for w := range workers {
		r.paths = append(r.paths, filepath.Join(dir, "worker-"+strconv.Itoa(w)+".duckdb"))
	}
	return nil
}

func runIDOf(s Spec) string {
	if s.RunID != "" {
		return s.RunID
	}
	return RunID(s.Scenario.Name, s.Seed)
}

// newRunIDs refuses a batch that would load one run_id twice into db, or one db already
// holds: a failed run is removed by its run_id, which must be the batch's own.
func newRunIDs(ctx context.Context, db *DB, specs []Spec) error {
	seen := make(map[string]int, len(specs))
	ids := make([]string, len(specs))
	for i, s := range specs {
		id := runIDOf(s)
		if j, dup := seen[id]; dup {
			return fmt.Errorf("analysis: batch: specs %d and %d are both run %q: %w", j, i, id, ErrDuplicateRun)
		}
		seen[id], ids[i] = i, id
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

// dropRun deletes whatever a failed run committed (a run whose invariants failed is stored
// before they are checked), so that a database shared by a batch holds only runs that ran.
func dropRun(ctx context.Context, db *DB, runID string) error {
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

func openWorker(ctx context.Context, path string) (*DB, error) {
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

// CopyRuns copies the runs of the specs listed in order (indices into the specs given to
// Run; specs that never ran are skipped) into dst, one run after another in that order.
func (r *BatchResult) CopyRuns(ctx context.Context, dst *DB, order []int) error {
	if r.into {
		return errors.New("analysis: batch: the runs were loaded into the batch's database; there is nothing to copy")
	}
	var srcs []mergeSource
	alias := map[int]string{}
	var plan []copyStep
	for _, i := range order {
		if i < 0 || i >= len(r.Ran) || !r.Ran[i] {
			continue
		}
		w := r.holder[i]
		a, ok := alias[w]
		if !ok {
			a = "mayday_worker_" + strconv.Itoa(w)
			alias[w] = a
			srcs = append(srcs, mergeSource{path: r.paths[w], alias: a})
		}
		plan = append(plan, copyStep{alias: a, runID: r.Outcomes[i].RunID})
	}
	if len(plan) == 0 {
		return nil
	}
	return copyInto(ctx, dst, srcs, plan)
}

// Close removes the temporary databases.
func (r *BatchResult) Close() error {
	if r.dir == "" {
		return nil
	}
	return os.RemoveAll(r.dir)
}
