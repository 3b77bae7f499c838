//go:build duckdb_arrow

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/metric/compute"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// Spec is one simulation run to execute into a database: a job of a batch.
type Spec struct {
	Scenario *scenarios.Scenario
	Seed     uint64
	RunID    string // "" = analysis.RunID(scenario name, seed)
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

// runID is the run_id the spec's run is stored under.
func (s Spec) runID() string {
	if s.RunID != "" {
		return s.RunID
	}
	return analysis.RunID(s.Scenario.Name, s.Seed)
}

// Execute simulates spec into db: the simulator's records stream through the Arrow writer into
// DuckDB while the simulation runs, and at once into package metric/compute, which computes
// the metrics row the metrics view gives for the stored run (a test in package analysis
// holds the two equal), so the view is not run after the load. A cancelled ctx stops the
// simulation and leaves a consistent run whose status is `partial`. With db nil nothing is
// stored: the records stream into the digest and into metric/compute (see Compute).
func Execute(ctx context.Context, db *analysis.DB, spec Spec) (analysis.Outcome, error) {
	if db == nil {
		return Compute(ctx, spec)
	}
	return execute(ctx, db, spec)
}

// Compute simulates spec without a database: the records stream into the digest (the one a
// trace of the run would hold) and into a metric/compute.Sink, whose row is the outcome's
// metrics, the metrics view's row for the same records (a test in package analysis holds
// the two equal). A cancelled ctx stops the simulation; the outcome is then `partial`.
func Compute(ctx context.Context, spec Spec) (analysis.Outcome, error) {
	s := spec.Scenario
	out := analysis.Outcome{RunID: spec.runID(), Seed: spec.Seed}
	start := time.Now()
	opts := traces.ScenarioOptions(s)
	opts.Secrets = append(opts.Secrets, spec.Secrets...)
	dig := traces.NewDigester(opts)
	sink, err := newSink(s, opts, 0) // no trace to fall back on: the sink keeps what it needs
	if err != nil {
		return out, err
	}
	// The digest (its redaction and encoding) and the metrics take the records on
	// goroutines of their own, and the digest hashes on another: the simulator's goroutine
	// only copies the records, so the simulation, the digest and the metrics share the
	// cores.
	async := record.NewAsync(dig, sink)
	res, err := sim.Run(ctx, s, spec.Seed, async, sim.Options{Progress: spec.Progress, Check: true})
	async.Close()
	out.Events, out.Wall = res.Events, time.Since(start)
	out.Status = "complete"
	if res.Partial {
		out.Status = "partial"
	}
	if err != nil {
		return out, fmt.Errorf("run %s: %w", out.RunID, err)
	}
	if len(res.Violations) > 0 {
		return out, fmt.Errorf("run %s (seed %d): invariant violated: %s", out.RunID, spec.Seed, res.Violations[0])
	}
	out.Digest = dig.Sum()
	if spec.Phase != nil {
		spec.Phase("computing the metrics")
	}
	if out.Metrics, err = metricsOf(sink, out.RunID, res.Events); err != nil {
		return out, fmt.Errorf("run %s: metrics: %w", out.RunID, err)
	}
	return out, nil
}

// execute is Execute into a database.
func execute(ctx context.Context, db *analysis.DB, spec Spec) (analysis.Outcome, error) {
	r, err := simulate(ctx, db, spec)
	if err != nil {
		return r.out, err
	}
	return r.finish(ctx)
}

// simulated is a run whose simulation has ended and whose records are still going into the
// database: its lanes may still be inserting, nothing is committed.
type simulated struct {
	db     *analysis.DB
	spec   Spec
	out    analysis.Outcome
	sink   *compute.Sink
	load   *analysis.Load
	res    sim.Result
	simErr error
}

// simulate runs the simulation of spec with its records streaming into db, and returns as
// soon as the simulation has ended: finish commits the run and computes its metrics. A
// batch starts its worker's next simulation in between, while DuckDB inserts the rest.
func simulate(ctx context.Context, db *analysis.DB, spec Spec) (*simulated, error) {
	s := spec.Scenario
	start := time.Now()
	r := &simulated{db: db, spec: spec, out: analysis.Outcome{RunID: spec.runID(), Seed: spec.Seed}}
	opts := traces.ScenarioOptions(s)
	opts.Secrets = append(opts.Secrets, spec.Secrets...)
	var err error
	if r.sink, err = newSink(s, opts, maxHeld); err != nil {
		return r, err
	}
	if r.load, err = db.Load(context.WithoutCancel(ctx), r.out.RunID, opts); err != nil {
		return r, err
	}
	// The metrics take the records on a goroutine of their own, while the simulator's
	// goroutine builds the Arrow batches and the load's lanes insert them.
	async := record.NewAsync(r.sink)
	r.res, r.simErr = sim.Run(ctx, s, spec.Seed, record.Tee{r.load, async}, sim.Options{Progress: spec.Progress, Check: true})
	async.Close()
	r.out.Events = r.res.Events
	r.out.Status = "complete"
	if r.res.Partial {
		r.out.Status = "partial"
	}
	r.out.Wall = time.Since(start)
	return r, nil
}

// finish commits the run simulated into its database and computes its metrics; ctx is the
// run's, for its metrics' fallback to the views.
func (r *simulated) finish(ctx context.Context) (analysis.Outcome, error) {
	s, spec, out, res := r.spec.Scenario, r.spec, r.out, r.res
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
	// The sink has every record once the simulation has ended: its row is stored with the
	// run, in the transaction of the runs row.
	phase("computing the metrics")
	metrics, merr := metricsOf(r.sink, out.RunID, res.Events)
	fallback := errors.Is(merr, compute.ErrOrder) || errors.Is(merr, compute.ErrTooLarge)
	if merr == nil {
		r.load.SetMetrics(metrics)
		r.load.SetTables(r.sink.Tables(out.RunID))
	}
	phase("committing the trace")
	if err := r.load.Finish(run); err != nil {
		return out, fmt.Errorf("run %s: loading traces: %w", out.RunID, err)
	}
	if r.simErr != nil {
		return out, fmt.Errorf("run %s: %w", out.RunID, r.simErr)
	}
	if len(res.Violations) > 0 {
		return out, fmt.Errorf("run %s (seed %d): invariant violated: %s", out.RunID, spec.Seed, res.Violations[0])
	}
	out.Digest = r.load.Digest()
	out.Metrics = metrics
	if fallback {
		// Records the sink cannot place (not what the simulator writes), or more open
		// work than it keeps: the views measure the stored run, and store its row.
		phase("computing the metrics from the stored trace")
		out.Metrics, merr = r.db.Metrics(context.WithoutCancel(ctx), out.RunID)
	}
	if merr != nil {
		return out, fmt.Errorf("run %s: metrics: %w", out.RunID, merr)
	}
	return out, nil
}

// newSink returns the metric/compute.Sink of a run of s whose trace is written with opts:
// it prices the run from its config as the trace stores it (redacted with opts), and
// redacts termination reasons and model names as the trace does, so that its row is the
// metrics view's row of that trace. The redactor is its own, as the sink reads on a
// goroutine of its own. held is its compute.Options.MaxHeld: maxHeld for a traced run,
// which can ask the views instead, 0 (no bound) for a run without a trace. A traced run's
// sink computes the derived tables too (compute.Options.Tables), which the run stores.
func newSink(s *scenarios.Scenario, opts traces.Options, held int64) (*compute.Sink, error) {
	red := traces.NewRedactor(opts.RedactKey, opts.Redact, opts.Secrets)
	prices, err := compute.StoredPrices(red.JSON(string(s.JSON())))
	if err != nil {
		return nil, err
	}
	return compute.New(compute.Options{Prices: prices, Redact: red.Text, Guards: compute.GuardsOf(s),
		Investigations: s.Workload.Investigations, MaxHeld: held, Tables: held > 0}), nil
}

// maxHeld bounds the records a traced run's sink holds for investigations still open
// (compute.Options.MaxHeld). Measured at their most: research-fleet 97,585 at 10,000
// investigations, 199,683 at 100,000, 1,083,847 at 100,000 with ten times the arrival rate
// and the capacity to match. An overloaded fleet, whose backlog grows all run long, holds
// nearly its whole trace: it passes the bound, and its metrics come from the views of the
// stored trace instead, which spill to disk (research-fleet at 100,000 investigations and
// ten times the rate on the shipped capacity peaks at 975 MiB that way, 1.6 GiB without
// the bound).
var maxHeld int64 = 1 << 21 // a variable for a test

// metricsOf is the metrics row sink computed for run runID of events events.
func metricsOf(sink *compute.Sink, runID string, events int64) (analysis.Metrics, error) {
	row, err := sink.Finish(events)
	if err != nil {
		return analysis.Metrics{}, err
	}
	return analysis.NewMetrics(runID, row.Values, row.TerminationReasons, row.Currency)
}

// Serial executes specs one after another into db (nil: none, see Execute) and returns the
// outcomes of the runs that ran, in order; after each run, done (when set) is told its index.
// Into a database, a run's simulation starts as soon as the one before has ended, while
// that run is committed on the side (as a batch's worker does), so at most two runs are
// under way: one simulating, one committing; done(i) is told once run i is committed. A
// cancelled ctx cuts the run under way short (it is stored as partial) and starts no
// other. The first run that fails stops it and is returned.
func Serial(ctx context.Context, db *analysis.DB, specs []Spec, done func(i int)) ([]analysis.Outcome, error) {
	var outs []analysis.Outcome
	if db == nil {
		for i := 0; i < len(specs) && ctx.Err() == nil; i++ {
			out, err := Compute(ctx, specs[i])
			if err != nil {
				return nil, err
			}
			outs = append(outs, out)
			if done != nil {
				done(i)
			}
		}
		return outs, nil
	}
	type finished struct {
		out analysis.Outcome
		err error
	}
	var tail chan finished // the run before, being committed
	collect := func(i int) error {
		f := <-tail
		tail = nil
		if f.err != nil {
			return f.err
		}
		outs = append(outs, f.out)
		if done != nil {
			done(i)
		}
		return nil
	}
	i := 0
	for ; i < len(specs) && ctx.Err() == nil; i++ {
		r, err := simulate(ctx, db, specs[i])
		if tail != nil {
			if ferr := collect(i - 1); ferr != nil {
				if err == nil {
					r.load.Abandon()
				}
				return nil, ferr
			}
		}
		if err != nil {
			return nil, err
		}
		tail = make(chan finished, 1)
		go func(i int, ch chan<- finished) {
			if beforeFinish != nil {
				beforeFinish(i)
			}
			out, err := r.finish(ctx)
			ch <- finished{out, err}
		}(i, tail)
	}
	if tail != nil {
		if err := collect(i - 1); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// Seeds is the specs of seeds seed, seed+1, ..., seed+n-1 of s.
func Seeds(s *scenarios.Scenario, seed uint64, n int, version string) []Spec {
	specs := make([]Spec, n)
	for i := range specs {
		specs[i] = Spec{Scenario: s, Seed: seed + uint64(i), Version: version}
	}
	return specs
}
