package scenarios

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// Validate guards scenarios built in Go, which skip the parser's checks.
func TestValidateHandBuilt(t *testing.T) {
	good := func() *Scenario {
		s, err := Parse("v.yaml", []byte(`name: v
tools: {a: {timeout: 1s}, b: {}}
faults: [{kind: lost_response, tool: a, probability: 0.1}]
recovery: {humans: {reviewers: 1, review_time: 1m}}
`), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("a parsed scenario fails Validate: %v", err)
	}
	cases := []struct {
		name  string
		spoil func(s *Scenario)
		key   string
	}{
		{"bad name", func(s *Scenario) { s.Name = "Bad Name" }, "name"},
		{"negative horizon", func(s *Scenario) { s.Horizon = -time.Second }, "horizon"},
		{"NaN probability", func(s *Scenario) { s.Workload.Behaviour.Stuck = math.NaN() }, "workload.behaviour.stuck"},
		{"mix names a missing tool", func(s *Scenario) { s.Workload.Mix[0].Tool = "zzz" }, "workload.tools.zzz"},
		{"zero weight", func(s *Scenario) { s.Workload.Mix[0].Weight = 0 }, "workload.tools.a"},
		{"lognormal p95 below median", func(s *Scenario) {
			s.Workload.Steps = Dist{Kind: DistLognormal, Median: 5, P95: 4}
		}, "workload.steps.p95"},
		{"stray parameter", func(s *Scenario) { s.Workload.Think = Dist{Kind: DistExponential, Mean: 1, Alpha: 2} }, "workload.think.alpha"},
		{"lost response without timeout", func(s *Scenario) { s.Tools[0].Timeout = 0 }, "faults[0]"},
		{"duplicate tool", func(s *Scenario) { s.Tools[1].Name = "a" }, "tools.a"},
		{"bad jitter", func(s *Scenario) { s.Recovery.Retry.Jitter = 9 }, "recovery.retry.jitter"},
		{"negative lease", func(s *Scenario) { s.Recovery.Lease = -time.Second }, "recovery.lease"},
		{"negative inspection interval", func(s *Scenario) { s.Recovery.Inspection.Interval = -time.Minute }, "recovery.inspection.interval"},
		{"negative inspection lookups", func(s *Scenario) { s.Recovery.Inspection.Max = -1 }, "recovery.inspection.max"},
		{"unknown metric", func(s *Scenario) { s.Expect = []Expectation{{Metric: "speed", Op: ">="}} }, "expect.speed"},
		{"fault index", func(s *Scenario) { s.Faults[0].Index = 3 }, "faults[0].index"},
		{"fault tool on a kind without tools", func(s *Scenario) {
			s.Faults = append(s.Faults, Fault{ID: "1", Index: 1, Kind: FaultWorkerCrash, Tool: "a"})
		}, "faults[1].tool"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := good()
			c.spoil(s)
			err := s.Validate()
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Validate() = %v, want an ErrorList", err)
			}
			found := false
			for _, e := range list {
				found = found || e.Key == c.key
			}
			if !found {
				t.Errorf("no error for key %s in:\n%v", c.key, err)
			}
			if !strings.HasPrefix(err.Error(), "v.yaml: ") {
				t.Errorf("error does not name the file: %v", err)
			}
		})
	}
}

// TestRuleKeys: every key whose rule the decoder or Validate reads from the key tree is in
// the tree with the kind the rule expects; ruleAt gives a key it cannot find no rule at
// all, so a misspelt key here would silently skip its check.
func TestRuleKeys(t *testing.T) {
	kinds := map[valueKind][]string{
		kindDuration: {"horizon", "workload.arrival.uniform", "tools.x.timeout", "faults[0].at", "faults[3].for",
			"recovery.retry.initial", "recovery.retry.max", "recovery.breaker.window", "recovery.breaker.cooldown",
			"recovery.inspection.interval", "recovery.budgets.wall", "recovery.lease", "recovery.supervisor.latency",
			"model.latency_per_1k_tokens"},
		kindInt: {"workload.investigations", "workload.subagents.max_depth", "workload.workers", "tools.x.concurrency",
			"tools.x.queue_limit", "recovery.retry.max_attempts", "recovery.breaker.min_calls", "recovery.inspection.max",
			"recovery.revisions", "recovery.non_progress.repeats", "recovery.budgets.tokens", "recovery.supervisor.tokens",
			"recovery.humans.reviewers"},
		kindNumber: {"tools.x.compute", "faults[0].slowdown", "faults[0].factor", "recovery.retry.multiplier",
			"recovery.retry_budget.ratio", "recovery.retry_budget.min_per_second", "recovery.budgets.cost",
			"model.requests_per_minute", "model.tokens_per_minute"},
		kindEnum: {"workload.priority", "tools.x.idempotency", "recovery.retry.jitter", "recovery.retry.on_exhausted",
			"recovery.on_exhaustion", "recovery.supervisor.kind"},
	}
	for kind, keys := range kinds {
		for _, k := range keys {
			if got := ruleAt(k); got.kind != kind {
				t.Errorf("ruleAt(%s) has kind %d, want %d", k, got.kind, kind)
			}
		}
	}
	if ruleAt("recovery.retry.max_attempts").max != 1000 || !ruleAt("recovery.lease").above || ruleAt("tools.x.timeout").above {
		t.Error("the tree's bounds for max_attempts, lease or timeout are not what docs/scenarios.md says")
	}
	// A free key holding dots (a tool built in Go) still finds its rule.
	if ruleAt("tools.a.b.timeout").kind != kindDuration {
		t.Error("tools.a.b.timeout: no rule")
	}
	if ruleAt("recovery.nonsense") != leaf {
		t.Error("an unknown key has a rule")
	}
}

// TestValidateDottedToolName: a tool whose name holds dots is valid, and its keys are
// spelt with the name quoted; a name the format refuses (a line break) is an error, not a
// panic.
func TestValidateDottedToolName(t *testing.T) {
	s := Defaults()
	s.Name = "v"
	s.Tools = []Tool{{Name: "a.b", Latency: Dist{Kind: DistConstant}, Idempotency: None, Timeout: -time.Second}}
	s.Workload.Mix = []Weight{{Tool: "a.b", Weight: 1}}
	err := s.Validate()
	if err == nil || !strings.Contains(err.Error(), `tools."a.b".timeout: -1s`) || strings.Contains(err.Error(), "tool name") {
		t.Errorf("Validate = %v; want the negative timeout alone, at tools.\"a.b\".timeout", err)
	}
	s.Tools[0].Name, s.Workload.Mix[0].Tool, s.Tools[0].Timeout = "a\nb", "a\nb", 0
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), `tools."a\nb": the tool name "a\nb" holds the control character U+000A`) {
		t.Errorf("Validate = %v; want the line break refused", err)
	}
}

// An expectation on a cost metric in a scenario without prices could never hold (the metric
// is n/a in every run): validation refuses it at its line, saying why.
func TestCostExpectationNeedsPrices(t *testing.T) {
	base, _ := Embedded("transient-errors")
	if bytes.Contains(base, []byte("\nprices:")) {
		t.Fatal("transient-errors has prices; the test needs an unpriced scenario")
	}
	data := append(bytes.Clone(base), []byte("\nexpect:\n  cost_per_completion: \"<= 2\"\n")...)
	if bytes.Contains(base, []byte("\nexpect:")) {
		data = bytes.Replace(bytes.Clone(base), []byte("\nexpect:\n"), []byte("\nexpect:\n  cost_per_completion: \"<= 2\"\n"), 1)
	}
	_, err := Parse("f.yaml", data, nil)
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("%v; want a refusal", err)
	}
	e := list[0]
	if e.Key != "expect.cost_per_completion" || e.Line == 0 || !strings.Contains(e.Msg, "no prices") {
		t.Errorf("%v; want expect.cost_per_completion refused at its line for want of prices", err)
	}
	if strings.Contains(e.Msg, "denominator") {
		t.Errorf("%v: the reason is the missing prices, not a zero denominator", err)
	}
	s := &Scenario{Expect: []Expectation{{Metric: "wasted_cost_ratio", Op: "<=", Value: 1}}}
	v := &validator{}
	v.checks(s)
	if len(v.errs) != 1 || v.errs[0].Key != "expect.wasted_cost_ratio" {
		t.Errorf("Validate's check: %v; want expect.wasted_cost_ratio refused", v.errs)
	}
}
