//go:build duckdb_arrow

package tune

import (
	"context"
	"fmt"
	"sync"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/pipeline"
	"github.com/mayday-sim/mayday/scenarios"
)

// Simulate is the Evaluator that runs jobs as simulations of base with each candidate's
// values (scenarios.Scenario.With), through pipeline.Batch on workers workers (0 = every
// core), keeping no trace: each run's metrics are computed in Go as it runs (the metric
// views' definitions; pipeline.Compute), so dir is not used. A job's metrics are those of metric.Compared() that the run defines; a run cut
// short (partial) counts as not run. done, when set, is told each finished run.
func Simulate(base *scenarios.Scenario, version string, workers int, dir string, done func(Job)) Evaluator {
	var mu sync.Mutex
	variants := map[string]*scenarios.Scenario{}
	variant := func(j Job) (*scenarios.Scenario, error) {
		mu.Lock()
		defer mu.Unlock()
		if s := variants[Key(j.Values)]; s != nil {
			return s, nil
		}
		ovs := make([]scenarios.Override, len(base.Tune.Vary))
		for i, p := range base.Tune.Vary {
			ovs[i] = scenarios.Override{Path: p.Path, Value: j.Values[i], From: scenarios.FromTune}
		}
		s, err := base.With(ovs...)
		if err != nil {
			return nil, fmt.Errorf("candidate %d: %w", j.Candidate, err)
		}
		variants[Key(j.Values)] = s
		return s, nil
	}
	return func(ctx context.Context, jobs []Job) ([]map[string]float64, error) {
		specs := make([]pipeline.Spec, len(jobs))
		for i, j := range jobs {
			s, err := variant(j)
			if err != nil {
				return nil, err
			}
			specs[i] = pipeline.Spec{Scenario: s, Seed: j.Seed, RunID: analysis.SweepRunID(base.Name, j.Candidate, j.Seed), Version: version}
		}
		b := pipeline.Batch{Workers: workers, Dir: dir, NoTrace: true}
		if done != nil {
			b.Done = func(i int, _ analysis.Outcome, err error) {
				if err == nil {
					done(jobs[i])
				}
			}
		}
		res, err := b.Run(ctx, specs)
		if err != nil {
			return nil, err
		}
		defer res.Close()
		out := make([]map[string]float64, len(jobs))
		for i, o := range res.Outcomes {
			if !res.Ran[i] || o.Status != "complete" {
				continue
			}
			out[i] = map[string]float64{}
			for _, m := range metric.Compared() {
				if v, ok := o.Metrics.Value(m); ok {
					out[i][m] = v
				}
			}
		}
		return out, nil
	}
}
