package sim

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// TestOperationsReturnToPool: an operation's state goes back to the pool once the
// investigation has moved on and no request in a tool still points at it (its reference
// count reaches zero), and the next operation takes it from there. One investigation whose
// steps run one after another, each answered before the next is sent, so one state serves
// every step and the pool ends holding exactly that one. A count that never returns to zero
// leaves the pool empty; one that frees a state still referenced puts it there twice.
func TestOperationsReturnToPool(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 1
	s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
	s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 20}
	w, err := newSim(s.Canonical(), 1, record.Discard{}, Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	w.run(context.Background())
	if w.res.Completed != 1 || len(w.res.Violations) > 0 {
		t.Fatalf("result %+v", w.res)
	}
	if len(w.freeOps) != 1 {
		t.Fatalf("%d operation states in the pool after 20 steps one after another, want 1", len(w.freeOps))
	}
}

// TestViolationsBounded: a run keeps its first maxViolations violations and counts the rest
// in a last line, so a broken run cannot fill memory with its reports.
func TestViolationsBounded(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 1
	w, err := newSim(s.Canonical(), 1, record.Discard{}, Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	w.run(context.Background())
	if len(w.checker.violations) != 0 {
		t.Fatalf("violations in a clean run: %v", w.checker.violations)
	}
	for i := range maxViolations + 2 {
		w.checker.violate(w, "violation %d", i)
	}
	w.checker.final(w) // a finished clean run: adds only the count of the dropped
	v := w.checker.violations
	if len(v) != maxViolations+1 || v[maxViolations-1] != fmt.Sprintf("violation %d", maxViolations-1) ||
		v[maxViolations] != "... and 2 more violations" {
		t.Fatalf("%d violations kept, last two %q", len(v), v[len(v)-2:])
	}
}

// TestBrownoutThatDoesNothing: a brownout needs a probability above 0 or a slowdown above
// 1; one with neither is refused when the file is read, and either alone is accepted.
func TestBrownoutThatDoesNothing(t *testing.T) {
	for _, c := range []struct {
		fault string
		ok    bool
	}{
		{"{kind: brownout, tool: a, for: 1m, probability: 0, slowdown: 1}", false},
		{"{kind: brownout, tool: a, for: 1m, probability: 0.5, slowdown: 1}", true},
		{"{kind: brownout, tool: a, for: 1m, probability: 0, slowdown: 2}", true},
		{"{kind: brownout, tool: a, for: 1m, probability: 0.5}", true},
	} {
		_, err := scenarios.Parse("b.yaml", []byte("name: b\ntools: {a: {}}\nfaults:\n  - "+c.fault+"\n"), nil)
		if (err == nil) != c.ok || err != nil && !strings.Contains(err.Error(), "does nothing") {
			t.Errorf("%s: %v", c.fault, err)
		}
	}
}

// TestSupervisorAccuracyFor: the supervisor's accuracy on a case is its base accuracy less
// per_attempt for each attempt beyond the first, per_class for each failure class beyond the
// first and per_step for each step done, never below the floor nor above 1; without a
// difficulty block it is the base accuracy.
func TestSupervisorAccuracyFor(t *testing.T) {
	d := &scenarios.Difficulty{PerAttempt: 0.1, PerClass: 0.05, PerStep: 0.01, Floor: 0.2}
	s := supervisor{accuracy: 0.9, diff: d}
	tr := func(attempts, steps int32, classes ...recovery.Class) recovery.Trajectory {
		x := recovery.Trajectory{Attempts: attempts, Steps: steps}
		for _, c := range classes {
			x.Failures[c]++
		}
		return x
	}
	for _, c := range []struct {
		tr   recovery.Trajectory
		want float64
	}{
		{tr(0, 0), 0.9},
		{tr(1, 0, recovery.Transient), 0.9},
		{tr(3, 0, recovery.Transient), 0.7},
		{tr(1, 0, recovery.Transient, recovery.InvalidOutput), 0.85},
		{tr(1, 0, recovery.Transient, recovery.InvalidOutput, recovery.NonProgress), 0.8},
		{tr(1, 5), 0.85},
		{tr(2, 4, recovery.Transient, recovery.InvalidOutput), 0.71},
		{tr(30, 0), 0.2},
	} {
		if got := s.accuracyFor(c.tr); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%+v: %v, want %v", c.tr, got, c.want)
		}
	}
	gain := supervisor{accuracy: 0.9, diff: &scenarios.Difficulty{PerStep: -0.05}}
	if got := gain.accuracyFor(tr(1, 10)); got != 1 {
		t.Errorf("a negative per_step past 1: %v, want 1", got)
	}
	if got := (&supervisor{accuracy: 0.6}).accuracyFor(tr(9, 9, recovery.Transient)); got != 0.6 {
		t.Errorf("no difficulty: %v", got)
	}
}

// TestToolSpanCausedBy: a tool attempt's span names what it used: the investigation's
// configuration span first, then the result of the step before it (none for the first step),
// then the model turn that decided it; a model turn names the configuration and the result
// before it. The investigation's span carries its tokens.
func TestToolSpanCausedBy(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 1
	s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
	s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 2}
	s.Workload.Think = scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(time.Second)}
	var c record.Collector
	run(t, s, 1, &c)
	var tools, turns []record.Span
	for _, sp := range c.Spans {
		switch {
		case sp.Operation == record.OpExecuteTool:
			tools = append(tools, sp)
		case sp.Operation == record.OpPlan && sp.End > sp.Start:
			turns = append(turns, sp)
		}
	}
	if len(tools) != 2 || len(turns) != 2 {
		t.Fatalf("%d tool spans and %d model turns, want 2 and 2", len(tools), len(turns))
	}
	// The investigation's own span carries all its tokens, split as each turn's: two turns
	// of 100 are 150 in and 50 out.
	for _, sp := range c.Spans {
		if sp.Operation == record.OpInvokeAgent && (sp.InputTokens != 150 || sp.OutputTokens != 50) {
			t.Errorf("invoke_agent span: tokens %d in, %d out; want 150, 50", sp.InputTokens, sp.OutputTokens)
		}
	}
	cfg := tools[0].CausedBy[0]
	want := [][]uint64{{cfg, turns[0].SpanID}, {cfg, tools[0].SpanID, turns[1].SpanID}}
	for i, sp := range tools {
		if !slices.Equal(sp.CausedBy, want[i]) {
			t.Errorf("step %d: caused_by %v, want %v", i, sp.CausedBy, want[i])
		}
	}
	// Each step's result is named once, by its operation, and the validation reads it; the
	// tool read the configuration.
	for i, sp := range tools {
		if want := fmt.Sprintf("result/1/%d/0", i); sp.OutputRef != want || sp.InputRef != "cfg/1" {
			t.Errorf("step %d: input %q, output %q; want cfg/1, %s", i, sp.InputRef, sp.OutputRef, want)
		}
	}
	validated := 0
	for _, sp := range c.Spans {
		if sp.Operation == record.OpValidate {
			if want := fmt.Sprintf("result/1/%d/0", validated); sp.InputRef != want {
				t.Errorf("validation %d: input %q, want %s", validated, sp.InputRef, want)
			}
			validated++
		}
	}
	if validated != 2 {
		t.Errorf("%d validations, want 2", validated)
	}
	// A model turn names the configuration, then the last accepted result (none before the
	// first step's).
	want = [][]uint64{{cfg}, {cfg, tools[0].SpanID}}
	for i, sp := range turns {
		if !slices.Equal(sp.CausedBy, want[i]) {
			t.Errorf("model turn %d: caused_by %v, want %v", i, sp.CausedBy, want[i])
		}
	}
}

// TestWorkerCrashRate: a worker_crash of rate 0 is valid (it never fires) and a negative
// rate is refused; the size model counts, per investigation, the takeovers its rate allows
// over the horizon plus one: 10 an hour over 10h is 101 times a rate of 0's one.
func TestWorkerCrashRate(t *testing.T) {
	mk := func(perHour float64) *scenarios.Scenario {
		s := testScenario()
		s.Horizon = 10 * time.Hour
		s.Faults = []scenarios.Fault{{ID: "c", Kind: scenarios.FaultWorkerCrash, Rate: scenarios.Rate{PerSecond: perHour / 3600}}}
		return s
	}
	if err := mk(0).Validate(); err != nil {
		t.Errorf("rate 0: %v", err)
	}
	if err := mk(-1).Validate(); err == nil {
		t.Error("a negative rate was accepted")
	}
	zero, ten := scenarios.EstimateEvents(mk(0)).Crashes, scenarios.EstimateEvents(mk(10)).Crashes
	if zero <= 0 || math.Abs(ten/zero-101) > 1e-9 {
		t.Errorf("crash events: %v at rate 0, %v at 10 an hour; want a ratio of 101", zero, ten)
	}
}

// TestSupervisorWrongAnswers: a model supervisor's wrong answer, when another action is
// allowed, asks for more budget with probability 0.2, to lift a block with 0.1, to retry
// with 0.15, and picks another allowed action with 0.55. Here every consultation is about an
// invalid output whose right action is escalate and the one other allowed is terminate; an
// accuracy of 0 makes every answer wrong. Each count is binomial(n, p): it stays within 5
// standard deviations, sqrt(n p (1-p)), of n p (a chance of about 6e-7 each to fall outside
// for draws that change), while moving any threshold by 0.1 moves its count by 0.1 n, over
// 100 for the n of about 1000 here, at least 7 standard deviations.
func TestSupervisorWrongAnswers(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 2000
	s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 3}
	s.Workload.Behaviour = scenarios.Behaviour{InvalidOutput: 0.3, ReviseSuccess: 0.5}
	s.Recovery.Revisions = 1
	s.Recovery.Supervisor = scenarios.Supervisor{Kind: "model", Latency: 30 * time.Second}
	s.Recovery.Humans = &scenarios.Humans{Reviewers: 3, Approve: 0.5,
		ReviewTime: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(time.Minute)}}
	var c record.Collector
	run(t, s, 2, &c)
	counts := map[string]float64{}
	n := 0.0
	for i := range c.Spans {
		sp := &c.Spans[i]
		if sp.Operation != record.OpSupervise {
			continue
		}
		if attr(sp, "right_action") != "escalate" {
			t.Fatalf("a consultation whose right action is %s", attr(sp, "right_action"))
		}
		n++
		switch sugg, req := attr(sp, "suggestion"), attr(sp, "requests"); {
		case req != "":
			counts[req]++
		case sugg == "retry":
			counts["retry"]++
		case sugg == "terminate":
			counts["other"]++
		default:
			t.Fatalf("a wrong answer %s", sugg)
		}
	}
	if n < 500 {
		t.Fatalf("only %v consultations", n)
	}
	for k, p := range map[string]float64{"raise_budget": 0.2, "lift_block": 0.1, "retry": 0.15, "other": 0.55} {
		if sd := math.Sqrt(n * p * (1 - p)); math.Abs(counts[k]-n*p) > 5*sd {
			t.Errorf("%s: %v of %v wrong answers, want %v ± %.0f", k, counts[k], n, n*p, 5*sd)
		}
	}
}

// TestLinkJudged: a judgement's span names the operation under judgement when there is one,
// and is caused by the configuration, then by the last result when there is one; what the
// span held before is dropped.
func TestLinkJudged(t *testing.T) {
	key := record.OpKey{Investigation: 4, Step: 2}
	for _, c := range []struct {
		op     *opState
		result uint64
		want   []uint64
	}{
		{nil, 0, []uint64{5}},
		{nil, 9, []uint64{5, 9}},
		{&opState{key: key}, 0, []uint64{5}},
		{&opState{key: key}, 9, []uint64{5, 9}},
	} {
		s := record.Span{CausedBy: []uint64{1, 2, 3}}
		linkJudged(&s, &agent{op: c.op, cfgSpan: 5, resultSpan: c.result})
		if !slices.Equal(s.CausedBy, c.want) {
			t.Errorf("op %v, result %d: caused_by %v, want %v", c.op != nil, c.result, s.CausedBy, c.want)
		}
		if s.HasKey != (c.op != nil) || c.op != nil && s.OpKey != key {
			t.Errorf("op %v, result %d: key %t %v", c.op != nil, c.result, s.HasKey, s.OpKey)
		}
	}
}
