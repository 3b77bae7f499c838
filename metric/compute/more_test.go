package compute

import (
	"math"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// A valid result at the very instant of the step's first sign recovers it, in 0 s; one
// before the sign does not.
func TestRecoveredAtTheSignsInstant(t *testing.T) {
	h := newHand(Options{})
	h.valid(1, 1, 5*sec)
	h.failed(1, 1, 10*sec)
	h.valid(1, 1, 10*sec)
	h.row(1, 0, 20*sec)
	r := h.finish(t)
	if g, m := r.Get("episode_recovery_rate"), r.Get("median_recovery_time"); g != 1 || m != 0 {
		t.Errorf("episode_recovery_rate %v, median_recovery_time %v; want 1 and 0", g, m)
	}
}

// Every root rate counts roots only, and reads its tree: a subagent completed with a wrong
// result makes its root's completion incorrect, as a reduced scope does, and one that
// escalated puts its root among those that needed a human.
func TestRootRates(t *testing.T) {
	s := New(Options{Redact: strings.ToUpper})
	inv := func(r record.Investigation) { s.Investigation(&r) }
	// Root 1 completed, valid and validated, full scope; its subagent 2 completed wrong.
	inv(record.Investigation{InvestigationID: 2, ParentID: 1, RootID: 1, Ended: true, EndedAt: sec, FinalState: "completed"})
	inv(record.Investigation{InvestigationID: 1, RootID: 1, Ended: true, EndedAt: 2 * sec, FinalState: "completed", TrulyValid: true, Validated: true, Scope: record.ScopeFull})
	// Root 3 completed, valid, reduced scope; its subagent 4 escalated.
	inv(record.Investigation{InvestigationID: 4, ParentID: 3, RootID: 3, Ended: true, EndedAt: sec, FinalState: "completed", TrulyValid: true, Escalations: 1})
	inv(record.Investigation{InvestigationID: 3, RootID: 3, Ended: true, EndedAt: 2 * sec, FinalState: "completed", TrulyValid: true, Scope: record.ScopeReduced})
	// Root 5 terminated without a reason after 2 escalations; root 6 terminated on a budget;
	// root 7 still open.
	inv(record.Investigation{InvestigationID: 5, RootID: 5, Ended: true, EndedAt: sec, FinalState: "terminated", Escalations: 2})
	inv(record.Investigation{InvestigationID: 6, RootID: 6, Ended: true, EndedAt: sec, FinalState: "terminated", TerminationReason: "budget"})
	inv(record.Investigation{InvestigationID: 7, RootID: 7, FinalState: "running"})
	// Root 8 completed, valid, full scope: the one correct completion.
	inv(record.Investigation{InvestigationID: 8, RootID: 8, Ended: true, EndedAt: sec, FinalState: "completed", TrulyValid: true})
	r, err := s.Finish(0)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{
		"started": 6, "completed": 3, "terminated": 2,
		"completion_rate": 3.0 / 6, "correct_completion_rate": 1.0 / 6, "validation_pass_rate": 1.0 / 3,
		"full_scope_completion_rate": 2.0 / 6, "human_intervention_rate": 2.0 / 6, "terminated_rate": 2.0 / 6,
		"unfinished_rate": 1.0 / 6,
	} {
		if g := r.Get(name); g != want {
			t.Errorf("%s = %v, want %v", name, g, want)
		}
	}
	if len(r.TerminationReasons) != 2 || r.TerminationReasons["unspecified"] != 1 || r.TerminationReasons["BUDGET"] != 1 {
		t.Errorf("termination reasons %v; want unspecified 1 and BUDGET 1 (redacted)", r.TerminationReasons)
	}
}

// Of the model turns an operation's attempts name, all but the first (by start) are
// wasted, and the first too when the operation has no valid result.
func TestWastedTurns(t *testing.T) {
	h := newHand(Options{})
	turn := func(id uint64, at, tokens int64) {
		h.s.Span(&record.Span{InvestigationID: 1, SpanID: id, Operation: record.OpPlan, Start: at, End: at,
			InputTokens: tokens / 2, OutputTokens: tokens - tokens/2, Status: record.StatusOK,
			Attrs: []record.Attr{{Key: "kind", Value: "model_turn"}}})
	}
	attempt := func(step int32, id uint64, causedBy ...uint64) {
		h.s.Span(&record.Span{InvestigationID: 1, SpanID: id, Operation: record.OpExecuteTool, Tool: "t", HasKey: true,
			OpKey: record.OpKey{Investigation: 1, Step: step}, Start: 9 * sec, End: 9 * sec, Status: record.StatusOK, CausedBy: causedBy})
	}
	turn(12, 2*sec, 50) // started later: wasted
	turn(11, sec, 100)  // step 1's first turn, kept: the step is valid
	turn(13, 3*sec, 30) // step 2's only turn: wasted, the step never is valid
	attempt(1, 21, 99, 11)
	attempt(1, 22, 99, 12) // a third distinct causer (99 is no turn)
	attempt(1, 23, 99, 12, 11)
	attempt(2, 24, 99, 13)
	h.valid(1, 1, 10*sec)
	h.s.Investigation(&record.Investigation{InvestigationID: 1, RootID: 1, Ended: true, EndedAt: 20 * sec, FinalState: "completed", TrulyValid: true, Tokens: 1000})
	r := h.finish(t)
	if g := r.Get("wasted_token_ratio"); g != 80.0/1000 {
		t.Errorf("wasted_token_ratio = %v (%v tokens), want 80/1000", g, g*1000)
	}
}

// Executions: a duplicate is any execution after the first; a discarded result is one done
// (ok, or lost) and never delivered; a hung execution does not extend the run.
func TestExecutions(t *testing.T) {
	h := newHand(Options{})
	ex := func(e record.Execution) { e.InvestigationID, e.Tool = 1, "t"; h.s.Execution(&e) }
	ex(record.Execution{Execution: 1, Outcome: "ok", Delivered: true, SideEffects: true, Compute: 1, End: sec})
	ex(record.Execution{Execution: 2, Outcome: "ok", Delivered: true, SideEffects: true, Compute: 2, End: 2 * sec})
	ex(record.Execution{Execution: 3, Outcome: "lost", SideEffects: false, Compute: 4, End: 3 * sec})
	ex(record.Execution{Execution: 1, Outcome: "cancelled", Compute: 8, End: 4 * sec})
	ex(record.Execution{Execution: 1, Outcome: "hung", Compute: 16, End: 100 * sec})
	h.row(1, 0, 5*sec)
	r := h.finish(t)
	for name, want := range map[string]float64{
		"duplicate_side_effects": 1, "discarded_results": 1, "makespan": 5,
		"compute_per_completion": 31, "wasted_compute_ratio": 6.0 / 31, // the duplicates' 2 and 4 of 31
	} {
		if g := r.Get(name); g != want {
			t.Errorf("%s = %v, want %v", name, g, want)
		}
	}
}

// Money: tokens at the model's price per 1000, calls at the tool's, compute at its price
// per second; a failed attempt's call is wasted.
func TestPrices(t *testing.T) {
	prices := &scenarios.Prices{Currency: "USD",
		Models: []scenarios.ModelPrice{{Model: "m", Input: 1, Output: 3}},
		Tools:  []scenarios.ToolPrice{{Tool: "t", Call: 0.5, ComputeSecond: 0.25}}}
	h := newHand(Options{Prices: prices})
	h.s.Span(&record.Span{InvestigationID: 1, SpanID: 1, Operation: record.OpPlan, Model: "m", InputTokens: 2000, OutputTokens: 1000,
		Status: record.StatusOK, Attrs: []record.Attr{{Key: "kind", Value: "model_turn"}}})
	h.s.Span(&record.Span{InvestigationID: 1, SpanID: 2, Operation: record.OpSupervise, Model: "m", InputTokens: 1000, Status: record.StatusOK})
	h.s.Span(&record.Span{InvestigationID: 1, SpanID: 3, Operation: record.OpPlan, Model: "other", InputTokens: 1000, Status: record.StatusOK})
	h.failed(1, 1, sec)
	h.s.Span(&record.Span{InvestigationID: 1, SpanID: 5, Operation: record.OpExecuteTool, Tool: "t", HasKey: true,
		OpKey: record.OpKey{Investigation: 1, Step: 1}, Attempt: 2, Start: 2 * sec, End: 2 * sec, Status: record.StatusOK})
	h.s.Execution(&record.Execution{Tool: "t", InvestigationID: 1, Execution: 1, Outcome: "ok", Delivered: true, Compute: 4, End: 2 * sec})
	h.s.Investigation(&record.Investigation{InvestigationID: 1, RootID: 1, Ended: true, EndedAt: 3 * sec, FinalState: "completed", TrulyValid: true})
	r := h.finish(t)
	// 2 + 3 (turn) + 1 (supervisor) + 0 (unpriced model) + 2 calls at 0.5 + 4 s at 0.25 = 8,
	// of which the failed attempt's call, 0.5, is wasted.
	if g := r.Get("cost_per_completion"); g != 8 {
		t.Errorf("cost_per_completion = %v, want 8", g)
	}
	if g := r.Get("wasted_cost_ratio"); g != 0.5/8 {
		t.Errorf("wasted_cost_ratio = %v, want 0.5/8", g)
	}
	if r.Currency != "USD" {
		t.Errorf("currency %q", r.Currency)
	}
	if g := newHand(Options{}).finish(t).Get("cost_per_completion"); !math.IsNaN(g) {
		t.Errorf("unpriced: cost_per_completion = %v, want NaN", g)
	}
}

// The states of investigations 0 to maxDense-1 live in the dense slice, which never grows
// past maxDense entries; other ids (negative, or maxDense and above) in the sparse map.
func TestStateStorage(t *testing.T) {
	h := newHand(Options{})
	for _, id := range []int64{0, 1, 5000, maxDense, maxDense + 1, -1} {
		h.row(id, 0, sec)
	}
	h.finish(t)
	if n := len(h.s.states.dense); n > maxDense || n < 5001 {
		t.Errorf("%d dense states; want room for 5000, at most %d", n, maxDense)
	}
	if len(h.s.states.sparse) != 3 {
		t.Errorf("sparse states %v; want maxDense, maxDense+1 and -1", h.s.states.sparse)
	}
	for _, id := range []int64{0, 1, 5000, maxDense, maxDense + 1, -1} {
		if h.s.state(id)&stSettled == 0 {
			t.Errorf("investigation %d has no state", id)
		}
	}
}

// The recovery curve reaches 50% and 95% exactly (to within 10⁻⁹, the running product's
// rounding): 20 episodes of 1 s to 20 s, the first 19 recovered, the last never, recover
// 1/20 each, so half have at 10 s and 95% at 19 s.
func TestCurveReachesItsQuantilesExactly(t *testing.T) {
	h := newHand(Options{})
	for i := int64(1); i <= 20; i++ {
		h.failed(i, 1, 0)
		if i < 20 {
			h.valid(i, 1, i*sec)
		}
		h.row(i, 0, i*sec)
	}
	r := h.finish(t)
	for name, want := range map[string]float64{"median_recovery_time": 10, "p95_recovery_time": 19, "episode_recovery_rate": 19.0 / 20} {
		if g := r.Get(name); g != want {
			t.Errorf("%s = %v, want %v", name, g, want)
		}
	}
}

// The Sink feeds the goodput rule (package metric/detect, whose tests hold its edges) the
// valid results' instants, the roots' arrivals and the fault windows: 15 valid results a
// minute from minute 7 (75 in the steady state, the second half of [2, 12)), none during the
// window [12, 14), then 15 a minute again until the arrivals end at 24: back at once. With no
// result after the window while roots still arrive, goodput was tested and never came back.
func TestGoodputFedFromTheRecords(t *testing.T) {
	for _, c := range []struct {
		name            string
		after           bool
		time, recovered float64
	}{{"back", true, 0, 1}, {"never", false, math.NaN(), 0}} {
		h := newHand(Options{})
		for m := int64(2); m <= 24; m++ {
			h.row(m, m*minute, m*minute+sec)
		}
		for m := int64(7); m <= 24; m++ {
			if m >= 12 && (m < 14 || !c.after) {
				continue
			}
			for i := range int64(15) {
				h.valid(0, 0, m*minute+i*4*sec)
			}
		}
		h.s.Fault(&record.Fault{Kind: "outage", Window: true, Start: 12 * minute, End: 14 * minute})
		r := h.finish(t)
		if g, ok := r.Get("goodput_recovery_time"), r.Get("goodput_recovered"); !same(g, c.time) || ok != c.recovered {
			t.Errorf("%s: goodput_recovery_time %v, goodput_recovered %v; want %v and %v", c.name, g, ok, c.time, c.recovered)
		}
	}
}

// GuardsOf: a breaker or a retry budget can park operations.
func TestGuardsOf(t *testing.T) {
	for _, c := range []struct {
		breaker, budget, want bool
	}{{false, false, false}, {true, false, true}, {false, true, true}, {true, true, true}} {
		var s scenarios.Scenario
		if c.breaker {
			s.Recovery.Breaker = &scenarios.Breaker{}
		}
		if c.budget {
			s.Recovery.RetryBudget = &scenarios.RetryBudget{}
		}
		if got := GuardsOf(&s); got != c.want {
			t.Errorf("breaker %v, budget %v: GuardsOf = %v, want %v", c.breaker, c.budget, got, c.want)
		}
	}
}

// A fault window that lasts less than a microsecond as the trace keeps it (zero length) is no
// window: no reference for the incident rule's baseline, no fault for goodput to return from.
func TestZeroLengthWindowIsNoWindow(t *testing.T) {
	h := newHand(Options{})
	h.s.Fault(&record.Fault{Kind: "outage", Window: true, Start: 12 * minute, End: 12*minute + 999})
	r := h.finish(t)
	if h.s.hasWindow || !math.IsNaN(r.Get("goodput_recovered")) {
		t.Errorf("a window of 999 ns counted: hasWindow %v, goodput_recovered %v", h.s.hasWindow, r.Get("goodput_recovered"))
	}
}
