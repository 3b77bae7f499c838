package sim

import (
	"slices"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// Tests at the edges: constant latencies and no jitter, so that each instant is exact and a
// bound one nanosecond off shows.

// exactScenario: n investigations arriving at once, one step each, a model turn of think
// and a tool of constant latency lat; retries without jitter.
func exactScenario(n int, think, lat time.Duration) *scenarios.Scenario {
	s := testScenario()
	s.Workload.Investigations = n
	s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
	s.Workload.Think = scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(think)}
	s.Tools[0].Latency = scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(lat)}
	s.Recovery.Retry.Jitter = recovery.JitterNone
	return s
}

func toolSpans(c *record.Collector) []record.Span {
	var out []record.Span
	for _, sp := range c.Spans {
		if sp.Operation == record.OpExecuteTool {
			out = append(out, sp)
		}
	}
	return out
}

// A fault window is [at, at+for): the first attempt of an investigation whose model turn
// ends exactly at the window's start fails, one that ends exactly at its end succeeds, and
// so do the instants one nanosecond outside.
func TestFaultWindowEdges(t *testing.T) {
	const at, dur = 10 * time.Second, 10 * time.Second
	for _, kind := range []scenarios.FaultKind{scenarios.FaultOutage, scenarios.FaultHang} {
		for _, tc := range []struct {
			send time.Duration
			hit  bool
		}{{at - 1, false}, {at, true}, {at + dur - 1, true}, {at + dur, false}} {
			s := exactScenario(1, tc.send, 100*time.Millisecond)
			s.Tools[0].Timeout = time.Second
			s.Faults = []scenarios.Fault{{ID: "w", Kind: kind, Tool: "svc", At: at, For: dur}}
			var c record.Collector
			run(t, s, 1, &c)
			sp := toolSpans(&c)
			if len(sp) == 0 || sp[0].Start != int64(tc.send) {
				t.Fatalf("%s, send at %v: first attempt %+v", kind, tc.send, sp)
			}
			if hit := sp[0].FaultID == "w"; hit != tc.hit || hit == (sp[0].Status == record.StatusOK) {
				t.Errorf("%s [%v, %v), an attempt at %v: status %s fault %q, want hit %t", kind, at, at+dur, tc.send, sp[0].Status, sp[0].FaultID, tc.hit)
			}
		}
	}
}

// A worker that crashes during an attempt ends the attempt's span at the crash; another
// worker takes over exactly one lease later (workers unlimited), which the crashed
// transition records.
func TestTakeoverExactlyOneLeaseAfterCrash(t *testing.T) {
	s := exactScenario(60, 0, 20*time.Minute)
	s.Tools[0].Timeout = time.Hour
	s.Recovery.Lease = 7 * time.Minute
	s.Faults = []scenarios.Fault{{ID: "crash", Kind: scenarios.FaultWorkerCrash, Rate: scenarios.Rate{PerSecond: 1.0 / 1800}}}
	var c record.Collector
	run(t, s, 3, &c)
	takeovers := map[int64][]int64{}
	for _, tr := range c.Transitions {
		if tr.Event == "crashed" {
			takeovers[tr.InvestigationID] = append(takeovers[tr.InvestigationID], tr.At)
		}
	}
	checked := 0
	for _, sp := range toolSpans(&c) {
		if sp.FaultID != "crash" {
			continue
		}
		want := sp.End + int64(s.Recovery.Lease)
		if !slices.Contains(takeovers[sp.InvestigationID], want) {
			t.Fatalf("investigation %d crashed at %v: takeovers at %v, want one at %v", sp.InvestigationID,
				time.Duration(sp.End), takeovers[sp.InvestigationID], time.Duration(want))
		}
		if slices.ContainsFunc(takeovers[sp.InvestigationID], func(at int64) bool { return at > sp.End && at < want }) {
			t.Fatalf("investigation %d crashed at %v was taken over before its lease ran: %v", sp.InvestigationID, time.Duration(sp.End), takeovers[sp.InvestigationID])
		}
		checked++
	}
	// 60 attempts of 20 minutes at one crash per 30 minutes: about 29 crash in the first
	// attempt alone (1 - e^(-2/3) of 60).
	if checked < 10 {
		t.Fatalf("only %d crashes during attempts", checked)
	}
}

// A rate limit of R per minute admits exactly R calls at once from a full bucket and refuses
// the next; a token limit of T admits exactly T/tokens turns.
func TestModelLimitsAdmitExactlyTheLimit(t *testing.T) {
	for _, tc := range []struct {
		name        string
		model       scenarios.ModelService
		n, admitted int
	}{
		{"requests R of R", scenarios.ModelService{RequestsPerMinute: 7}, 7, 7},
		{"requests R of R+1", scenarios.ModelService{RequestsPerMinute: 7}, 8, 7},
		{"tokens 5 turns of 5", scenarios.ModelService{TokensPerMinute: 500}, 5, 5},
		{"tokens 5 turns of 6", scenarios.ModelService{TokensPerMinute: 500}, 6, 5},
	} {
		s := exactScenario(tc.n, time.Second, 0)
		s.Model = &tc.model
		s.Recovery.Retry.MaxAttempts = 1
		s.Recovery.OnExhaustion = "terminate"
		var c record.Collector
		run(t, s, 1, &c)
		admitted, refused := modelTurns(&c, 1) // the turns started at 0
		if admitted != tc.admitted || refused["rate_limited"] != tc.n-tc.admitted || len(refused) > 1 {
			t.Errorf("%s: %d admitted and %v refused at once, want %d and %d rate_limited", tc.name, admitted, refused, tc.admitted, tc.n-tc.admitted)
		}
	}
}

// An investigation paused by an exhausted budget resumes exactly pauseFor later.
func TestBudgetPauseLastsExactlyItsLength(t *testing.T) {
	s := exactScenario(20, time.Second, time.Second)
	s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 5}
	s.Recovery.Budgets.Tokens = 250
	s.Recovery.OnExhaustion = "pause"
	var c record.Collector
	run(t, s, 1, &c)
	pausedAt := map[int64]int64{}
	resumed := 0
	for _, tr := range c.Transitions {
		if tr.Action == "pause" && tr.To == "waiting" {
			pausedAt[tr.InvestigationID] = tr.At
			continue
		}
		if p, ok := pausedAt[tr.InvestigationID]; ok && tr.From == "waiting" {
			if tr.At != p+int64(pauseFor) {
				t.Fatalf("investigation %d paused at %v left waiting at %v, want %v later", tr.InvestigationID, time.Duration(p), time.Duration(tr.At), pauseFor)
			}
			delete(pausedAt, tr.InvestigationID)
			resumed++
		}
	}
	if resumed != 20 || len(pausedAt) != 0 {
		t.Fatalf("%d pauses ended, %d did not", resumed, len(pausedAt))
	}
}

// A retry budget that only refills at its floor (ratio 0, one token per 10 s, a bucket of
// 10): every retry fails, so the k-th retry (k > 10) is never sent before (k-10)·10 s, and
// with demand enough the floor is used: by 200 s the bucket has let 10 + 19 through (or 20,
// when a token refilled at 200 s is taken at once).
func TestThrottledRetryNotBeforeRefill(t *testing.T) {
	s := exactScenario(40, 0, 100*time.Millisecond)
	s.Recovery.Retry.MaxAttempts = 30
	s.Recovery.Retry.Multiplier = 1
	s.Recovery.RetryBudget = &scenarios.RetryBudget{Ratio: 0, MinPerSecond: 0.1}
	s.Faults = []scenarios.Fault{{ID: "err", Kind: scenarios.FaultTransient, Tool: "svc", Probability: 1}}
	var c record.Collector
	run(t, s, 1, &c)
	var retries []int64
	for _, sp := range toolSpans(&c) {
		if sp.Attempt > 1 {
			retries = append(retries, sp.Start)
		}
	}
	slices.Sort(retries)
	for k := 11; k <= len(retries); k++ {
		if earliest := int64(k-10) * int64(10*time.Second); retries[k-1] < earliest {
			t.Fatalf("retry %d sent at %v, before the floor refilled its token at %v", k, time.Duration(retries[k-1]), time.Duration(earliest))
		}
	}
	by200 := 0
	for _, at := range retries {
		if at <= int64(200*time.Second) {
			by200++
		}
	}
	if by200 < 29 || by200 > 30 {
		t.Fatalf("%d retries by 200 s, want 10 from the bucket and 19 or 20 from the floor", by200)
	}
}
