package hunt

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
)

// TestSimulateJudges runs small simulations through the evaluator the command uses: a draw
// the scenario refuses does not run; an expectation no run can meet is a violation of that
// metric; a run that meets every expectation shows none, and its closeness is in [0, 1];
// done is told of each run that ran.
func TestSimulateJudges(t *testing.T) {
	base := load(t, "workload.investigations=30", "horizon=45m")
	done := 0
	eval := Simulate(base, 15*time.Minute, "test", 1, t.TempDir(), func() { done++ })
	fault := scenarios.Override{Path: "faults", Value: "[{kind: outage, tool: search, at: 10m, for: 1m}]", From: scenarios.FromHunt}
	runs := []Run{
		{Name: "refused", Overrides: []scenarios.Override{{Path: "workload.investigations", Value: "-3", From: scenarios.FromHunt}}, Seed: 1},
		{Name: "impossible", Overrides: []scenarios.Override{fault, {Path: "expect.completion_rate", Value: strconv.Quote(">= 1.5"), From: scenarios.FromHunt}}, Seed: 1},
		{Name: "easy", Overrides: []scenarios.Override{fault, {Path: "expect.completion_rate", Value: strconv.Quote(">= 0"), From: scenarios.FromHunt}}, Seed: 1},
	}
	outs, err := eval(context.Background(), runs)
	if err != nil {
		t.Fatal(err)
	}
	if o := outs[0]; o.Refused == "" || o.Ran {
		t.Errorf("refused draw: %+v", o)
	}
	if o := outs[1]; !o.Ran || len(o.Violations) == 0 || o.Violations[0].Kind != Expect || o.Violations[0].Metric != "completion_rate" {
		t.Errorf("impossible expectation: %+v", o)
	}
	if o := outs[2]; !o.Ran || o.Closeness < 0 || o.Closeness > 1 {
		t.Errorf("easy expectation: %+v", o)
	} else {
		for _, v := range o.Violations {
			if v.Kind == Expect {
				t.Errorf("easy expectation violated: %+v", v)
			}
		}
	}
	if done != 2 {
		t.Errorf("done told of %d runs, want 2", done)
	}
}

// TestCloseness: 1 at the bound, falling with the distance relative to the bound, 0 for an
// equality or an undefined value; a range's nearer bound counts.
func TestCloseness(t *testing.T) {
	for _, c := range []struct {
		e    scenarios.Expectation
		x    float64
		want float64
	}{
		{scenarios.Expectation{Op: ">=", Value: 0.9}, 0.9, 1},
		{scenarios.Expectation{Op: ">=", Value: 0.8}, 1.0, 0.75},
		{scenarios.Expectation{Op: "<=", Value: 10}, 25, 0},
		{scenarios.Expectation{Op: "==", Value: 1}, 1, 0},
		{scenarios.Expectation{Op: ">=", Value: 1}, math.NaN(), 0},
		{scenarios.Expectation{Op: ">=", Value: 1}, math.Inf(1), 0},
		{scenarios.Expectation{Op: "between", Value: 10, Upper: 20}, 18, 0.9},
		{scenarios.Expectation{Op: "between", Value: 10, Upper: 20}, 12, 0.8},
		{scenarios.Expectation{Op: "<=", Value: 0}, 0, 1},
	} {
		if got := closeness(c.e, c.x); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("closeness(%s %v, %v) = %v, want %v", c.e.Op, c.e.Value, c.x, got, c.want)
		}
	}
}
