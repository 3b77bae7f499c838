//go:build duckdb_arrow

package pipeline

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/scenarios"
)

const batchScenario = `
name: batch
seed: 3
horizon: 1d
workload:
  investigations: 40
  arrival: {uniform: 10m}
  steps: {dist: uniform, min: 2, max: 5}
  think: {dist: exponential, mean: 5s}
  tokens: {dist: constant, value: 500}
  tools: {t: 1}
tools:
  t: {latency: {dist: exponential, mean: 2s}, idempotency: keyed, timeout: 1m}
faults:
  - {kind: transient, tool: t, probability: 0.2}
recovery:
  retry: {max_attempts: 3, on_exhausted: terminate}
sweep:
  recovery.retry.max_attempts: [1, 4]
`

func batchSpecs(t *testing.T) []Spec {
	t.Helper()
	base, err := scenarios.Parse("batch.yaml", []byte(batchScenario), nil)
	if err != nil {
		t.Fatal(err)
	}
	var specs []Spec
	for p, point := range base.Points() {
		s, err := base.With(point...)
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(1); seed <= 3; seed++ {
			specs = append(specs, Spec{Scenario: s, Seed: seed, RunID: analysis.SweepRunID(s.Name, p, seed)})
		}
	}
	return specs
}

// A batch on several workers gives every run the digest and metrics it has when run alone,
// and CopyRuns stores the runs in the order asked, whatever order the workers finished in.
func TestBatchEqualsSerial(t *testing.T) {
	ctx := context.Background()
	specs := batchSpecs(t)
	serial, want := executeSerially(t, specs)

	var done atomic.Int32
	res, err := Batch{Workers: 3, Dir: t.TempDir(), Done: func(int, analysis.Outcome, error) { done.Add(1) }}.Run(ctx, specs)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if int(done.Load()) != len(specs) {
		t.Errorf("Done called %d times, want %d", done.Load(), len(specs))
	}
	for i, o := range res.Outcomes {
		if !res.Ran[i] || res.Errs[i] != nil {
			t.Fatalf("spec %d did not run: %v", i, res.Errs[i])
		}
		if o.RunID != want[i].RunID || o.Digest != want[i].Digest {
			t.Errorf("spec %d: %s digest %s, alone %s digest %s", i, o.RunID, o.Digest, want[i].RunID, want[i].Digest)
		}
		if a, b := o.Metrics.Get("completion_rate"), want[i].Metrics.Get("completion_rate"); a != b {
			t.Errorf("spec %d: completion_rate %v in the batch, %v alone", i, a, b)
		}
	}

	// Reverse order on purpose: the stored order is the one asked for.
	dst, err := analysis.Create(filepath.Join(t.TempDir(), "dst.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	order := []int{5, 4, 3, 2, 1, 0}
	if err := res.CopyRuns(ctx, dst, order); err != nil {
		t.Fatal(err)
	}
	runs, err := analysis.ListRuns(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.RunID)
	}
	var wantIDs []string
	for _, i := range order {
		wantIDs = append(wantIDs, specs[i].RunID)
	}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("stored runs %v, want %v", ids, wantIDs)
	}
	// Every table's rows came along: the copied database measures what the serial one does.
	got, err := dst.AllMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := serial.AllMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ref) {
		t.Fatalf("%d metrics rows, want %d", len(got), len(ref))
	}
	for i := range got {
		g, r := got[i], ref[i]
		if g.RunID != r.RunID || g.Get("events") != r.Get("events") || g.Get("completion_rate") != r.Get("completion_rate") || g.Get("started") != r.Get("started") {
			t.Errorf("metrics of %s after the copy differ from the serial run: %+v vs %+v", g.RunID, g, r)
		}
	}
}

// Several workers loading straight into one database store exactly the runs one by one:
// the same digests, the same rows of every table, each run's rows in the same order; and
// ListRuns lists them in grid order, whichever finished first.
func TestBatchIntoEqualsSerial(t *testing.T) {
	ctx := context.Background()
	specs := batchSpecs(t)
	serial, want := executeSerially(t, specs)
	into, err := analysis.Create(filepath.Join(t.TempDir(), "into.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer into.Close()
	var order []int
	res, err := Batch{Workers: 3, Into: into, Done: func(i int, _ analysis.Outcome, _ error) { order = append(order, i) }}.Run(ctx, specs)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	t.Logf("completion order %v", order)
	if len(order) != len(specs) {
		t.Fatalf("Done called %d times, want %d", len(order), len(specs))
	}
	for i, o := range res.Outcomes {
		if !res.Ran[i] || res.Errs[i] != nil || res.Elapsed[i] <= 0 {
			t.Fatalf("spec %d: ran %v, err %v, elapsed %v", i, res.Ran[i], res.Errs[i], res.Elapsed[i])
		}
		if o.Digest != want[i].Digest || o.Metrics.Get("completion_rate") != want[i].Metrics.Get("completion_rate") {
			t.Errorf("spec %d: digest %s completion %v in the batch, alone %s %v", i, o.Digest, o.Metrics.Get("completion_rate"), want[i].Digest, want[i].Metrics.Get("completion_rate"))
		}
	}
	if err := res.CopyRuns(ctx, serial, []int{0}); err == nil {
		t.Error("CopyRuns of a batch loaded into its database: no error; want one (there is nothing to copy)")
	}
	for _, db := range []*analysis.DB{serial, into} {
		if err := analysis.WriteSweepParams(ctx, db, sweepParams(specs)); err != nil {
			t.Fatal(err)
		}
	}
	sameFingerprints(t, "batch into one database vs one by one", fingerprints(t, into), fingerprints(t, serial))
	runs, err := analysis.ListRuns(ctx, into)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range runs {
		if r.RunID != specs[i].RunID || r.Point != i/3 || len(r.Params) != 1 {
			t.Errorf("ListRuns[%d] = %s at point %d with %d params; want %s at point %d with 1", i, r.RunID, r.Point, len(r.Params), specs[i].RunID, i/3)
		}
	}
}

// A batch into a database refuses, before running anything, a run_id given twice or one the
// database already holds, which it leaves as it was.
func TestBatchIntoRefusesDuplicateRuns(t *testing.T) {
	ctx := context.Background()
	specs := batchSpecs(t)[:2]
	db := openTestDB(t)
	if _, err := (Batch{Into: db}).Run(ctx, []Spec{specs[0], specs[0]}); !errors.Is(err, analysis.ErrDuplicateRun) {
		t.Errorf("a run_id twice: %v; want analysis.ErrDuplicateRun", err)
	}
	if _, err := Execute(ctx, db, specs[1]); err != nil {
		t.Fatal(err)
	}
	before := fingerprints(t, db)
	if _, err := (Batch{Into: db}).Run(ctx, specs); !errors.Is(err, analysis.ErrDuplicateRun) {
		t.Errorf("a run_id the database holds: %v; want analysis.ErrDuplicateRun", err)
	}
	sameFingerprints(t, "after a refused batch", fingerprints(t, db), before)
}

// sweepParams gives the specs of batchSpecs their grid points: three seeds per point.
func sweepParams(specs []Spec) []analysis.SweepParam {
	var ps []analysis.SweepParam
	for i, s := range specs {
		ps = append(ps, analysis.SweepParam{RunID: s.RunID, Point: i / 3, Path: "recovery.retry.max_attempts", Value: []string{"1", "4"}[i/3]})
	}
	return ps
}

// fingerprints returns, per table and run, the row count and a hash over the rows in stored
// (rowid) order, every column but runs.wall_seconds (a wall clock): two databases with the
// same fingerprints hold the same rows, each run's rows in the same order.
func fingerprints(t *testing.T, db *analysis.DB) map[string]string {
	t.Helper()
	ctx := context.Background()
	tables, err := queryStringsDB(ctx, db, "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, table := range tables {
		except := ""
		if table == "runs" {
			except = " EXCLUDE (wall_seconds)"
		}
		q := "SELECT run_id, count(*), hash(list(h ORDER BY rid)) FROM (SELECT rowid AS rid, run_id, hash(row(COLUMNS(*" + except + "))) AS h FROM " +
			`"` + table + `"` + ") GROUP BY run_id"
		rows, err := db.SQL().QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
			var run string
			var n int
			var h uint64
			if err := rows.Scan(&run, &n, &h); err != nil {
				t.Fatal(err)
			}
			out[table+"/"+run] = strconv.Itoa(n) + " rows, hash " + strconv.FormatUint(h, 16)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func queryStringsDB(ctx context.Context, db *analysis.DB, q string) ([]string, error) {
	rows, err := db.SQL().QueryContext(ctx, q)
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

func sameFingerprints(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: the reference database holds no rows", what)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s: %q, want %q", what, k, got[k], w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s is not in the reference database", what, k)
		}
	}
}

// executeSerially runs specs one by one into a fresh database file, the reference a batch
// is compared with, and returns it (closed when the test ends) with their outcomes.
func executeSerially(t *testing.T, specs []Spec) (*analysis.DB, []analysis.Outcome) {
	t.Helper()
	db := createFileDB(t, "serial.duckdb")
	var out []analysis.Outcome
	for _, s := range specs {
		o, err := Execute(context.Background(), db, s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return db, out
}

// createFileDB creates a database file of the given name in a temporary folder, closed when
// the test ends.
func createFileDB(t *testing.T, name string) *analysis.DB {
	t.Helper()
	db, err := analysis.Create(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func openTestDB(t testing.TB) *analysis.DB {
	t.Helper()
	db, err := analysis.Create("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// A batch that keeps no trace gives every run the digest it has when stored, and the
// metrics the view gives it (computed in Go: counts and ratios of counts exactly, sums of
// floats to the last bits), stores nothing and has nothing to copy.
func TestBatchNoTraceEqualsSerial(t *testing.T) {
	ctx := context.Background()
	specs := batchSpecs(t)
	_, want := executeSerially(t, specs)
	dir := t.TempDir()
	res, err := Batch{Workers: 3, Dir: dir, NoTrace: true}.Run(ctx, specs)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	for i, o := range res.Outcomes {
		if !res.Ran[i] || res.Errs[i] != nil {
			t.Fatalf("spec %d did not run: %v", i, res.Errs[i])
		}
		if o.RunID != want[i].RunID || o.Digest != want[i].Digest || o.Status != want[i].Status || o.Events != want[i].Events {
			t.Errorf("spec %d: %+v without a trace, %+v stored", i, o, want[i])
		}
		for _, name := range analysis.MetricNames {
			a, b := o.Metrics.Get(name), want[i].Metrics.Get(name)
			if math.IsNaN(a) != math.IsNaN(b) || math.Abs(a-b) > 1e-9*math.Max(1, math.Abs(b)) {
				t.Errorf("spec %d: %s = %v without a trace, %v from the view", i, name, a, b)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a batch without a trace wrote %d entries under its Dir", len(entries))
	}
	if err := res.CopyRuns(ctx, nil, []int{0}); err == nil {
		t.Error("CopyRuns of a batch without a trace: no error")
	}
}

// Serial into a database that already holds a run gives each of its runs the metrics row
// the view gives that run alone, and the digest it has when run alone.
func TestSerialIntoReadsEachRunsMetrics(t *testing.T) {
	ctx := context.Background()
	specs := batchSpecs(t)[:4]
	_, want := executeSerially(t, specs)
	db := openTestDB(t)
	if _, err := Execute(ctx, db, specs[0]); err != nil {
		t.Fatal(err)
	}
	var phases []string
	rest := slices.Clone(specs[1:])
	for i := range rest {
		rest[i].Phase = func(what string) { phases = append(phases, what) }
	}
	outs, err := Serial(ctx, db, rest, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 3 {
		t.Fatalf("%d outcomes, want 3", len(outs))
	}
	for i, o := range outs {
		w := want[i+1]
		if o.RunID != w.RunID || o.Digest != w.Digest {
			t.Errorf("run %d: %s digest %s, alone %s %s", i, o.RunID, o.Digest, w.RunID, w.Digest)
		}
		alone, err := db.RecomputeMetrics(ctx, o.RunID)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range analysis.MetricNames {
			g, gok := o.Metrics.Value(name)
			a, aok := alone.Value(name)
			// Sums of floats may be added in another order by another query: 1e-9
			// relative, far above the ~1e-15 such orders change and far below any change
			// of a counted event.
			if gok != aok || (gok && math.Abs(g-a) > 1e-9*math.Max(1, math.Abs(a))) {
				t.Errorf("run %s: %s = %v (%v) from Serial, %v (%v) read alone", o.RunID, name, g, gok, a, aok)
			}
		}
	}
	if want := []string{"computing the metrics", "committing the trace", "computing the metrics", "committing the trace", "computing the metrics", "committing the trace"}; !slices.Equal(phases, want) {
		t.Errorf("phases %q, want %q", phases, want)
	}
}

// watchOverlap holds the finish of specs[0] until specs[1]'s simulator reports progress (for
// at most a minute), and returns whether it did: whether run 1 was simulating while run 0
// was still to be finished.
func watchOverlap(t *testing.T, specs []Spec) func() bool {
	second := make(chan struct{})
	var once, overlapped atomic.Bool
	specs[1].Progress = func(int, int) {
		if once.CompareAndSwap(false, true) {
			close(second)
		}
	}
	beforeFinish = func(i int) {
		if i != 0 {
			return
		}
		select {
		case <-second:
			overlapped.Store(true)
		case <-time.After(time.Minute):
		}
	}
	t.Cleanup(func() { beforeFinish = nil })
	return overlapped.Load
}

// A worker starts its next run's simulation while the run before is still being finished
// (committed, checkpointed): with one worker, the finish of the first run waits until the
// second run's simulator reports progress, which it could never do if the worker waited for
// the first run to be finished. Every run is still stored whole, with its own digest.
func TestBatchSimulatesWhileFinishing(t *testing.T) {
	specs := batchSpecs(t)[:3]
	_, want := executeSerially(t, specs)
	overlapped := watchOverlap(t, specs)
	into := createFileDB(t, "into.duckdb")
	res, err := Batch{Workers: 1, Into: into}.Run(context.Background(), specs)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if !overlapped() {
		t.Error("the first run was finished before the second run's simulation started; want the two to overlap")
	}
	for i, o := range res.Outcomes {
		if !res.Ran[i] || o.Digest != want[i].Digest {
			t.Errorf("spec %d: ran %v, digest %s; alone %s", i, res.Ran[i], o.Digest, want[i].Digest)
		}
	}
	runs, err := analysis.ListRuns(context.Background(), into)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(specs) {
		t.Fatalf("the database holds %d runs, want %d", len(runs), len(specs))
	}
}

// Serial into a database simulates a run while the one before is committed, and returns
// every run, in order, as run alone.
func TestSerialSimulatesWhileFinishing(t *testing.T) {
	specs := batchSpecs(t)[:3]
	_, want := executeSerially(t, specs)
	overlapped := watchOverlap(t, specs)
	db := createFileDB(t, "serial.duckdb")
	var order []int
	outs, err := Serial(context.Background(), db, specs, func(i int) { order = append(order, i) })
	if err != nil {
		t.Fatal(err)
	}
	if !overlapped() {
		t.Error("the first run was committed before the second run's simulation started; want the two to overlap")
	}
	if !slices.Equal(order, []int{0, 1, 2}) || len(outs) != len(specs) {
		t.Fatalf("done told %v, %d outcomes; want [0 1 2] and 3", order, len(outs))
	}
	for i, o := range outs {
		if o.RunID != specs[i].RunID || o.Digest != want[i].Digest {
			t.Errorf("outcome %d: run %s digest %s; want %s %s", i, o.RunID, o.Digest, specs[i].RunID, want[i].Digest)
		}
	}
}
