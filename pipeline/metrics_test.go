//go:build duckdb_arrow

package pipeline

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/scenarios"
)

// sameAsView fails t on every metric where a traced run's outcome differs from the row
// metrics_recomputed gives the run it stored (the definition): NULL only for NULL, counts
// and ratios of counts exactly up to 1e-9 relative (sums of floats are added in another
// order than DuckDB's, which changes only their last bits), the same termination reasons
// and currency. The row the metrics view reads (stored with the run) is the outcome's,
// exactly.
func sameAsView(t *testing.T, db *analysis.DB, out analysis.Outcome) {
	t.Helper()
	want, err := db.RecomputeMetrics(context.Background(), out.RunID)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := db.Metrics(context.Background(), out.RunID)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range analysis.MetricNames {
		g, gok := out.Metrics.Value(name)
		w, wok := want.Value(name)
		if gok != wok || (gok && math.Abs(g-w) > 1e-9*math.Max(1, math.Max(math.Abs(g), math.Abs(w)))) {
			t.Errorf("run %s: %s = %v (defined %v) in the outcome, %v (defined %v) recomputed from the trace", out.RunID, name, g, gok, w, wok)
		}
		if s, sok := stored.Value(name); sok != gok || (sok && s != g) {
			t.Errorf("run %s: %s = %v (defined %v) in the outcome, %v (defined %v) stored with the run", out.RunID, name, g, gok, s, sok)
		}
	}
	for what, m := range map[string]analysis.Metrics{"recomputed": want, "stored": stored} {
		if !maps.Equal(out.Metrics.TerminationReasons, m.TerminationReasons) {
			t.Errorf("run %s: termination reasons %v in the outcome, %v %s", out.RunID, out.Metrics.TerminationReasons, m.TerminationReasons, what)
		}
		if out.Metrics.Currency != m.Currency {
			t.Errorf("run %s: currency %q in the outcome, %q %s", out.RunID, out.Metrics.Currency, m.Currency, what)
		}
	}
}

// A traced run computes its metrics in Go while it loads: on every embedded example, the
// outcome's metrics are the metrics view's row of the run it stored, with the same records,
// redaction and stored config (a sweep's extra secrets included), and its digest is the
// digest of the same run without a trace.
func TestExecuteMetricsEqualView(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	ctx := context.Background()
	db := openTestDB(t)
	for _, info := range scenarios.List() {
		s, err := scenarios.Load(info.Name, []string{"workload.investigations=150"})
		if err != nil {
			t.Fatal(err)
		}
		spec := Spec{Scenario: s, Seed: s.Seed, RunID: info.Name, Secrets: []string{s.Workload.Model}}
		out, err := Execute(ctx, db, spec)
		if err != nil {
			t.Fatal(err)
		}
		sameAsView(t, db, out)
		bare, err := Compute(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		if bare.Digest != out.Digest {
			t.Errorf("%s: digest %s without a trace, %s with one", info.Name, bare.Digest, out.Digest)
		}
	}
}

// An interrupted traced run (stored as partial, with investigations in flight) has the
// metrics the view gives the partial run it stored.
func TestExecutePartialMetricsEqualView(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	db := openTestDB(t)
	for i, name := range []string{"research-fleet", "shared-outage", "worker-crashes"} {
		s, err := scenarios.Load(name, []string{"workload.investigations=2000"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		spec := Spec{Scenario: s, Seed: s.Seed, RunID: fmt.Sprintf("partial-%d", i),
			Progress: func(done, total int) {
				if done >= total/3 {
					cancel()
				}
			}}
		out, err := Execute(ctx, db, spec)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if out.Status != "partial" {
			t.Fatalf("%s: status %q, want partial", name, out.Status)
		}
		sameAsView(t, db, out)
	}
}

// A batch into one database, and one into a temporary database per run, give each run the
// metrics the view gives it.
func TestBatchMetricsEqualView(t *testing.T) {
	ctx := context.Background()
	specs := batchSpecs(t)
	db := openTestDB(t)
	res, err := Batch{Workers: 2, Into: db}.Run(ctx, specs)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	for i, o := range res.Outcomes {
		if !res.Ran[i] {
			t.Fatalf("spec %d did not run", i)
		}
		sameAsView(t, db, o)
	}
	apart, err := Batch{Workers: 2, Dir: t.TempDir()}.Run(ctx, specs)
	if err != nil {
		t.Fatal(err)
	}
	defer apart.Close()
	for i, o := range apart.Outcomes {
		if !apart.Ran[i] {
			t.Fatalf("spec %d did not run", i)
		}
		if o.Metrics.Get("completion_rate") != res.Outcomes[i].Metrics.Get("completion_rate") || o.Digest != res.Outcomes[i].Digest {
			t.Errorf("spec %d: completion_rate %v digest %s apart, %v %s into one database", i,
				o.Metrics.Get("completion_rate"), o.Digest, res.Outcomes[i].Metrics.Get("completion_rate"), res.Outcomes[i].Digest)
		}
	}
}

// A traced run whose sink holds more records of open investigations than maxHeld takes its
// metrics from the view of the run it stored, and says so; a run within the bound does not.
func TestExecuteMetricsPastMaxHeldFromTheView(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	ctx := context.Background()
	db := openTestDB(t)
	s, err := scenarios.Load("research-fleet", []string{"workload.investigations=150"})
	if err != nil {
		t.Fatal(err)
	}
	defer func(n int64) { maxHeld = n }(maxHeld)
	for _, c := range []struct {
		held     int64
		fallback bool
	}{{8, true}, {1 << 40, false}} {
		maxHeld = c.held
		var phases []string
		spec := Spec{Scenario: s, Seed: s.Seed, RunID: fmt.Sprint("held-", c.held), Phase: func(p string) { phases = append(phases, p) }}
		out, err := Execute(ctx, db, spec)
		if err != nil {
			t.Fatal(err)
		}
		sameAsView(t, db, out)
		if got := slices.Contains(phases, "computing the metrics from the stored trace"); got != c.fallback {
			t.Errorf("maxHeld %d: phases %q; want the view's phase %v", c.held, phases, c.fallback)
		}
		// Without a trace there is no view to ask: the bound does not apply.
		if _, err := Compute(ctx, Spec{Scenario: s, Seed: s.Seed}); err != nil {
			t.Errorf("maxHeld %d: a run without a trace: %v", c.held, err)
		}
	}
}
