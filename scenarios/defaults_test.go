package scenarios

import (
	"reflect"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
)

// The expected values are written out here rather than taken from defaults.go, so a changed
// default fails this test and has to be changed in doc.go too.
func TestDefaults(t *testing.T) {
	s, err := Parse("min.yaml", []byte("name: min\ntools: {a: {}, b: {timeout: 5s}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Source = SourceInfo{}
	want := &Scenario{
		Name:    "min",
		Seed:    1,
		Horizon: 30 * 24 * time.Hour,
		Workload: Workload{
			Investigations: 1,
			Arrival:        Arrival{Kind: ArrivalAtOnce},
			Steps:          Dist{Kind: DistConstant, Value: 1},
			Think:          Dist{Kind: DistConstant},
			Tokens:         Dist{Kind: DistConstant},
			Mix:            []Weight{{Tool: "a", Weight: 1}, {Tool: "b", Weight: 1}},
			Subagents:      Subagents{Count: Dist{Kind: DistConstant, Value: 1}, MaxDepth: 1},
		},
		Tools: []Tool{
			{Name: "a", Latency: Dist{Kind: DistConstant}, Idempotency: None, Compute: 1},
			{Name: "b", Latency: Dist{Kind: DistConstant}, Idempotency: None, Timeout: 5 * time.Second, Compute: 1},
		},
		Recovery: Recovery{
			Retry: Retry{
				MaxAttempts: 3, Initial: time.Second, Multiplier: 2, Max: time.Minute,
				Jitter: recovery.JitterFull, OnExhausted: recovery.ExhaustedEscalate,
			},
			InspectBeforeRetry: true,
			Inspection:         Inspection{Interval: time.Minute, Max: 60},
			OnExhaustion:       "terminate",
			Lease:              5 * time.Minute,
			Supervisor:         Supervisor{Kind: "rules"},
			Subagents:          SubagentRecovery{OnFailure: SubagentFailure{Action: "reduce_scope"}},
		},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("defaults:\n got %s\nwant %s", s.JSON(), want.JSON())
	}
	if err := s.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

// A block written as {} is switched on with its own defaults; null leaves it off.
func TestEmptyBlocksTakeDefaults(t *testing.T) {
	src := `name: blocks
tools: {a: {}}
workload:
  subagents: {probability: 0.5}
recovery:
  retry: {max_attempts: 7}
  inspection: {interval: 30s}
  retry_budget: {}
  breaker: {}
  non_progress: {}
  humans: {reviewers: 0}
  supervisor: {kind: model, accuracy: 0.75}
faults:
  - {kind: brownout, tool: a, for: 1h, probability: 0.5}
`
	s, err := Parse("blocks.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Recovery
	if got, want := r.Retry, (Retry{MaxAttempts: 7, Initial: time.Second, Multiplier: 2, Max: time.Minute, Jitter: recovery.JitterFull, OnExhausted: recovery.ExhaustedEscalate}); got != want {
		t.Errorf("retry = %+v, want %+v (unnamed keys keep their defaults)", got, want)
	}
	if got, want := r.Inspection, (Inspection{Interval: 30 * time.Second, Max: 60}); got != want {
		t.Errorf("inspection = %+v, want %+v (unnamed keys keep their defaults)", got, want)
	}
	if r.RetryBudget == nil || *r.RetryBudget != (RetryBudget{Ratio: 0.1, MinPerSecond: 1}) {
		t.Errorf("retry_budget = %+v, want ratio 0.1, min_per_second 1", r.RetryBudget)
	}
	// The breaker's defaults are the engine's, which recovery pins field by field.
	if r.Breaker == nil || *r.Breaker != recovery.DefaultBreaker {
		t.Errorf("breaker = %+v, want recovery.DefaultBreaker %+v", r.Breaker, recovery.DefaultBreaker)
	}
	if r.NonProgress == nil || r.NonProgress.Repeats != 3 {
		t.Errorf("non_progress = %+v, want repeats 3", r.NonProgress)
	}
	if r.Humans == nil || !reflect.DeepEqual(*r.Humans, Humans{Reviewers: 0, ReviewTime: Dist{Kind: DistConstant}, Approve: 1}) {
		t.Errorf("humans = %+v, want 0 reviewers, approve 1", r.Humans)
	}
	if r.Supervisor != (Supervisor{Kind: "model", Accuracy: 0.75}) {
		t.Errorf("supervisor = %+v, want model 0.75 with zero latency and tokens", r.Supervisor)
	}
	if sa := s.Workload.Subagents; sa != (Subagents{Probability: 0.5, Count: Dist{Kind: DistConstant, Value: 1}, MaxDepth: 1}) {
		t.Errorf("subagents = %+v, want count constant 1, max_depth 1", sa)
	}
	if f := s.Faults[0]; f.Slowdown != 1 || f.At != 0 || f.ID != "0" {
		t.Errorf("brownout = %+v, want slowdown 1, at 0, id 0", f)
	}

	off, err := Parse("off.yaml", []byte("name: off\ntools: {a: {}}\nrecovery:\n  breaker: null\n  humans:\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if off.Recovery.Breaker != nil || off.Recovery.Humans != nil {
		t.Errorf("null blocks switched on: breaker %+v humans %+v", off.Recovery.Breaker, off.Recovery.Humans)
	}
}

// Values: units and shorthand forms resolve to the documented units.
func TestValueUnits(t *testing.T) {
	src := `name: units
horizon: 1.5d
tools:
  a: {latency: 200ms, timeout: 2h30m}
workload:
  arrival: {poisson: 100/h}
  think: {dist: uniform, min: 1s, max: 1m}
  tokens: {dist: pareto, min: 100, alpha: 1.5}
recovery:
  budgets: {tokens: 5000, compute: 10h, wall: 3d}
faults:
  - {kind: worker_crash, rate: 1/24h}
expect:
  makespan: "<= 2h"
  completion_rate: "between 0.5 and 1"
`
	s, err := Parse("units.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"horizon ns", float64(s.Horizon), float64(36 * time.Hour)},
		{"latency ns", s.Tools[0].Latency.Value, float64(200 * time.Millisecond)},
		{"timeout ns", float64(s.Tools[0].Timeout), float64(150 * time.Minute)},
		{"poisson per second", s.Workload.Arrival.Rate.PerSecond, 100.0 / 3600},
		{"think max ns", s.Workload.Think.Max, float64(time.Minute)},
		{"tokens pareto min", s.Workload.Tokens.Min, 100},
		{"tokens pareto alpha", s.Workload.Tokens.Alpha, 1.5},
		{"compute budget cu-s", s.Recovery.Budgets.Compute, 36000},
		{"wall budget ns", float64(s.Recovery.Budgets.Wall), float64(72 * time.Hour)},
		{"crash rate per second", s.Faults[0].Rate.PerSecond, 1.0 / 86400},
		// expect is read in metric order: completion_rate, then makespan.
		{"makespan bound s", s.Expect[1].Value, 7200},
		{"between upper", s.Expect[0].Upper, 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if s.Expect[1].Line != 14 {
		t.Errorf("expect line = %d, want 14", s.Expect[1].Line)
	}
}

// recovery.subagents.on_failure, in a file and on the command line: a word, respawn alone
// meaning one replacement and then reduce_scope, or a mapping whose omitted keys take those
// defaults.
func TestSubagentFailurePolicy(t *testing.T) {
	for _, tc := range []struct {
		set  string
		want SubagentFailure
	}{
		{"", SubagentFailure{Action: "reduce_scope"}},
		{"recovery.subagents.on_failure=fail", SubagentFailure{Action: "fail"}},
		{"recovery.subagents.on_failure=respawn", SubagentFailure{Action: "respawn", Max: 1, Then: "reduce_scope"}},
		{"recovery.subagents.on_failure={action: respawn, max: 3}", SubagentFailure{Action: "respawn", Max: 3, Then: "reduce_scope"}},
		{"recovery.subagents.on_failure={action: respawn, max: 0, then: fail}", SubagentFailure{Action: "respawn", Then: "fail"}},
		{"recovery.subagents={on_failure: {action: reduce_scope}}", SubagentFailure{Action: "reduce_scope"}},
	} {
		var sets []string
		if tc.set != "" {
			sets = []string{tc.set}
		}
		s, err := Parse("t.yaml", []byte("name: t\ntools: {a: {}}\n"), sets)
		if err != nil {
			t.Errorf("%s: %v", tc.set, err)
			continue
		}
		if got := s.Recovery.Subagents.OnFailure; got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.set, got, tc.want)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", tc.set, err)
		}
	}
}
