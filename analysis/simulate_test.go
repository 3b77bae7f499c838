//go:build duckdb_arrow

package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

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
