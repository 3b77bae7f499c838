//go:build duckdb_arrow

package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/metric/compute"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// Tests of this package that need simulated runs in a database load them through Spec and
// Execute, a test's version of package pipeline's (which imports this package, so these
// tests cannot): simulate, load while simulating, store the runs row, read the metrics.
type Spec struct {
	Scenario *scenarios.Scenario
	Seed     uint64
	RunID    string // "" = RunID(scenario name, seed)
	Version  string
}

func Execute(ctx context.Context, db *DB, spec Spec) (Outcome, error) {
	s := spec.Scenario
	out := Outcome{RunID: spec.RunID, Seed: spec.Seed, Status: traces.StatusComplete}
	if out.RunID == "" {
		out.RunID = RunID(s.Name, spec.Seed)
	}
	start := time.Now()
	load, err := db.Load(ctx, out.RunID, traces.ScenarioOptions(s))
	if err != nil {
		return out, err
	}
	res, simErr := sim.Run(ctx, s, spec.Seed, load, sim.Options{Check: true})
	out.Events, out.Wall = res.Events, time.Since(start)
	run := traces.Run{RunID: out.RunID, Scenario: s.Name, Seed: spec.Seed, Config: string(s.JSON()), ConfigHash: s.Hash(),
		Version: spec.Version, Events: res.Events, Status: out.Status, WallSeconds: out.Wall.Seconds()}
	if err := load.Finish(run); err != nil {
		return out, err
	}
	if simErr != nil || len(res.Violations) > 0 {
		return out, fmt.Errorf("run %s: %v %v", out.RunID, simErr, res.Violations)
	}
	if out.Metrics, err = db.Metrics(ctx, out.RunID); err != nil {
		return out, err
	}
	out.Digest = load.Digest()
	return out, nil
}

// LoadCollector loads the records of c as the run runID, table by table in Collector.Replay
// order, with the options of the scenario in run.Config when it holds one.
func LoadCollector(db *DB, runID string, c *record.Collector, run traces.Run) error {
	var opts traces.Options
	if run.Config != "" {
		var s scenarios.Scenario
		if err := json.Unmarshal([]byte(run.Config), &s); err == nil {
			opts = traces.ScenarioOptions(&s)
		}
	}
	l, err := db.Load(context.Background(), runID, opts)
	if err != nil {
		return err
	}
	c.Replay(l)
	if err := l.Finish(run); err != nil {
		return err
	}
	// Records loaded without their tables: computed from the stored records, as an
	// import's are.
	return db.fillMetrics(context.Background())
}

// simulateLive runs seed of s into db as run runID the way `mayday run` stores a run
// (package pipeline): the records go to the database and to a metric/compute.Sink at once,
// and the sink's metrics row and derived tables are stored with the run, so nothing is
// replayed from the stored records. The replay computes the same tables and row
// (TestComputedMetricsEqualViewsOnExamples holds them equal); runs whose sink gives up
// (compute.ErrOrder, ErrTooLarge) have theirs computed from the stored records, as in
// pipeline. check turns the simulator's invariant checker on.
func simulateLive(t testing.TB, db *DB, s *scenarios.Scenario, seed uint64, runID string, check bool) sim.Result {
	t.Helper()
	res, err := simulateLiveFinish(t, db, s, seed, runID, check)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// simulateLiveFinish is simulateLive, returning the error the load's Finish returned.
func simulateLiveFinish(t testing.TB, db *DB, s *scenarios.Scenario, seed uint64, runID string, check bool) (sim.Result, error) {
	t.Helper()
	ctx := context.Background()
	opts, co := sinkOptions(t, s)
	load, err := db.Load(ctx, runID, opts)
	if err != nil {
		t.Fatal(err)
	}
	co.Investigations, co.Tables = s.Workload.Investigations, true
	sink := compute.New(co)
	res, simErr := sim.Run(ctx, s, seed, record.Tee{load, sink}, sim.Options{Check: check})
	row, rowErr := sink.Finish(res.Events)
	switch {
	case rowErr == nil:
		m, err := NewMetrics(runID, row.Values, row.TerminationReasons, row.Currency)
		if err != nil {
			t.Fatal(err)
		}
		load.SetMetrics(m)
		load.SetTables(sink.Tables(runID))
	case !errors.Is(rowErr, compute.ErrOrder) && !errors.Is(rowErr, compute.ErrTooLarge):
		t.Fatalf("run %s: %v", runID, rowErr)
	}
	ferr := load.Finish(traces.Run{RunID: runID, Scenario: s.Name, Seed: seed, Config: string(s.JSON()),
		ConfigHash: s.Hash(), Events: res.Events, Status: traces.StatusComplete})
	if simErr != nil || len(res.Violations) > 0 {
		t.Fatalf("run %s: %v %v", runID, simErr, res.Violations)
	}
	return res, ferr
}

// simulatedMetrics runs seed of s into a metric/compute.Sink (and into extra), as `mayday
// run --no-trace` does, and returns its metrics row: the row simulateLive stores, without
// the cost of a trace, for tests that read nothing but metrics.
func simulatedMetrics(t testing.TB, s *scenarios.Scenario, seed uint64, runID string, extra ...record.Sink) Metrics {
	t.Helper()
	_, co := sinkOptions(t, s)
	co.Investigations = s.Workload.Investigations
	sink := compute.New(co)
	res, err := sim.Run(context.Background(), s, seed, append(record.Tee{sink}, extra...), sim.Options{})
	if err != nil {
		t.Fatalf("run %s: %v", runID, err)
	}
	row, err := sink.Finish(res.Events)
	if err != nil {
		t.Fatalf("run %s: %v", runID, err)
	}
	m, err := NewMetrics(runID, row.Values, row.TerminationReasons, row.Currency)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
