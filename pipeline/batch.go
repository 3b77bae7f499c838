//go:build duckdb_arrow

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/mayday-sim/mayday/analysis"
)

// Batch executes many runs in parallel: Workers goroutines (default runtime.NumCPU()), each
// run single-threaded as always; a worker starts its next simulation as soon as its run's
// simulation has ended, and that run is committed on the side (see work). With Into, every
// worker loads its runs straight into that one database, each run a transaction of its own
// on its own connection: DuckDB commits concurrent appends to the same tables without
// conflict, so a run is in Into, whole, as soon as it finishes, and nothing is copied
// afterwards. Without Into, each run loads into a temporary database of its own, and
// CopyRuns copies the runs wanted. Either way a run's metrics are computed in Go from its
// records while they load (see Execute). While any load runs, DuckDB is held to one thread
// (see analysis.DB.Load), so that the workers, not DuckDB's pool, use the cores. Results are
// identical to running the specs one by one: a run's records depend on its scenario and seed
// only. Only the physical order of rows across runs depends on which run finished first;
// every reader orders explicitly (analysis.ListRuns), and BatchResult lists everything in
// spec order.
type Batch struct {
	Workers int
	// Into is the database the runs load into; nil = a temporary database per run under Dir.
	Into *analysis.DB
	// NoTrace stores nothing (Into and Dir are ignored): each run's records stream into its
	// digest and its metrics computed in Go (Compute), for runs that are only judged by their
	// metrics. CopyRuns then has nothing to copy.
	NoTrace bool
	Dir     string // where the temporary databases go; "" = os.TempDir()
	// KeepGoing records a failed run in BatchResult.Errs and goes on with the others;
	// without it the first failure stops the batch and is returned.
	KeepGoing bool
	// Done is called after each run ends (err is its failure), in completion order, one
	// call at a time.
	Done func(i int, out analysis.Outcome, err error)
}

// batchPrefix starts the name of a batch's temporary folder.
const batchPrefix = ".mayday-batch-"

// BatchResult holds what a Batch ran until Close removes its temporary databases.
type BatchResult struct {
	Outcomes []analysis.Outcome // in spec order
	Ran      []bool             // true for the runs that finished (possibly partial, when interrupted)
	Errs     []error            // with KeepGoing: why spec i failed
	Elapsed  []time.Duration    // each run's own wall time: simulating, then committing (with Into, and the checkpoint after), not waiting for the run before
	Stale    []string           // batch folders of killed processes that were removed
	into     bool               // the runs are in Batch.Into already
	noTrace  bool               // the runs stored nothing
	paths    []string           // the temporary database of each spec's run
	dir      string
}

// Workers is how many runs a batch of runs specs with the given Workers (0: the number of
// cores) runs at once: at least one, at most one per run.
func Workers(workers, runs int) int {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	return max(1, min(workers, runs))
}

// Run executes specs and returns their outcomes in spec order. A cancelled ctx stops
// dispatching; runs under way finish as partial runs (status `partial`), the rest do not
// start. The first run that fails cancels the others and is returned as the error (with
// Into, the runs that finished before stay in it). A run that fails is never left in Into.
func (b Batch) Run(ctx context.Context, specs []Spec) (*BatchResult, error) {
	workers := Workers(b.Workers, len(specs))
	r := &BatchResult{
		Outcomes: make([]analysis.Outcome, len(specs)),
		Ran:      make([]bool, len(specs)),
		Errs:     make([]error, len(specs)),
		Elapsed:  make([]time.Duration, len(specs)),
		into:     b.Into != nil && !b.NoTrace,
		noTrace:  b.NoTrace,
	}
	switch {
	case b.NoTrace: // no run stores anything
	case b.Into != nil:
		ids := make([]string, len(specs))
		for i, s := range specs {
			ids[i] = s.runID()
		}
		if err := analysis.NewRunIDs(ctx, b.Into, ids); err != nil {
			return nil, err
		}
	default:
		if err := r.makeDir(b.Dir, len(specs)); err != nil {
			return nil, err
		}
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
	record := func(i int, out analysis.Outcome, elapsed time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			r.Errs[i] = err
		} else {
			r.Outcomes[i], r.Ran[i], r.Elapsed[i] = out, true, elapsed
		}
		if b.Done != nil {
			b.Done(i, out, err)
		}
	}
	for range workers {
		wg.Go(func() { b.work(ctx, r, specs, jobs, fail, record) })
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

// work is one worker: it runs the specs it is handed until jobs closes, skipping them once
// the batch stops. A run's simulation ends while DuckDB is still inserting its last
// batches; the worker then starts its next simulation at once and finishes the run before
// (committing it, computing its metrics, checkpointing) on a goroutine, one such run at a
// time, so that the next simulation overlaps the last one's tail in DuckDB instead of
// waiting for it.
func (b Batch) work(ctx context.Context, r *BatchResult, specs []Spec, jobs <-chan int,
	fail func(error), record func(i int, out analysis.Outcome, elapsed time.Duration, err error)) {
	var tail chan struct{} // closed when the worker's run before has been finished
	wait := func() {
		if tail != nil {
			<-tail
			tail = nil
		}
	}
	defer wait()
	for i := range jobs {
		if ctx.Err() != nil {
			continue // drain: the batch is stopping
		}
		start := time.Now()
		finish := b.begin(ctx, r, i, specs[i])
		simulated := time.Since(start)
		wait()
		tail = make(chan struct{})
		go func(done chan struct{}) {
			defer close(done)
			if beforeFinish != nil {
				beforeFinish(i)
			}
			finishing := time.Now()
			out, err, dberr := finish()
			switch {
			case dberr != nil:
				fail(dberr) // the database, not the run
			case err != nil && !b.KeepGoing:
				fail(err)
			default:
				record(i, out, simulated+time.Since(finishing), err)
			}
		}(tail)
	}
}

// beforeFinish, when set (by tests), is called with a run's index before a batch finishes
// it, on the goroutine that finishes it.
var beforeFinish func(i int)

// finishFunc finishes a run begun by Batch.begin: its outcome, its failure, and a failure of
// the database itself.
type finishFunc func() (analysis.Outcome, error, error)

// begin simulates spec i into Into, or without Into into a temporary database of its own
// (closed once the run is finished), and returns what finishes the run.
func (b Batch) begin(ctx context.Context, r *BatchResult, i int, spec Spec) finishFunc {
	if b.NoTrace {
		out, err := Compute(ctx, spec)
		return func() (analysis.Outcome, error, error) { return out, err, nil }
	}
	if b.Into != nil {
		return b.simulate(ctx, b.Into, spec)
	}
	// Not ctx: an interrupt that lands while a worker opens a database must stop the
	// batch, not fail it.
	db, err := analysis.CreateWorker(context.WithoutCancel(ctx), r.paths[i])
	if err != nil {
		// the environment, not a run: stop whatever KeepGoing says
		return func() (analysis.Outcome, error, error) { return analysis.Outcome{}, nil, err }
	}
	finish := b.simulate(ctx, db, spec)
	return func() (analysis.Outcome, error, error) {
		out, err, dberr := finish()
		if cerr := db.Close(); cerr != nil && dberr == nil {
			dberr = fmt.Errorf("analysis: batch run database: %w", cerr)
		}
		return out, err, dberr
	}
}

// simulate runs the simulation of spec into db and returns what finishes the run. With Into,
// a failed run is removed and a finished one checkpointed when it can be.
func (b Batch) simulate(ctx context.Context, db *analysis.DB, spec Spec) finishFunc {
	sr, err := simulate(ctx, db, spec)
	return func() (analysis.Outcome, error, error) {
		out := sr.out
		if err == nil {
			out, err = sr.finish(ctx)
		}
		if b.Into == nil {
			return out, err, nil
		}
		if err != nil {
			return out, errors.Join(err, analysis.DropRun(context.WithoutCancel(ctx), db, spec.runID())), nil
		}
		return out, nil, analysis.TryCheckpoint(context.WithoutCancel(ctx), db)
	}
}

// makeDir creates the folder of the runs' databases. It is named after this process, so
// the next batch in the same place can tell a folder left by a killed process from one of a
// batch still running.
func (r *BatchResult) makeDir(parent string, runs int) error {
	if parent == "" {
		parent = os.TempDir()
	}
	r.Stale = analysis.CleanStale(parent, batchPrefix, "a batch")
	dir, err := os.MkdirTemp(parent, batchPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return fmt.Errorf("analysis: batch: %w", err)
	}
	r.dir = dir
	for i := range runs {
		r.paths = append(r.paths, filepath.Join(dir, "run-"+strconv.Itoa(i)+".duckdb"))
	}
	return nil
}

// CopyRuns copies the runs of the specs listed in order (indices into the specs given to
// Run; specs that never ran are skipped) into dst, one run after another in that order.
func (r *BatchResult) CopyRuns(ctx context.Context, dst *analysis.DB, order []int) error {
	if r.into {
		return errors.New("analysis: batch: the runs were loaded into the batch's database; there is nothing to copy")
	}
	if r.noTrace {
		return errors.New("analysis: batch: the runs kept no trace (NoTrace); there is nothing to copy")
	}
	var runs []analysis.RunCopy
	for _, i := range order {
		if i < 0 || i >= len(r.Ran) || !r.Ran[i] {
			continue
		}
		runs = append(runs, analysis.RunCopy{Path: r.paths[i], RunID: r.Outcomes[i].RunID})
	}
	return analysis.CopyRuns(ctx, dst, runs)
}

// Close removes the temporary databases.
func (r *BatchResult) Close() error {
	if r.dir == "" {
		return nil
	}
	return os.RemoveAll(r.dir)
}
