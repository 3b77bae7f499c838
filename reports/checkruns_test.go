//go:build duckdb_arrow

package reports

import (
	"errors"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/pipeline"
	"github.com/mayday-sim/mayday/scenarios"
)

// CheckRuns takes a scenario's seeds out of a batch: with every seed run it summarizes them
// and evaluates the expectations; with one failed or missing it says why, and every
// expectation counts as unmet.
func TestCheckRuns(t *testing.T) {
	s, err := scenarios.Load("research-fleet", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Expect = []scenarios.Expectation{expectation(t, "completed", ">= 2")}
	out := func(seed uint64, completed float64) analysis.Outcome {
		o := analysis.Outcome{RunID: analysis.RunID(s.Name, seed), Seed: seed, Digest: "d", Status: "complete", Wall: time.Second}
		o.Metrics.Set("completed", completed)
		return o
	}
	res := &pipeline.BatchResult{
		Outcomes: []analysis.Outcome{out(1, 0), out(5, 3), out(6, 1)},
		Ran:      []bool{true, true, true},
		Errs:     make([]error, 3),
	}
	sc, sum := CheckRuns(s, "v", 5, res, []int{1, 2})
	if sum == nil || sc.Error != "" || sc.Seeds != 2 || sc.Seed != 5 || sc.WallSeconds != 2 || len(sum.Seeds) != 2 {
		t.Fatalf("check %+v, summary %+v", sc, sum)
	}
	if r := sc.Expectations[0]; r.Value != 2 || !r.Pass {
		t.Errorf("completed >= 2 on seeds with 3 and 1: %+v", r)
	}
	res.Ran[2], res.Errs[2] = false, errors.New("boom")
	sc, sum = CheckRuns(s, "v", 5, res, []int{1, 2})
	if sum != nil || sc.Error != "boom" || sc.Expectations[0].Pass {
		t.Errorf("a failed seed: check %+v, summary %v", sc, sum)
	}
	res.Errs[2] = nil
	if sc, _ = CheckRuns(s, "v", 5, res, []int{1, 2}); sc.Error != "not every seed ran" {
		t.Errorf("a seed that did not run: %q", sc.Error)
	}
}
