package sim

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// Values at the edge of what validation accepts must neither wrap nor stop the run: token
// counts saturate (and the budget still holds), huge delays land after the horizon, a tiny
// arrival rate means nothing arrives. Each case fails on the unsaturated arithmetic:
// tokens went negative, or the run stopped with "time went backwards".
func TestSaturatingArithmetic(t *testing.T) {
	t.Run("token factor", func(t *testing.T) {
		s := testScenario()
		s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 20}
		s.Workload.Tokens = scenarios.Dist{Kind: scenarios.DistConstant, Value: 1e9}
		s.Recovery.Budgets.Tokens = 2e9 // below MaxTurnTokens, which caps the first turn
		for i := range 4 {              // factors multiply: 1e24 x 1e9 tokens a turn overflows int64
			s.Faults = append(s.Faults, scenarios.Fault{ID: string(rune('a' + i)), Index: i,
				Kind: scenarios.FaultBudgetSpike, Probability: 1, Factor: scenarios.MaxFactor})
		}
		var c record.Collector
		res := run(t, s, 1, &c)
		if res.Completed != 0 {
			t.Errorf("%d investigations completed past a token budget they exceed on the first turn", res.Completed)
		}
		for _, inv := range c.Investigations {
			if inv.Tokens < 0 {
				t.Fatalf("investigation tokens %d wrapped", inv.Tokens)
			}
		}
		for _, sp := range c.Spans {
			if sp.InputTokens < 0 || sp.OutputTokens < 0 || sp.InputTokens+sp.OutputTokens > MaxTurnTokens {
				t.Fatalf("span %d: tokens %d/%d wrapped or past MaxTurnTokens", sp.SpanID, sp.InputTokens, sp.OutputTokens)
			}
		}
	})
	t.Run("brownout slowdown", func(t *testing.T) {
		s := testScenario()
		s.Tools[0].Latency = scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(1000 * time.Hour)}
		s.Faults = []scenarios.Fault{{ID: "b", Kind: scenarios.FaultBrownout, Tool: "svc", For: time.Hour, Slowdown: scenarios.MaxFactor}}
		res := run(t, s, 1, nil)
		if res.Completed+res.InFlight+res.Terminated+res.AwaitingHuman != res.Started {
			t.Errorf("accounting: %+v", res)
		}
	})
	t.Run("tiny arrival rate", func(t *testing.T) {
		s := testScenario()
		s.Workload.Arrival.Rate.PerSecond = 1e-26 // 1e-22 per hour
		res := run(t, s, 1, nil)
		if res.Started > 1 {
			t.Errorf("%d arrivals at a rate of one per 3e18 years", res.Started)
		}
	})
	t.Run("compute", func(t *testing.T) {
		s := testScenario()
		s.Tools[0].Compute = scenarios.MaxCompute
		var c record.Collector
		run(t, s, 1, &c)
		for _, sp := range c.Spans {
			if math.IsInf(sp.Compute, 0) || math.IsNaN(sp.Compute) {
				t.Fatalf("span compute %v", sp.Compute)
			}
		}
	})
	t.Run("steps beyond 32 bits", func(t *testing.T) {
		s := testScenario()
		s.Workload.Investigations = 1
		// The simulator caps a drawn count at MaxSteps; 2^32+1 must not wrap to 1.
		s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 1 << 32}
		s.Workload.Behaviour.Stuck = 1
		s.Horizon = time.Hour
		if got := satCount32(min(int64(1<<32+1), scenarios.MaxSteps)); got != scenarios.MaxSteps {
			t.Errorf("nsteps of 2^32+1 = %d, want MaxSteps", got)
		}
		if got := satCount32(1<<32 + 1); got != math.MaxInt32 {
			t.Errorf("satCount32(2^32+1) = %d", got)
		}
		// Run checks the scenario rules once and refuses the count (at most MaxSteps), so a
		// wrapped step count cannot reach rng.IntN, where it once panicked.
		if _, err := Run(context.Background(), s, 1, nil, Options{}); err == nil || !strings.Contains(err.Error(), "workload.steps") {
			t.Errorf("Run with 2^32 steps: %v; want the workload.steps rule to refuse it", err)
		}
	})
}

// An idle tool writes one sample row, not one per minute of a 100-day operation (144,000
// minutes; before, 21 tools wrote a row each minute).
func TestIdleToolsCostNoSamples(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 1
	s.Horizon = 101 * 24 * time.Hour
	s.Tools[0].Latency = scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(100 * 24 * time.Hour)}
	for i := range 20 {
		s.Tools = append(s.Tools, scenarios.Tool{Name: "idle" + string(rune('a'+i)), Idempotency: scenarios.Keyed,
			Latency: scenarios.Dist{Kind: scenarios.DistConstant, Value: 1e9}})
	}
	var c record.Collector
	res := run(t, s, 1, &c)
	if res.Completed != 1 {
		t.Fatalf("the 100-day operation did not complete: %+v", res)
	}
	// Each tool: one row when sampling starts; svc one more when its attempt is counted,
	// one when it completes. Anything per minute would be millions.
	if n := len(c.Samples); n > 2*len(s.Tools)+4 {
		t.Errorf("%d sample rows for %d tools over 100 days", n, len(s.Tools))
	}
}
