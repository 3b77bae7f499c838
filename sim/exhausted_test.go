package sim

import (
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// exhaustScenario: roots of 3 steps, some with one subagent; a transient fault fails half
// the attempts and an operation gets 2, so a quarter of the operations run out of attempts.
// No other failure can end an investigation.
func exhaustScenario(on recovery.Exhausted) *scenarios.Scenario {
	s := testScenario()
	s.Workload.Investigations = 300
	s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 3}
	s.Workload.Think = scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(time.Second)}
	s.Workload.Subagents = scenarios.Subagents{Probability: 0.2, Count: scenarios.Dist{Kind: scenarios.DistConstant, Value: 1}, MaxDepth: 1}
	s.Faults = []scenarios.Fault{{ID: "flaky", Kind: scenarios.FaultTransient, Tool: "svc", Probability: 0.5}}
	s.Recovery.Retry.MaxAttempts = 2
	s.Recovery.Retry.OnExhausted = on
	return s
}

// TestExhaustedReduceScope: with on_exhausted reduce_scope every investigation completes.
// Each step is either accepted or dropped (a transition with action reduce_scope, reason
// retries_exhausted), the last included; an investigation that dropped one, or whose
// subagent completed reduced, has scope reduced, and one that dropped nothing and lost
// nothing has scope full. The same scenario with on_exhausted terminate terminates the
// investigations that ran out instead. The run is deterministic (same digest twice).
//
// A root's 3 operations each run out with probability 0.5² = 0.25 (the subagent's too), so
// a root drops at least one step with probability 1 − 0.75³ ≈ 0.58: about 174 of 300, with
// a binomial standard deviation of √(300·0.58·0.42) ≈ 8.5. The bound 100 is 8 deviations
// below: it fails only if the action does not drop steps.
func TestExhaustedReduceScope(t *testing.T) {
	var c record.Collector
	s := exhaustScenario(recovery.ExhaustedReduceScope)
	run(t, s, 1, &c)
	drops := map[int64]int32{}
	for _, tr := range c.Transitions {
		if tr.Action == "reduce_scope" {
			if tr.Reason != recovery.ReasonRetriesExhausted || tr.From != "recovering" || tr.To != "running" ||
				tr.DecidedBy != "policy" {
				t.Fatalf("investigation %d: reduce_scope %s → %s by %s (%s); want recovering → running by policy, retries_exhausted",
					tr.InvestigationID, tr.From, tr.To, tr.DecidedBy, tr.Reason)
			}
			drops[tr.InvestigationID]++
		}
	}
	reducedChild := map[int64]bool{}
	for _, inv := range c.Investigations {
		if inv.ParentID != 0 && inv.Scope == record.ScopeReduced {
			reducedChild[inv.ParentID] = true
		}
	}
	rootsDropped := 0
	for _, inv := range c.Investigations {
		id := inv.InvestigationID
		if !inv.Ended || inv.FinalState != "completed" {
			t.Fatalf("investigation %d ended %t in %s (%s): want completed", id, inv.Ended, inv.FinalState, inv.TerminationReason)
		}
		if inv.ParentID == 0 && inv.Steps+drops[id] != 3 {
			t.Errorf("root %d: %d steps accepted, %d dropped; want 3 in all", id, inv.Steps, drops[id])
		}
		lost := drops[id] > 0 || reducedChild[id]
		if (inv.Scope == record.ScopeReduced) != lost {
			t.Errorf("investigation %d: scope %q, dropped %d steps, a subagent reduced %t", id, inv.Scope, drops[id], reducedChild[id])
		}
		if inv.ParentID == 0 && drops[id] > 0 {
			rootsDropped++
		}
	}
	t.Logf("%d of 300 roots dropped a step", rootsDropped)
	if rootsDropped < 100 {
		t.Errorf("%d of 300 roots dropped a step; want about 174, at least 100", rootsDropped)
	}

	// Terminate instead: the operations that ran out end their investigations.
	var ct record.Collector
	run(t, exhaustScenario(recovery.ExhaustedTerminate), 1, &ct)
	terminated := 0
	for _, inv := range ct.Investigations {
		if inv.ParentID == 0 && inv.FinalState == "terminated" && inv.TerminationReason == recovery.ReasonRetriesExhausted {
			terminated++
		}
		if inv.Scope == record.ScopeReduced && inv.FinalState == "completed" && inv.ParentID != 0 {
			t.Errorf("subagent %d completed reduced under on_exhausted terminate", inv.InvestigationID)
		}
	}
	if terminated < 100 {
		t.Errorf("with terminate %d of 300 roots terminated on spent retries; want about 174, at least 100", terminated)
	}

	if a, b := digestOf(t, s), digestOf(t, s); a != b {
		t.Errorf("same scenario and seed, digests %s and %s", a, b)
	}
}

func digestOf(t *testing.T, s *scenarios.Scenario) string {
	d, _ := digest(t, s, 7)
	return d
}

// TestExhaustedGiveUp: with give_up g, each spent operation ends its investigation
// (terminated, retries_exhausted, decided by the engine) with probability g, and otherwise
// takes on_exhausted (here reduce_scope: the step is dropped). Of E spent operations about
// g·E give up: with 1,000 roots of 3 steps, each spent with probability 0.25 (a root stops
// at its first give-up), E is about 700; the share that gave up is binomial, with standard
// deviation √(0.3·0.7/700) ≈ 0.017, so the bounds 0.3 ± 0.09 are five deviations. give_up 0
// leaves the run as it was (same digest as without the key); give_up 1 ends every
// investigation whose operation ran out.
func TestExhaustedGiveUp(t *testing.T) {
	s := exhaustScenario(recovery.ExhaustedReduceScope)
	s.Workload.Investigations = 1000
	s.Workload.Subagents = scenarios.Subagents{}
	s.Recovery.Retry.GiveUp = 0.3
	var c record.Collector
	run(t, s, 1, &c)
	gaveUp, dropped := 0, 0
	for _, tr := range c.Transitions {
		if tr.Reason != recovery.ReasonRetriesExhausted || tr.From != "recovering" {
			continue
		}
		switch {
		case tr.Action == "terminate" && tr.To == "terminated" && tr.DecidedBy == "engine":
			gaveUp++
		case tr.Action == "reduce_scope" && tr.DecidedBy == "policy":
			dropped++
		default:
			t.Fatalf("investigation %d: %s → %s, %s by %s on spent retries", tr.InvestigationID, tr.From, tr.To, tr.Action, tr.DecidedBy)
		}
	}
	share := float64(gaveUp) / float64(gaveUp+dropped)
	t.Logf("%d of %d spent operations gave up (%.3f)", gaveUp, gaveUp+dropped, share)
	if gaveUp+dropped < 500 || share < 0.21 || share > 0.39 {
		t.Errorf("%d of %d spent operations gave up; want about 0.3 of about 700", gaveUp, gaveUp+dropped)
	}
	terminated := 0
	for _, inv := range c.Investigations {
		if inv.FinalState == "terminated" {
			if inv.TerminationReason != recovery.ReasonRetriesExhausted {
				t.Errorf("investigation %d terminated for %s", inv.InvestigationID, inv.TerminationReason)
			}
			terminated++
		}
	}
	if terminated != gaveUp {
		t.Errorf("%d investigations terminated, %d gave up", terminated, gaveUp)
	}

	none := exhaustScenario(recovery.ExhaustedReduceScope)
	zero := exhaustScenario(recovery.ExhaustedReduceScope)
	zero.Recovery.Retry.GiveUp = 0
	if a, b := digestOf(t, none), digestOf(t, zero); a != b {
		t.Errorf("give_up 0 changed the run: digests %s and %s", a, b)
	}

	all := exhaustScenario(recovery.ExhaustedReduceScope)
	all.Recovery.Retry.GiveUp = 1
	var ca record.Collector
	run(t, all, 1, &ca)
	ended := 0
	for _, tr := range ca.Transitions {
		if tr.Action == "reduce_scope" && tr.Reason == recovery.ReasonRetriesExhausted {
			t.Fatalf("give_up 1: investigation %d dropped a step on spent retries", tr.InvestigationID)
		}
		if tr.Action == "terminate" && tr.Reason == recovery.ReasonRetriesExhausted {
			ended++
		}
	}
	if ended < 100 {
		t.Errorf("give_up 1: %d investigations gave up; want every one whose operation ran out (about 174 roots)", ended)
	}
}
