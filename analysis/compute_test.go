//go:build duckdb_arrow

package analysis

import (
	"context"
	"fmt"
	"maps"
	"math"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/metric/compute"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// The metrics package compute calculates in Go, from the record stream, are the metrics
// view's: these tests run scenarios through the simulator into a database and into a
// compute.Sink at once (the same records, in the same order) and hold the sink's row equal
// to `SELECT * FROM metrics`, metric by metric, NULL for NULL; and the digest of a
// traces.Digester (a run without a trace) equal to the trace's.

// computeRelTol is how far a float of the Go row may be from the view's, relative to the
// larger of the two (and absolute below 1). The counts, and every ratio of two counts, are
// computed from the same integers by the same one division, so they agree exactly; sums of
// floats (compute, money) are added up in another order than DuckDB's (per investigation,
// then over investigations), which changes only the last bits: after n additions of
// positive terms the rounding error is at most n·ε·sum, below 1e-10 of the sum for the
// n < 10^6 terms of these runs (ε = 2^-53 ≈ 1.1e-16). The same holds for the recovery
// curve's running product, whose thresholds absorb 1e-9.
const computeRelTol = 1e-9

// failer is what the helpers need of a *testing.T or a *rapid.T.
type failer interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
}

// sinkOptions are the trace options of a run of s and the metric/compute options it is
// computed with: priced and redacted as its trace is stored (pipeline's newSink).
func sinkOptions(t failer, s *scenarios.Scenario) (traces.Options, compute.Options) {
	t.Helper()
	opts := traces.ScenarioOptions(s)
	red := traces.NewRedactor(opts.RedactKey, opts.Redact, opts.Secrets)
	prices, err := compute.StoredPrices(red.JSON(string(s.JSON())))
	if err != nil {
		t.Fatal(err)
	}
	return opts, compute.Options{Prices: prices, Redact: red.Text, Guards: compute.GuardsOf(s)}
}

// simulateBoth runs seed of s into db under runID, into a compute.Sink and into extra, and
// returns the sink's row.
func simulateBoth(t failer, db *DB, s *scenarios.Scenario, seed uint64, runID string, extra ...record.Sink) compute.Row {
	t.Helper()
	opts, co := sinkOptions(t, s)
	load, err := db.Load(context.Background(), runID, opts)
	if err != nil {
		t.Fatal(err)
	}
	co.Tables = true
	sink := compute.New(co)
	dig := traces.NewDigester(opts)
	res, simErr := sim.Run(context.Background(), s, seed, append(record.Tee{load, sink, dig}, extra...), sim.Options{Check: true})
	row, rowErr := sink.Finish(res.Events)
	if rowErr == nil {
		// Stored as mayday run stores it: the metrics row and the tables, with the run.
		m, err := NewMetrics(runID, row.Values, row.TerminationReasons, row.Currency)
		if err != nil {
			t.Fatal(err)
		}
		load.SetMetrics(m)
		tables := sink.Tables(runID)
		load.SetTables(tables)
		liveTables.Store(runID, tables)
	}
	if err := load.Finish(traces.Run{RunID: runID, Scenario: s.Name, Seed: seed, Config: string(s.JSON()),
		ConfigHash: s.Hash(), Events: res.Events, Status: traces.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	if simErr != nil || len(res.Violations) > 0 {
		t.Fatalf("run %s: %v %v", runID, simErr, res.Violations)
	}
	// The digest of a run without a trace (traces.Digester) is the trace's.
	if got, want := dig.Sum(), load.Digest(); got != want {
		t.Errorf("run %s: digest %s without a trace, %s with one", runID, got, want)
	}
	if rowErr != nil {
		t.Fatalf("run %s: %v", runID, rowErr)
	}
	return row
}

// sameMetric reports whether the Go value got equals the view's want within computeRelTol,
// NaN (NULL) only for NaN.
func sameMetric(got, want float64) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.IsNaN(got) && math.IsNaN(want)
	}
	return math.Abs(got-want) <= computeRelTol*math.Max(1, math.Max(math.Abs(got), math.Abs(want)))
}

// liveTables holds the derived tables each simulateBoth run computed while it ran, by run id.
var liveTables sync.Map

// oracleDefined marks the databases whose oracle views are defined.
var oracleDefined sync.Map

// compareComputed fails t on every metric where row differs from the view's metrics of runID,
// and on every difference of its stored derived tables from the oracle's (derived_oracle_test.go)
// and of the tables a replay of its stored records computes from those computed live.
func compareComputed(t failer, db *DB, runID string, row compute.Row) {
	t.Helper()
	oracleOn(t, db)
	compareDerived(t, db, runID, heldToOracle())
	compareReplayed(t, db, runID)
	want, err := oracleMetrics(db, runID)
	if err != nil {
		t.Fatal(err)
	}
	compareRow(t, runID, row, want)
}

// compareComputedRuns is compareComputed of every run of rows, all in db, but for the
// replay (compareReplayed, called by the caller), with each oracle view evaluated once for
// them all: DuckDB does not push a filter on run_id into the oracle's views, so a view asked
// for one run costs as much as for all the runs db holds.
func compareComputedRuns(t failer, db *DB, ids []string, rows map[string]compute.Row) {
	t.Helper()
	oracleOn(t, db)
	compareDerivedRuns(t, db, ids, heldToOracle())
	all, err := db.queryMetrics(context.Background(), "oracle_metrics_recomputed", "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Metrics{}
	for _, m := range all {
		want[m.RunID] = m
	}
	for _, id := range ids {
		w, ok := want[id]
		if !ok {
			t.Errorf("no oracle metrics row for %s", id)
			continue
		}
		compareRow(t, id, rows[id], w)
	}
}

// compareReplayed fails t on every difference between the tables run runID's simulateBoth
// computed live and those a replay of its stored records computes.
func compareReplayed(t failer, db *DB, runID string) {
	t.Helper()
	if live, ok := liveTables.Load(runID); ok {
		replayed, _, err := db.deriveRun(context.Background(), runID)
		if err != nil {
			t.Fatal(err)
		}
		sameTables(t, runID, live.(compute.Tables), replayed)
	}
}

// compareRow fails t on every metric where row differs from the oracle's want.
func compareRow(t failer, runID string, row compute.Row, want Metrics) {
	t.Helper()
	for i, m := range metric.All {
		w, _ := want.Value(m.Name)
		if g := row.Values[i]; !sameMetric(g, w) {
			t.Errorf("%s: %s = %v computed in Go, %v in the metrics view", runID, m.Name, g, w)
		}
	}
	if !maps.Equal(row.TerminationReasons, want.TerminationReasons) {
		t.Errorf("%s: termination reasons %v computed in Go, %v in the view", runID, row.TerminationReasons, want.TerminationReasons)
	}
	if row.Currency != want.Currency {
		t.Errorf("%s: currency %q computed in Go, %q in the view", runID, row.Currency, want.Currency)
	}
}

// exampleRun is a scenario and the keys set on it.
type exampleRun struct {
	name string
	sets []string
}

// exampleRuns is every embedded example at 150 investigations, then extra.
func exampleRuns(extra ...exampleRun) []exampleRun {
	var runs []exampleRun
	for _, info := range scenarios.List() {
		runs = append(runs, exampleRun{info.Name, []string{"workload.investigations=150"}})
	}
	return append(runs, extra...)
}

// exampleSet is the runs of exampleRuns and of the test runs that exercise the corners (an
// outage on the model, in-flight work), simulated once into one database for the tests that
// compare what Go computes of them with the views and the oracle (they only read it).
type exampleSet struct {
	db   *DB
	ids  []string               // in simulation order
	rows map[string]compute.Row // the compute.Sink's row, by run id
	more map[string]derivedMore // the accumulators of derived_more_test.go, by run id
	done bool                   // every run simulated
}

var (
	examplesOnce sync.Once
	examples     exampleSet
)

// simulatedExamples returns the example runs, simulating them on the first call (failing
// the test that makes it on a failure, and every later caller with it).
func simulatedExamples(t *testing.T) *exampleSet {
	t.Helper()
	examplesOnce.Do(func() {
		// Open until the test binary ends: several tests read it.
		db, err := Create("")
		if err != nil {
			t.Fatal(err)
		}
		atExit(func() { db.Close() })
		examples = exampleSet{db: db, rows: map[string]compute.Row{}, more: map[string]derivedMore{}}
		runs := exampleRuns(
			exampleRun{"research-fleet", []string{"workload.investigations=400", "workload.arrival={uniform: 3h}"}},
			exampleRun{"research-fleet", []string{"workload.investigations=400", "workload.arrival={uniform: 3h}", "faults[2].tool=model", "faults[2].for=20m"}},
			exampleRun{"shared-outage", []string{"workload.investigations=600"}},
			exampleRun{"lost-responses", []string{"workload.investigations=300", "horizon=40m", "recovery.inspect_before_retry=false"}})
		for i, r := range runs {
			s, err := scenarios.Load(r.name, r.sets)
			if err != nil {
				t.Fatal(err)
			}
			runID := fmt.Sprintf("%s-%d", r.name, i)
			d := newDerivedMore(t, s)
			examples.rows[runID] = simulateBoth(t, db, s, s.Seed+uint64(i), runID, d.sink())
			examples.more[runID] = d
			examples.ids = append(examples.ids, runID)
		}
		examples.done = true
	})
	if !examples.done {
		t.Fatal("the example runs did not simulate (see the test that ran them first)")
	}
	return &examples
}

// TestComputedMetricsEqualViewsOnExamples: every embedded example, small, and the test runs that exercise the corners (an outage on the model, in-flight work).
func TestComputedMetricsEqualViewsOnExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	ex := simulatedExamples(t)
	for _, id := range ex.ids {
		compareReplayed(t, ex.db, id)
	}
	compareComputedRuns(t, ex.db, ex.ids, ex.rows)
}

// maxComputeEvents bounds the size model's estimate of a generated scenario, so that one
// rapid case runs in well under a second.
const maxComputeEvents = 20_000

// TestComputedMetricsEqualViewsOnGeneratedScenarios: scenarios written by the key tree's
// generator (every key the format has may appear), drawn by rapid. Each case simulates its
// scenario into one database shared by the cases and checks what needs no oracle (the
// invariants, the digest without a trace, the tables a replay computes); the oracle's
// views, whose cost is mostly fixed per query (about a second for a small run), are then
// evaluated once for every case's run (compareComputedRuns). A run they fail is named with
// its seed and scenario, which `mayday run` reproduces.
func TestComputedMetricsEqualViewsOnGeneratedScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	db := openTestDB(t)
	var ids []string
	rows := map[string]compute.Row{}
	drawn := map[string]string{}
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		// Most generated files are refused by Parse or too large: draw until one is neither,
		// so that each case compares a run.
		var s *scenarios.Scenario
		var data []byte
		for s == nil {
			data = scenarios.Generate(func(k int) int { return rapid.IntRange(0, k-1).Draw(rt, "choice") })
			g, err := scenarios.Parse("generated.yaml", data, nil)
			if err == nil && g.Validate() == nil && scenarios.EstimateEvents(g).Total <= maxComputeEvents {
				s = g
			}
		}
		seed := rapid.Uint64Range(1, 1000).Draw(rt, "seed")
		n++
		runID := fmt.Sprintf("generated-%d", n)
		row := simulateBoth(rt, db, s, seed, runID)
		compareReplayed(rt, db, runID)
		ids, rows[runID], drawn[runID] = append(ids, runID), row, fmt.Sprintf("seed %d of\n%s", seed, data)
	})
	compareComputedRuns(t, db, ids, rows)
	if t.Failed() {
		for _, id := range ids {
			t.Logf("%s: %s", id, drawn[id])
		}
	}
}
