package scenarios

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"
)

// edgeScenario is a valid scenario with every optional block on, for Validate's edges.
func edgeScenario(t *testing.T) *Scenario {
	t.Helper()
	s, err := Parse("edge.yaml", []byte(`name: edge
workload: {model: m, subagents: {probability: 0.5}}
tools: {a: {timeout: 1s}}
faults: [{kind: outage, tool: a, at: 1m, for: 1m}]
model: {requests_per_minute: 10, tokens_per_minute: 1000, latency_per_1k_tokens: 1s, failure: 0.1}
recovery:
  retry_budget: {}
  breaker: {}
  non_progress: {repeats: 2}
  humans: {reviewers: 1, review_time: 1m}
  supervisor: {kind: model, accuracy: 0.9}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// errorFor reports whether Validate names key.
func errorFor(t *testing.T, s *Scenario, key string) bool {
	t.Helper()
	err := s.Validate()
	if err == nil {
		return false
	}
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Validate() = %v, want an ErrorList", err)
	}
	for _, e := range list {
		if e.Key == key {
			return true
		}
	}
	return false
}

// Validate on scenarios built in Go, at the edges of each range: a whole number at its
// least and greatest value passes and one beyond fails; so do durations and numbers at
// their bounds, and probabilities at 0 and 1. The bounds are written out here, not read
// from the key tree, so that a changed bound fails. A zero that a key refuses is not
// refused here: Validate fills it with the key's default (TestGoBuiltZeroTakesDefaults).
func TestValidateEdges(t *testing.T) {
	if err := edgeScenario(t).Validate(); err != nil {
		t.Fatalf("the edge scenario is invalid: %v", err)
	}
	type edge struct {
		key    string
		set    func(s *Scenario, v float64)
		ok     []float64
		refuse []float64
	}
	const i32 = 1 << 31
	tiny := func(x float64) float64 { return math.Nextafter(x, math.Inf(1)) }
	nan := math.NaN()
	prob := func(key string, set func(s *Scenario, v float64)) edge {
		return edge{key, set, []float64{0, 1}, []float64{below(0), tiny(1), nan}}
	}
	durAbove := func(key string, set func(s *Scenario, d time.Duration)) edge {
		return edge{key, func(s *Scenario, v float64) { set(s, time.Duration(v)) }, []float64{1}, []float64{-1}}
	}
	durAtLeast := func(key string, set func(s *Scenario, d time.Duration)) edge {
		return edge{key, func(s *Scenario, v float64) { set(s, time.Duration(v)) }, []float64{0}, []float64{-1}}
	}
	edges := []edge{
		{"workload.investigations", func(s *Scenario, v float64) { s.Workload.Investigations = int(v) }, []float64{1}, []float64{-1, 1<<40 + 1}},
		{"workload.subagents.max_depth", func(s *Scenario, v float64) { s.Workload.Subagents.MaxDepth = int(v) }, []float64{0, 64}, []float64{-1, 65}},
		{"workload.workers", func(s *Scenario, v float64) { s.Workload.Workers = int(v) }, []float64{0, i32}, []float64{-1, i32 + 1}},
		{"tools.a.concurrency", func(s *Scenario, v float64) { s.Tools[0].Concurrency = int(v) }, []float64{0, i32}, []float64{-1, i32 + 1}},
		{"tools.a.queue_limit", func(s *Scenario, v float64) { s.Tools[0].QueueLimit = int(v) }, []float64{0, i32}, []float64{-1, i32 + 1}},
		{"recovery.retry.max_attempts", func(s *Scenario, v float64) { s.Recovery.Retry.MaxAttempts = int(v) }, []float64{1, 1000}, []float64{-1, 1001}},
		{"recovery.breaker.min_calls", func(s *Scenario, v float64) { s.Recovery.Breaker.MinCalls = int(v) }, []float64{1, i32}, []float64{-1, i32 + 1}},
		{"recovery.inspection.max", func(s *Scenario, v float64) { s.Recovery.Inspection.Max = int(v) }, []float64{1, 100_000}, []float64{-1, 100_001}},
		{"recovery.revisions", func(s *Scenario, v float64) { s.Recovery.Revisions = int(v) }, []float64{0, 1000}, []float64{-1, 1001}},
		{"recovery.non_progress.repeats", func(s *Scenario, v float64) { s.Recovery.NonProgress.Repeats = int(v) }, []float64{1, 1000}, []float64{-1, 1001}},
		{"recovery.budgets.tokens", func(s *Scenario, v float64) { s.Recovery.Budgets.Tokens = int64(v) }, []float64{0, 1 << 62}, []float64{-1}},
		{"recovery.supervisor.tokens", func(s *Scenario, v float64) { s.Recovery.Supervisor.Tokens = int64(v) }, []float64{0}, []float64{-1}},
		{"recovery.humans.reviewers", func(s *Scenario, v float64) { s.Recovery.Humans.Reviewers = int(v) }, []float64{0, i32}, []float64{-1, i32 + 1}},
		{"recovery.retry.multiplier", func(s *Scenario, v float64) { s.Recovery.Retry.Multiplier = v }, []float64{1}, []float64{below(1), nan, math.Inf(1)}},
		{"recovery.retry_budget.ratio", func(s *Scenario, v float64) { s.Recovery.RetryBudget.Ratio = v }, []float64{0}, []float64{below(0), nan}},
		{"recovery.retry_budget.min_per_second", func(s *Scenario, v float64) { s.Recovery.RetryBudget.MinPerSecond = v }, []float64{0}, []float64{below(0), math.Inf(1)}},
		{"tools.a.compute", func(s *Scenario, v float64) { s.Tools[0].Compute = v }, []float64{0}, []float64{below(0), nan}},
		{"recovery.budgets.compute", func(s *Scenario, v float64) { s.Recovery.Budgets.Compute = v }, []float64{0}, []float64{below(0), math.Inf(1)}},
		{"model.requests_per_minute", func(s *Scenario, v float64) { s.Model.RequestsPerMinute = v }, []float64{0}, []float64{below(0)}},
		{"model.tokens_per_minute", func(s *Scenario, v float64) { s.Model.TokensPerMinute = v }, []float64{0}, []float64{below(0)}},
		{"recovery.breaker.failure_ratio", func(s *Scenario, v float64) { s.Recovery.Breaker.FailureRatio = v }, []float64{tiny(0), 1}, []float64{below(0), tiny(1)}},
		{"workload.tokens.growth", func(s *Scenario, v float64) { s.Workload.TokensGrowth = v }, []float64{0}, []float64{below(0), math.Inf(1)}},
		durAbove("horizon", func(s *Scenario, d time.Duration) { s.Horizon = d }),
		durAbove("faults[0].for", func(s *Scenario, d time.Duration) { s.Faults[0].For = d }),
		durAbove("recovery.breaker.window", func(s *Scenario, d time.Duration) { s.Recovery.Breaker.Window = d }),
		durAbove("recovery.breaker.cooldown", func(s *Scenario, d time.Duration) { s.Recovery.Breaker.Cooldown = d }),
		durAbove("recovery.inspection.interval", func(s *Scenario, d time.Duration) { s.Recovery.Inspection.Interval = d }),
		durAbove("recovery.lease", func(s *Scenario, d time.Duration) { s.Recovery.Lease = d }),
		durAtLeast("tools.a.timeout", func(s *Scenario, d time.Duration) { s.Tools[0].Timeout = d }),
		durAtLeast("faults[0].at", func(s *Scenario, d time.Duration) { s.Faults[0].At = d }),
		durAtLeast("recovery.budgets.wall", func(s *Scenario, d time.Duration) { s.Recovery.Budgets.Wall = d }),
		durAtLeast("recovery.supervisor.latency", func(s *Scenario, d time.Duration) { s.Recovery.Supervisor.Latency = d }),
		durAtLeast("model.latency_per_1k_tokens", func(s *Scenario, d time.Duration) { s.Model.LatencyPer1kTokens = d }),
		prob("workload.subagents.probability", func(s *Scenario, v float64) { s.Workload.Subagents.Probability = v }),
		prob("workload.behaviour.invalid_output", func(s *Scenario, v float64) { s.Workload.Behaviour.InvalidOutput = v }),
		prob("workload.behaviour.revise_success", func(s *Scenario, v float64) { s.Workload.Behaviour.ReviseSuccess = v }),
		prob("workload.behaviour.policy_violation", func(s *Scenario, v float64) { s.Workload.Behaviour.PolicyViolation = v }),
		prob("workload.behaviour.stuck", func(s *Scenario, v float64) { s.Workload.Behaviour.Stuck = v }),
		prob("workload.behaviour.validation_miss", func(s *Scenario, v float64) { s.Workload.Behaviour.ValidationMiss = v }),
		prob("recovery.supervisor.accuracy", func(s *Scenario, v float64) { s.Recovery.Supervisor.Accuracy = v }),
		prob("recovery.humans.approve", func(s *Scenario, v float64) { s.Recovery.Humans.Approve = v }),
		prob("model.failure", func(s *Scenario, v float64) { s.Model.Failure = v }),
	}
	for _, e := range edges {
		for _, v := range e.ok {
			s := edgeScenario(t)
			e.set(s, v)
			if errorFor(t, s, e.key) {
				t.Errorf("%s = %v refused: %v", e.key, v, s.Validate())
			}
		}
		for _, v := range e.refuse {
			s := edgeScenario(t)
			e.set(s, v)
			if !errorFor(t, s, e.key) {
				t.Errorf("%s = %v accepted", e.key, v)
			}
		}
	}
}

// The checks of expectations, tolerances, redaction patterns and sweeps, at their edges.
func TestValidateChecksEdges(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(s *Scenario)
		key  string
		bad  bool
	}{
		{"between A and A", func(s *Scenario) {
			s.Expect = []Expectation{{Metric: "completion_rate", Op: "between", Value: 0.5, Upper: 0.5}}
		}, "expect.completion_rate", false},
		{"between B below A", func(s *Scenario) {
			s.Expect = []Expectation{{Metric: "completion_rate", Op: "between", Value: 0.5, Upper: below(0.5)}}
		}, "expect.completion_rate", true},
		{"unknown operator", func(s *Scenario) { s.Expect = []Expectation{{Metric: "completion_rate", Op: "=>", Value: 1}} }, "expect.completion_rate", true},
		{"infinite bound", func(s *Scenario) {
			s.Expect = []Expectation{{Metric: "completion_rate", Op: ">=", Value: math.Inf(-1)}}
		}, "expect.completion_rate", true},
		{"tolerance 0", func(s *Scenario) { s.Tolerances = []Tolerance{{Metric: "completion_rate", Value: 0}} }, "tolerances.completion_rate", false},
		{"negative tolerance", func(s *Scenario) { s.Tolerances = []Tolerance{{Metric: "completion_rate", Value: below(0)}} }, "tolerances.completion_rate", true},
		{"unknown tolerance metric", func(s *Scenario) { s.Tolerances = []Tolerance{{Metric: "speed", Value: 1}} }, "tolerances.speed", true},
		{"empty redaction pattern", func(s *Scenario) { s.Redact = []string{"key", ""} }, "redact[1]", true},
		{"redaction pattern", func(s *Scenario) { s.Redact = []string{"key"} }, "redact[0]", false},
		{"sweep without values", func(s *Scenario) { s.Sweep = []SweepAxis{{Path: "recovery.lease"}} }, "sweep.recovery.lease", true},
		{"weight 0", func(s *Scenario) { s.Workload.Mix[0].Weight = 0 }, "workload.tools.a", true},
		{"weight NaN", func(s *Scenario) { s.Workload.Mix[0].Weight = math.NaN() }, "workload.tools.a", true},
		{"poisson rate 0", func(s *Scenario) {
			s.Workload.Arrival = Arrival{Kind: ArrivalPoisson}
		}, "workload.arrival.poisson", true},
		{"poisson rate", func(s *Scenario) {
			s.Workload.Arrival = Arrival{Kind: ArrivalPoisson, Rate: Rate{PerSecond: math.SmallestNonzeroFloat64}}
		}, "workload.arrival.poisson", false},
		{"uniform over 0", func(s *Scenario) { s.Workload.Arrival = Arrival{Kind: ArrivalUniform} }, "workload.arrival.uniform", true},
		{"unknown arrival", func(s *Scenario) { s.Workload.Arrival = Arrival{Kind: "burst"} }, "workload.arrival", true},
		{"retry max equal to initial", func(s *Scenario) { s.Recovery.Retry.Max = s.Recovery.Retry.Initial }, "recovery.retry.max", false},
		{"retry max below initial", func(s *Scenario) { s.Recovery.Retry.Max = s.Recovery.Retry.Initial - 1 }, "recovery.retry.max", true},
	} {
		s := edgeScenario(t)
		tc.set(s)
		if got := errorFor(t, s, tc.key); got != tc.bad {
			t.Errorf("%s: error for %s %t, want %t (%v)", tc.name, tc.key, got, tc.bad, s.Validate())
		}
	}
}

func below(x float64) float64 { return math.Nextafter(x, math.Inf(-1)) }

// A scenario built in Go with no tools is refused for its tools and for its step mix, which
// Validate can only fill from the tools.
func TestGoBuiltNoTools(t *testing.T) {
	const want = "workload.tools: empty; want at least one tool with a weight > 0\ntools: none; want at least one tool"
	if err := (&Scenario{Name: "n"}).Validate(); err == nil || err.Error() != want {
		t.Errorf("no tools: %v; want\n%s", err, want)
	}
}

// A piecewise arrival built in Go may pause (rate 0) in any stretch but the last, which
// lasts until every root has arrived and so must have a rate above 0.
func TestGoBuiltPiecewiseLastRate(t *testing.T) {
	for _, c := range []struct {
		pieces []Piece
		want   string
	}{
		{[]Piece{{Rate: Rate{0}, For: time.Minute}, {Rate: Rate{1}}}, ""},
		{[]Piece{{Rate: Rate{1}, For: time.Minute}, {Rate: Rate{0}}},
			"edge.yaml: workload.arrival.piecewise[1].rate: rate 0 per second; want >= 0 (> 0 in the last stretch)"},
		{[]Piece{{Rate: Rate{0}}},
			"edge.yaml: workload.arrival.piecewise[0].rate: rate 0 per second; want >= 0 (> 0 in the last stretch)"},
	} {
		s := edgeScenario(t)
		s.Workload.Arrival = Arrival{Kind: ArrivalPiecewise, Pieces: c.pieces}
		err := s.Validate()
		if got := fmt.Sprint(err); c.want == "" && err != nil || c.want != "" && got != c.want {
			t.Errorf("pieces %+v: %v; want %q", c.pieces, err, c.want)
		}
	}
}

// Humans.Case is the entry of one failure class, nil for a class without one.
func TestHumansCase(t *testing.T) {
	approve := 0.25
	h := &Humans{ByClass: []HumanCase{{Class: "timeout"}, {Class: "policy_block", Approve: &approve}}}
	if c := h.Case("policy_block"); c != &h.ByClass[1] || *c.Approve != 0.25 {
		t.Errorf("Case(policy_block) = %+v; want the policy_block entry", c)
	}
	if c := h.Case("timeout"); c != &h.ByClass[0] {
		t.Errorf("Case(timeout) = %+v; want the timeout entry", c)
	}
	if c := h.Case("crash"); c != nil {
		t.Errorf("Case(crash) = %+v; want nil", c)
	}
}

// Built in Go, one zone may hold every worker (share 1); a share above 1 is refused.
func TestGoBuiltZoneShareOne(t *testing.T) {
	s := edgeScenario(t)
	s.Workload.Workers = 4
	s.Workload.Zones = []Zone{{Name: "za", Share: 1}}
	if err := s.Validate(); err != nil {
		t.Errorf("one zone of share 1: %v; want valid", err)
	}
	s.Workload.Zones = []Zone{{Name: "za", Share: 1.5}, {Name: "zb", Share: -0.5}}
	const want = "edge.yaml: workload.zones.za: share 1.5; want a share of the workers in (0, 1]\nedge.yaml: workload.zones.zb: share -0.5; want a share of the workers in (0, 1]"
	if err := s.Validate(); fmt.Sprint(err) != want {
		t.Errorf("shares 1.5 and -0.5: %v; want\n%s", err, want)
	}
}

// A Go-built scenario may hold NaN or an infinity in a field that none of its checks reads
// (a field its fault kind leaves unused, a tune block): Validate refuses it by its JSON
// path, so that a scenario it passes always has a JSON form (JSON panics otherwise).
func TestGoBuiltNonFiniteUnusedFields(t *testing.T) {
	for _, c := range []struct {
		set  func(s *Scenario)
		want string
	}{
		{func(s *Scenario) { s.Faults[0].Factor = math.NaN() }, "edge.yaml: faults[0].factor: NaN; want a finite number"},
		{func(s *Scenario) { s.Faults[0].Share = math.Inf(1) }, "edge.yaml: faults[0].share: +Inf; want a finite number"},
		{func(s *Scenario) { s.Tune = &Tune{Confidence: math.Inf(-1)} }, "edge.yaml: tune.confidence: -Inf; want a finite number"},
		{func(s *Scenario) { s.Tune = &Tune{Vary: []TuneParam{{Path: "p", Max: math.NaN()}}} }, "edge.yaml: tune.vary[0].max: NaN; want a finite number"},
		{func(s *Scenario) {}, ""},
	} {
		s := edgeScenario(t)
		c.set(s)
		err := s.Validate()
		if got := fmt.Sprint(err); c.want == "" && err != nil || c.want != "" && got != c.want {
			t.Errorf("Validate: %v; want %q", err, c.want)
		}
		if err == nil {
			_ = s.JSON() // must not panic
		}
	}
}
