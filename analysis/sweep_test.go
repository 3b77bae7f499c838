//go:build duckdb_arrow

package analysis

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

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
			specs = append(specs, Spec{Scenario: s, Seed: seed, RunID: SweepRunID(s.Name, p, seed)})
		}
	}
	return specs
}

// sweepParams gives the specs of batchSpecs their grid points: three seeds per point.
func sweepParams(specs []Spec) []SweepParam {
	var ps []SweepParam
	for i, s := range specs {
		ps = append(ps, SweepParam{RunID: s.RunID, Point: i / 3, Path: "recovery.retry.max_attempts", Value: []string{"1", "4"}[i/3]})
	}
	return ps
}

// fingerprints returns, per table and run, the row count and a hash over the rows in stored
// (rowid) order, every column but runs.wall_seconds (a wall clock): two databases with the
// same fingerprints hold the same rows, each run's rows in the same order.
func fingerprints(t *testing.T, db *DB) map[string]string {
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
			ident(table) + ") GROUP BY run_id"
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

func queryStringsDB(ctx context.Context, db *DB, q string) ([]string, error) {
	conn, err := db.SQL().Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return queryStrings(ctx, conn, q)
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

// ListRuns gives a sweep's runs in grid order (point, seed) whatever order they were stored
// in, and leaves a run from outside the sweep where it was.
func TestListRunsGridOrder(t *testing.T) {
	ctx := context.Background()
	specs := batchSpecs(t)
	db := openTestDB(t)
	stored := []int{4, 1, 5, 0, 3, 2}
	for k, i := range stored {
		if _, err := Execute(ctx, db, specs[i]); err != nil {
			t.Fatal(err)
		}
		if k == 2 { // a run without a grid point, third in stored order
			if _, err := Execute(ctx, db, Spec{Scenario: specs[0].Scenario, Seed: 9, RunID: "outside"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := WriteSweepParams(ctx, db, sweepParams(specs)); err != nil {
		t.Fatal(err)
	}
	runs, err := ListRuns(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.RunID)
	}
	want := []string{specs[0].RunID, specs[1].RunID, specs[2].RunID, "outside", specs[3].RunID, specs[4].RunID, specs[5].RunID}
	if !slices.Equal(got, want) {
		t.Errorf("ListRuns: %v, want %v", got, want)
	}
}

// DropRun removes every row of one run from every table and leaves the others.
func TestDropRun(t *testing.T) {
	ctx := context.Background()
	specs := batchSpecs(t)[:2]
	db := openTestDB(t)
	for _, s := range specs {
		if _, err := Execute(ctx, db, s); err != nil {
			t.Fatal(err)
		}
	}
	before := fingerprints(t, db)
	if err := DropRun(ctx, db, specs[0].RunID); err != nil {
		t.Fatal(err)
	}
	after := fingerprints(t, db)
	kept := 0
	for k, v := range before {
		run := k[strings.IndexByte(k, '/')+1:]
		switch {
		case run == specs[0].RunID && after[k] != "":
			t.Errorf("%s left after DropRun: %s", k, after[k])
		case run == specs[1].RunID && after[k] != v:
			t.Errorf("%s changed by dropping another run: %s, was %s", k, after[k], v)
		case run == specs[1].RunID:
			kept++
		}
	}
	if kept < 5 {
		t.Errorf("only %d tables hold the kept run; want the trace tables", kept)
	}
}

// executeSerially runs specs one by one into a fresh database file, the reference a batch
// is compared with, and returns it (closed when the test ends) with their outcomes.
func executeSerially(t *testing.T, specs []Spec) (*DB, []Outcome) {
	t.Helper()
	db, err := Create(filepath.Join(t.TempDir(), "serial.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var out []Outcome
	for _, s := range specs {
		o, err := Execute(context.Background(), db, s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return db, out
}
