//go:build duckdb_arrow

package reports

import (
	"context"
	"slices"
	"testing"

	"github.com/mayday-sim/mayday/pipeline"
	"github.com/mayday-sim/mayday/scenarios"
)

// ablation says what an embedded example demonstrates: remove its point (the guard or
// policy it is about, with ablate) and each named metric must move the claimed way
// (direction +1: up, −1: down), significantly: the interval DiffCI gives (the one `mayday
// compare` uses, at the 95% level) excludes 0. And the example's own expect block, checked
// as `mayday check` does, must pass with the point and fail without it.
type ablation struct {
	example string
	ablate  []string
	seeds   int // 2 where the effect is many times the seed-to-seed spread, else 3
	moves   map[string]int
	size    []string // applied to both sides, to keep the test short
}

var ablations = []ablation{
	{"budget-exhaustion", []string{"recovery.budgets="}, 2,
		map[string]int{"tokens_per_completion": +1, "full_scope_completion_rate": +1}, nil},
	{"capacity-crunch", []string{"workload.workers=0"}, 2,
		// Unlimited workers flood the rate-limited model and the load-shedding backtest tool.
		map[string]int{"completion_rate": -1, "median_pending_time": -1}, nil},
	{"invalid-configs", []string{"recovery.revisions=0"}, 2,
		map[string]int{"completion_rate": -1, "human_intervention_rate": +1}, nil},
	{"lost-responses", []string{"tools.backtest.idempotency=none"}, 3,
		map[string]int{"duplicate_side_effects": +1}, nil},
	{"policy-violations", []string{"recovery.humans="}, 3,
		map[string]int{"completion_rate": -1, "terminated_rate": +1}, nil},
	{"research-fleet", []string{"recovery.breaker=", "recovery.retry_budget="}, 2,
		// The first 4 of its 10 hours of arrivals, which hold the backtest outage.
		map[string]int{"retry_amplification": +1, "human_intervention_rate": +1}, []string{"workload.investigations=4000"}},
	{"retry-storm", []string{"recovery.retry_budget="}, 2,
		map[string]int{"completion_rate": -1, "retry_amplification": +1}, nil},
	{"runaway-loops", []string{"recovery.non_progress="}, 2,
		map[string]int{"wasted_token_ratio": +1}, nil},
	{"shared-outage", []string{"recovery.breaker=", "recovery.retry_budget="}, 2,
		map[string]int{"retry_amplification": +1, "human_intervention_rate": +1, "completion_rate": -1}, nil},
	{"transient-errors", []string{"recovery.retry.max_attempts=1"}, 2,
		map[string]int{"completion_rate": -1}, nil},
	{"worker-crashes", []string{"recovery.inspect_before_retry=false"}, 3,
		map[string]int{"retry_amplification": +1}, nil},
}

// summarizeRuns simulates sc over seeds seed .. seed+n-1 and summarizes them like `mayday
// check`: the runs are judged by their metrics alone, so they keep no trace (the metrics
// are a stored run's; see pipeline's TestBatchNoTraceEqualsSerial).
func summarizeRuns(t *testing.T, sc *scenarios.Scenario, n int) Summary {
	t.Helper()
	specs := make([]pipeline.Spec, n)
	for i := range specs {
		specs[i] = pipeline.Spec{Scenario: sc, Seed: sc.Seed + uint64(i), Version: "test"}
	}
	res, err := pipeline.Batch{NoTrace: true}.Run(context.Background(), specs)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	return Summarize(sc, "test", res.Outcomes)
}

func TestExamplesProveTheirPoint(t *testing.T) {
	if testing.Short() {
		t.Skip("simulations of every example")
	}
	covered := map[string]bool{}
	for _, ab := range ablations {
		covered[ab.example] = true
		t.Run(ab.example, func(t *testing.T) {
			with, err := scenarios.Load(ab.example, ab.size)
			if err != nil {
				t.Fatal(err)
			}
			without, err := scenarios.Load(ab.example, append(slices.Clone(ab.size), ab.ablate...))
			if err != nil {
				t.Fatal(err)
			}
			a, b := summarizeRuns(t, with, ab.seeds), summarizeRuns(t, without, ab.seeds)
			for metric, dir := range ab.moves {
				av, bv := seedValues(a, metric), seedValues(b, metric)
				diff, lo, hi := DiffCI(av, bv, Confidence, Resamples, 1)
				t.Logf("%s: %v -> %v, diff %.4g [%.4g, %.4g]", metric, av, bv, diff, lo, hi)
				if !(dir > 0 && lo > 0 || dir < 0 && hi < 0) {
					t.Errorf("without %v, %s moved %.4g [%.4g, %.4g]; want significantly %+d", ab.ablate, metric, diff, lo, hi, dir)
				}
			}
			for _, r := range CheckExpectations(a, with.Expect) {
				if !r.Pass {
					t.Errorf("with its point: %s", r.Message())
				}
			}
			failed := 0
			for _, r := range CheckExpectations(b, without.Expect) {
				if !r.Pass {
					failed++
					t.Logf("without its point: %s", r.Message())
				}
			}
			if failed == 0 {
				t.Errorf("without %v every expectation still passes: expect does not notice", ab.ablate)
			}
		})
	}
	for _, info := range scenarios.List() {
		if !covered[info.Name] {
			t.Errorf("example %s has no ablation", info.Name)
		}
	}
}
