//go:build duckdb_arrow

package analysis

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/traces"
)

// Spec is one simulation run to execute into a database.
type Spec struct {
	Scenario *scenarios.Scenario
	Seed     uint64
	RunID    string // "" = RunID(scenario name, seed)
	Version  string // the binary's version, stored in runs.version
	Progress func(done, total int)
	// Phase, when set, is told each step after the simulation (committing the trace,
	// computing the metrics), so that no step of a long run is silent.
	Phase func(what string)
	// Secrets are more known secret values to scrub from the traces, on top of the
	// scenario's own: a sweep passes its base scenario's, so a secret that a grid point
	// replaces under its key is still scrubbed where it was reused (a model name, say).
	Secrets []string
}

// Outcome is what Execute measured.
type Outcome struct {
	RunID   string
	Seed    uint64
	Digest  string
	Status  string // complete | partial
	Sim     sim.Result
	Wall    time.Duration
	Metrics Metrics
}

// RunID names the run of a scenario with a seed: "<name>-s<seed>".
func RunID(name string, seed uint64) string { return name + "-s" + strconv.FormatUint(seed, 10) }

// Execute simulates spec into db: the simulator's records stream through the Arrow writer into
// DuckDB while the simulation runs, then the runs row and the metrics are read back. A
// cancelled ctx stops the simulation and leaves a consistent run whose status is `partial`.
func Execute(ctx context.Context, db *DB, spec Spec) (Outcome, error) {
	s := spec.Scenario
	out := Outcome{RunID: spec.RunID, Seed: spec.Seed}
	if out.RunID == "" {
		out.RunID = RunID(s.Name, spec.Seed)
	}
	start := time.Now()
	opts := ScenarioOptions(s)
	opts.Secrets = append(opts.Secrets, spec.Secrets...)
	load, err := db.Load(context.WithoutCancel(ctx), out.RunID, opts)
	if err != nil {
		return out, err
	}
	res, simErr := sim.Run(ctx, s, spec.Seed, load, sim.Options{Progress: spec.Progress, Check: true})
	out.Sim = res
	out.Status = "complete"
	if res.Partial {
		out.Status = "partial"
	}
	out.Wall = time.Since(start)
	run := traces.Run{
		RunID:       out.RunID,
		Scenario:    s.Name,
		Seed:        spec.Seed,
		Config:      string(s.JSON()),
		ConfigHash:  s.Hash(),
		Version:     spec.Version,
		Events:      res.Events,
		Status:      out.Status,
		WallSeconds: out.Wall.Seconds(),
	}
	phase := spec.Phase
	if phase == nil {
		phase = func(string) {}
	}
	phase("committing the trace")
	if err := load.Finish(run); err != nil {
		return out, fmt.Errorf("run %s: loading traces: %w", out.RunID, err)
	}
	if simErr != nil {
		return out, fmt.Errorf("run %s: %w", out.RunID, simErr)
	}
	if len(res.Violations) > 0 {
		return out, fmt.Errorf("run %s (seed %d): invariant violated: %s", out.RunID, spec.Seed, res.Violations[0])
	}
	phase("computing the metrics")
	m, err := db.Metrics(context.WithoutCancel(ctx), out.RunID)
	if err != nil {
		return out, fmt.Errorf("run %s: metrics: %w", out.RunID, err)
	}
	out.Metrics = m
	out.Digest = load.Digest()
	return out, nil
}
