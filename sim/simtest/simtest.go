// Package simtest generates small scenarios from bytes, for the simulator's fuzz test and
// for tests that check relations every scenario must satisfy (docs/metrics.md). Any input,
// even an empty one, makes a scenario that uses any of the scenario language's features;
// most are valid (scenarios.Validate decides).
package simtest

import (
	"math"
	"strconv"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
)

// Generate turns data into a small scenario (at most 30 investigations, 3 tools, 8 steps,
// subagents two levels deep, a horizon of at most 13 hours).
func Generate(data []byte) *scenarios.Scenario { return generate(&gen{b: data}) }

// base is the scenario every generated one starts from.
func base() *scenarios.Scenario {
	s := scenarios.Defaults()
	s.Name = "test"
	s.Workload.Investigations = 100
	s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalPoisson, Rate: scenarios.Rate{PerSecond: 1}}
	s.Workload.Tokens = scenarios.Dist{Kind: scenarios.DistConstant, Value: 100}
	s.Workload.Model = "test-model"
	s.Workload.Mix = []scenarios.Weight{{Tool: "svc", Weight: 1}}
	s.Tools = []scenarios.Tool{{
		Name: "svc", Version: "1", Idempotency: scenarios.Keyed, Compute: 1,
		Latency: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(100 * time.Millisecond)},
	}}
	return s
}

// gen turns fuzz bytes into choices; past the end every choice is 0, so any input, even
// an empty one, makes a scenario.
type gen struct{ b []byte }

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

// n is a choice in [0, k).
func (g *gen) n(k int) int { return int(g.byte()) % k }

// p is a probability, 0 and 1 included.
func (g *gen) p() float64 { return float64(g.byte()) / 255 }

// dur is a duration from 0 to about max, on a log scale so short and long are both common.
func (g *gen) dur(max time.Duration) time.Duration {
	f := float64(g.byte()) / 255
	return time.Duration(math.Pow(float64(max), f)) - 1
}

func (g *gen) dist(count bool, max float64) scenarios.Dist {
	lo := 0.0
	if count {
		lo = 1
	}
	x := lo + float64(g.byte())/255*(max-lo)
	switch g.n(5) {
	case 1:
		return scenarios.Dist{Kind: scenarios.DistExponential, Mean: math.Max(x, 1e-3)}
	case 2:
		return scenarios.Dist{Kind: scenarios.DistUniform, Min: lo, Max: math.Max(x, lo)}
	case 3:
		m := math.Max(x, 1e-3)
		return scenarios.Dist{Kind: scenarios.DistLognormal, Median: m, P95: m * (1.1 + 4*g.p())}
	case 4:
		return scenarios.Dist{Kind: scenarios.DistPareto, Min: math.Max(x/4, 1e-3), Alpha: 1.1 + 3*g.p()}
	}
	return scenarios.Dist{Kind: scenarios.DistConstant, Value: x}
}

// generate builds a small scenario (at most 30 investigations, 3 tools, 8 steps,
// subagents two levels deep, a horizon of at most 13 hours) that uses any of the scenario language's features.
func generate(g *gen) *scenarios.Scenario {
	s := base()
	s.Name = "fuzz"
	s.Horizon = time.Hour + g.dur(12*time.Hour)
	w := &s.Workload
	w.Investigations = 1 + g.n(30)
	switch g.n(3) {
	case 0:
		w.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalPoisson, Rate: scenarios.Rate{PerSecond: 1e-3 + g.p()}}
	case 1:
		w.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalUniform, Over: time.Second + g.dur(time.Hour)}
	default:
		w.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
	}
	w.Steps = g.dist(true, 8)
	w.Think = g.dist(false, float64(10*time.Second))
	w.Tokens = g.dist(false, 2000)
	if g.n(3) == 0 {
		w.Subagents = scenarios.Subagents{Probability: g.p() / 2, Count: g.dist(true, 3), MaxDepth: g.n(3)}
	} else {
		w.Subagents = scenarios.Subagents{Count: scenarios.Dist{Kind: scenarios.DistConstant, Value: 1}, MaxDepth: 1}
	}
	w.Behaviour = scenarios.Behaviour{InvalidOutput: g.p() / 4, ReviseSuccess: g.p(), PolicyViolation: g.p() / 8, Stuck: g.p() / 4, ValidationMiss: g.p() / 4}
	s.Tools, w.Mix = nil, nil
	for i := range 1 + g.n(3) {
		name := "t" + strconv.Itoa(i)
		t := scenarios.Tool{Name: name, Version: "1", Compute: g.p() * 4,
			Latency: g.dist(false, float64(30*time.Second)), Concurrency: g.n(4),
			Idempotency: []scenarios.Idempotency{scenarios.Keyed, scenarios.Natural, scenarios.None}[g.n(3)],
			Timeout:     time.Duration(1+g.n(120)) * time.Second}
		s.Tools = append(s.Tools, t)
		w.Mix = append(w.Mix, scenarios.Weight{Tool: name, Weight: 0.1 + g.p()})
	}
	for i := range g.n(5) {
		f := scenarios.Fault{ID: strconv.Itoa(i), Index: i}
		tool := ""
		if g.n(2) == 0 {
			tool = s.Tools[g.n(len(s.Tools))].Name
		}
		switch g.n(8) {
		case 0:
			f.Kind, f.Tool, f.Probability = scenarios.FaultTransient, tool, g.p()
		case 1:
			f.Kind, f.Tool, f.Probability = scenarios.FaultLostResponse, tool, g.p()/2
		case 2:
			f.Kind, f.Tool, f.At, f.For = scenarios.FaultOutage, tool, g.dur(time.Hour), time.Second+g.dur(time.Hour)
		case 3:
			f.Kind, f.Tool, f.At, f.For = scenarios.FaultHang, tool, g.dur(time.Hour), time.Second+g.dur(time.Hour)
		case 4:
			f.Kind, f.Tool, f.At, f.For = scenarios.FaultBrownout, tool, g.dur(time.Hour), time.Second+g.dur(time.Hour)
			f.Probability, f.Slowdown = g.p(), 1+g.p()*100
		case 5:
			f.Kind, f.Rate = scenarios.FaultWorkerCrash, scenarios.Rate{PerSecond: g.p() / 600}
		case 6:
			f.Kind, f.Probability = scenarios.FaultInvalidConfig, g.p()
		default:
			f.Kind, f.Probability, f.Factor = scenarios.FaultBudgetSpike, g.p(), 1+g.p()*scenarios.MaxFactor
		}
		s.Faults = append(s.Faults, f)
	}
	r := &s.Recovery
	r.Retry = scenarios.Retry{MaxAttempts: 1 + g.n(6), Initial: g.dur(10 * time.Second), Multiplier: 1 + g.p()*3,
		Jitter: []string{"none", "full", "equal", "decorrelated"}[g.n(4)], OnExhausted: []string{"escalate", "terminate"}[g.n(2)]}
	r.Retry.Max = r.Retry.Initial + g.dur(time.Minute)
	if g.n(2) == 0 {
		r.RetryBudget = &scenarios.RetryBudget{Ratio: g.p(), MinPerSecond: g.p()}
	}
	if g.n(2) == 0 {
		r.Breaker = &scenarios.Breaker{Window: time.Second + g.dur(time.Minute), FailureRatio: math.Max(g.p(), 0.01), MinCalls: 1 + g.n(10), Cooldown: time.Second + g.dur(time.Minute)}
	}
	r.InspectBeforeRetry = g.n(2) == 0
	r.Inspection = scenarios.Inspection{Interval: time.Second + g.dur(time.Minute), Max: 1 + g.n(10)}
	r.Revisions = g.n(3)
	if g.n(2) == 0 {
		r.NonProgress = &scenarios.NonProgress{Repeats: 1 + g.n(4)}
	}
	if g.n(2) == 0 {
		r.Budgets = scenarios.Budgets{Tokens: int64(g.n(20000)), Compute: g.p() * 100, Wall: g.dur(time.Hour)}
	}
	r.OnExhaustion = []string{"pause", "reduce_scope", "terminate"}[g.n(3)]
	r.Lease = time.Second + g.dur(10*time.Minute)
	if g.n(2) == 0 {
		r.Supervisor = scenarios.Supervisor{Kind: "model", Accuracy: g.p(), Latency: g.dur(time.Minute), Tokens: int64(g.n(500))}
	}
	if g.n(2) == 0 {
		r.Humans = &scenarios.Humans{Reviewers: g.n(4), ReviewTime: g.dist(false, float64(time.Hour)), Approve: g.p()}
	}
	return s
}
