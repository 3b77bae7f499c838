//go:build duckdb_arrow

package hunt

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/pipeline"
	"github.com/mayday-sim/mayday/reports"
	"github.com/mayday-sim/mayday/scenarios"
)

// Simulate is the Evaluator that runs each run as a simulation of base with the run's
// overrides (scenarios.Scenario.With), through pipeline.Batch on workers workers (0 = every
// core), keeping no trace: each run's metrics are computed in Go as it runs (the metric
// views' definitions; pipeline.Compute), so dir is not used. A run's violations are its failed expectations (reports.CheckRuns, as `mayday check`
// evaluates them), a broken invariant, and with liveness > 0 a liveness failure. done, when
// set, is told each finished run.
func Simulate(base *scenarios.Scenario, liveness time.Duration, version string, workers int, dir string, done func()) Evaluator {
	return func(ctx context.Context, runs []Run) ([]Outcome, error) {
		outs := make([]Outcome, len(runs))
		var specs []pipeline.Spec
		var at []int // the run of each spec
		for i, r := range runs {
			s, err := base.With(r.Overrides...)
			if err != nil {
				// A draw the scenario refuses (a rule across keys the envelope's bounds do not
				// see) did not run: it shows nothing, and counts as not run in the coverage.
				outs[i] = Outcome{Refused: err.Error()}
				continue
			}
			specs = append(specs, pipeline.Spec{Scenario: s, Seed: r.Seed, RunID: base.Name + "-hunt-" + r.Name, Version: version})
			at = append(at, i)
		}
		if len(specs) == 0 {
			return outs, nil
		}
		b := pipeline.Batch{Workers: workers, Dir: dir, KeepGoing: true, NoTrace: true}
		if done != nil {
			b.Done = func(int, analysis.Outcome, error) { done() }
		}
		res, err := b.Run(ctx, specs)
		if err != nil {
			return nil, err
		}
		defer res.Close()
		for k, i := range at {
			o, err := judge(specs[k], liveness, version, res, k)
			if err != nil {
				return nil, err
			}
			outs[i] = o
		}
		return outs, nil
	}
}

// judge reads the violations of run k of a batch.
func judge(spec pipeline.Spec, liveness time.Duration, version string, res *pipeline.BatchResult, k int) (Outcome, error) {
	if err := res.Errs[k]; err != nil {
		if strings.Contains(err.Error(), "invariant violated") {
			return Outcome{Ran: true, Violations: []Violation{{Kind: Invariant, Check: InvariantCheck(err.Error()), Message: err.Error()}}, Closeness: 1}, nil
		}
		return Outcome{}, fmt.Errorf("run %s: %w", spec.RunID, err)
	}
	if !res.Ran[k] || res.Outcomes[k].Status != "complete" {
		return Outcome{}, nil // interrupted
	}
	sc, _ := reports.CheckRuns(spec.Scenario, version, spec.Seed, res, []int{k})
	o := Outcome{Ran: true, Violations: []Violation{}}
	for _, r := range sc.Expectations {
		if math.IsNaN(r.Value) {
			// Not measured (goodput without a fault window, a rate of nothing): no breach.
			o.NotMeasured = append(o.NotMeasured, r.Expectation.Metric)
			continue
		}
		if !r.Pass {
			o.Violations = append(o.Violations, Violation{Kind: Expect, Metric: r.Expectation.Metric, Message: r.Message()})
			continue
		}
		o.Closeness = math.Max(o.Closeness, closeness(r.Expectation, r.Value))
	}
	if liveness <= 0 {
		return o, nil
	}
	m := res.Outcomes[k].Metrics
	back, tested := m.Value("goodput_recovered")
	if !tested {
		return o, nil // no fault window, or nothing to test after it
	}
	t, ok := m.Value(LivenessMetric)
	limit := liveness.Seconds()
	switch {
	case back == 0 || !ok:
		o.Violations = append(o.Violations, Violation{Kind: Liveness, Metric: LivenessMetric,
			Message: fmt.Sprintf("goodput never came back after the last fault window (%s <= %s: never)", LivenessMetric, fmtDur(liveness))})
	case t > limit:
		o.Violations = append(o.Violations, Violation{Kind: Liveness, Metric: LivenessMetric,
			Message: fmt.Sprintf("goodput came back %s after the last fault window, later than %s", fmtDur(time.Duration(t*float64(time.Second))), fmtDur(liveness))})
	default:
		o.Closeness = math.Max(o.Closeness, t/limit)
	}
	return o, nil
}

// closeness is how near the value x of a passing expectation is to its bound, in [0, 1]: 1
// minus the distance relative to the bound's size. An equality says nothing of nearness.
func closeness(e scenarios.Expectation, x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || e.Op == "==" {
		return 0
	}
	bound := e.Value
	if e.Op == "between" && math.Abs(x-e.Upper) < math.Abs(x-e.Value) {
		bound = e.Upper
	}
	rel := math.Abs(x-bound) / math.Max(math.Abs(bound), 1e-9)
	return math.Max(0, 1-rel)
}
