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
