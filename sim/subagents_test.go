package sim

import (
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// subagentScenario: roots of 3 steps spawn one subagent on half their steps; a transient
// fault fails 40% of attempts and an operation gets one attempt before it is terminated,
// so many subagents fail while their parents are still at work.
func subagentScenario(onFailure scenarios.SubagentFailure) *scenarios.Scenario {
	s := testScenario()
	s.Workload.Investigations = 400
	s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 3}
	s.Workload.Think = scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(time.Second)}
	s.Workload.Subagents = scenarios.Subagents{Probability: 0.5, Count: scenarios.Dist{Kind: scenarios.DistConstant, Value: 1}, MaxDepth: 1}
	s.Faults = []scenarios.Fault{{ID: "flaky", Kind: scenarios.FaultTransient, Tool: "svc", Probability: 0.4}}
	s.Recovery.Retry.MaxAttempts = 2
	s.Recovery.Retry.OnExhausted = recovery.ExhaustedTerminate
	s.Recovery.Subagents.OnFailure = onFailure
	return s
}

// tree is what a run says about each parent's subagents.
type tree struct {
	inv                  map[int64]*record.Investigation
	children             map[int64][]*record.Investigation
	failedEvents         map[int64]int // subagent_failed transitions per parent (decisions)
	respawns, failParent map[int64]int
}

func readTree(c *record.Collector) tree {
	tr := tree{inv: map[int64]*record.Investigation{}, children: map[int64][]*record.Investigation{},
		failedEvents: map[int64]int{}, respawns: map[int64]int{}, failParent: map[int64]int{}}
	for i := range c.Investigations {
		inv := &c.Investigations[i]
		tr.inv[inv.InvestigationID] = inv
		if inv.ParentID != 0 {
			tr.children[inv.ParentID] = append(tr.children[inv.ParentID], inv)
		}
	}
	for _, t := range c.Transitions {
		if t.Event != "subagent_failed" {
			continue
		}
		switch {
		case t.Action == "respawn":
			tr.respawns[t.InvestigationID]++
			tr.failedEvents[t.InvestigationID]++
		case t.Action == "reduce_scope":
			tr.failedEvents[t.InvestigationID]++
		case t.Action == "terminate":
			tr.failParent[t.InvestigationID]++
			tr.failedEvents[t.InvestigationID]++
		}
	}
	return tr
}

// heard counts the subagents of parent p that failed while p was still open: those its
// engine must have been told of.
func (tr tree) heard(p *record.Investigation) int {
	n := 0
	for _, ch := range tr.children[p.InvestigationID] {
		if ch.FinalState == "terminated" && (!p.Ended || ch.EndedAt <= p.EndedAt) {
			n++
		}
	}
	return n
}

// TestSubagentFailurePolicies: every subagent that fails while its parent is open is one
// subagent_failed decision of the parent's engine, and the policy's answer holds.
//   - reduce_scope: a parent that heard of a failure and completed has scope reduced; one
//     that heard of none and whose subagents all completed at full scope has scope full.
//   - fail: a parent that heard of a failure is terminated at that instant, reason
//     subagent_failed.
//   - respawn, max 2, then fail: each parent respawned min(failures, 2) replacements, each a
//     new subagent of that parent, and was terminated by a third failure.
func TestSubagentFailurePolicies(t *testing.T) {
	t.Run("reduce_scope", func(t *testing.T) {
		var c record.Collector
		run(t, subagentScenario(scenarios.SubagentFailure{Action: "reduce_scope"}), 1, &c)
		tr := readTree(&c)
		lost, reducedOK := 0, 0
		for id, p := range tr.inv {
			if len(tr.children[id]) == 0 {
				continue
			}
			h := tr.heard(p)
			if tr.failedEvents[id] != h || tr.respawns[id]+tr.failParent[id] != 0 {
				t.Fatalf("parent %d: %d subagent_failed decisions (%d respawns, %d failures), %d subagents failed while it was open",
					id, tr.failedEvents[id], tr.respawns[id], tr.failParent[id], h)
			}
			if p.FinalState != "completed" {
				continue
			}
			if h > 0 {
				lost++
				if p.Scope == record.ScopeReduced {
					reducedOK++
				}
			} else if p.Scope == record.ScopeReduced {
				t.Errorf("parent %d lost nothing but has scope reduced", id)
			}
		}
		if lost < 20 || reducedOK != lost {
			t.Errorf("%d completed parents lost a subagent's work, %d of them reduced; want >= 20, all", lost, reducedOK)
		}
	})
	t.Run("fail", func(t *testing.T) {
		var c record.Collector
		run(t, subagentScenario(scenarios.SubagentFailure{Action: "fail"}), 1, &c)
		tr := readTree(&c)
		failed := 0
		for id, p := range tr.inv {
			h := tr.heard(p)
			if h == 0 {
				continue
			}
			failed++
			if p.FinalState != "terminated" || p.TerminationReason != "subagent_failed" || h != 1 || tr.failParent[id] != 1 {
				t.Errorf("parent %d heard of %d failures: %s (%s), %d fail decisions; want terminated by the first",
					id, h, p.FinalState, p.TerminationReason, tr.failParent[id])
			}
		}
		if failed < 20 {
			t.Errorf("only %d parents saw a subagent fail", failed)
		}
	})
	t.Run("respawn", func(t *testing.T) {
		var c record.Collector
		run(t, subagentScenario(scenarios.SubagentFailure{Action: "respawn", Max: 2, Then: "fail"}), 1, &c)
		tr := readTree(&c)
		replaced, spent := 0, 0
		for id, p := range tr.inv {
			h := tr.heard(p)
			if tr.failedEvents[id] != h || tr.respawns[id] != min(h, 2) {
				t.Fatalf("parent %d: %d failures heard, %d decisions, %d respawns", id, h, tr.failedEvents[id], tr.respawns[id])
			}
			replaced += tr.respawns[id]
			if h == 3 {
				spent++
				if p.FinalState != "terminated" || p.TerminationReason != "respawns_spent" {
					t.Errorf("parent %d: third failure left it %s (%s)", id, p.FinalState, p.TerminationReason)
				}
			}
			if p.FinalState == "completed" && p.Scope == record.ScopeReduced {
				t.Errorf("parent %d completed reduced: with respawn then fail nothing is lost", id)
			}
		}
		// A replacement starts at the instant its predecessor failed: a parent has as many
		// subagents that arrived when a sibling ended terminated as it made respawns.
		subs := 0
		for id, ch := range tr.children {
			subs += len(ch)
			failedAt := map[int64]bool{}
			for _, x := range ch {
				if x.FinalState == "terminated" {
					failedAt[x.EndedAt] = true
				}
			}
			n := 0
			for _, x := range ch {
				if failedAt[x.ArrivedAt] {
					n++
				}
			}
			if n != tr.respawns[id] {
				t.Errorf("parent %d: %d subagents started as a sibling failed, %d respawns", id, n, tr.respawns[id])
			}
		}
		if replaced < 20 || subs <= replaced || spent == 0 {
			t.Errorf("%d replacements, %d subagents in all, %d parents out of respawns", replaced, subs, spent)
		}
	})
}

// TestSubagentStreamsDiffer: every subagent of a parent, respawned or spawned, draws from a
// stream of its own (the parent's key and the subagent's index among the parent's
// children, counting respawns). A model turn's tokens, drawn from the agent's stream out
// of an exponential of mean 10^6, make the fingerprint: the first turns of two subagents
// with distinct streams are equal with probability about 10^-6 a pair, while a subagent
// given an earlier sibling's index repeats that sibling's turns exactly.
func TestSubagentStreamsDiffer(t *testing.T) {
	s := subagentScenario(scenarios.SubagentFailure{Action: "respawn", Max: 2, Then: "reduce_scope"})
	s.Workload.Tokens = scenarios.Dist{Kind: scenarios.DistExponential, Mean: 1e6}
	var c record.Collector
	run(t, s, 1, &c)
	tr := readTree(&c)
	first := map[int64][2]int64{} // a subagent's first two model turns' tokens
	seen := map[int64]int{}
	for _, sp := range c.Spans {
		if sp.Operation != record.OpPlan || tr.inv[sp.InvestigationID] == nil || tr.inv[sp.InvestigationID].ParentID == 0 {
			continue
		}
		if k := seen[sp.InvestigationID]; k < 2 {
			f := first[sp.InvestigationID]
			f[k] = sp.InputTokens + sp.OutputTokens
			first[sp.InvestigationID] = f
			seen[sp.InvestigationID] = k + 1
		}
	}
	respawned := 0
	for id, ch := range tr.children {
		respawned += tr.respawns[id]
		if tr.respawns[id] == 0 {
			continue
		}
		by := map[[2]int64]int64{}
		for _, x := range ch {
			f, ok := first[x.InvestigationID]
			if !ok {
				continue
			}
			if o, dup := by[f]; dup {
				t.Errorf("parent %d (%d respawns): subagents %d and %d made the same first turns %v", id, tr.respawns[id], o, x.InvestigationID, f)
			}
			by[f] = x.InvestigationID
		}
	}
	if respawned < 20 {
		t.Errorf("only %d respawns", respawned)
	}
}
