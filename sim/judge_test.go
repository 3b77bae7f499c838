package sim

import (
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// consultations runs s and checks that no supervisor consultation was answered while the
// model was down ([from, to)): each one asked then failed as unavailable, naming the fault,
// and its engine decided by rule (one supervisor_unavailable note per failed consultation).
// Answered consultations took latency (one of the values in took). It returns how many were
// answered and refused.
func consultations(t *testing.T, s *scenarios.Scenario, from, to time.Duration, fault string, took ...time.Duration) (ok, refused int) {
	t.Helper()
	var c record.Collector
	run(t, s, 3, &c)
	for i := range c.Spans {
		sp := &c.Spans[i]
		if sp.Operation != record.OpSupervise {
			continue
		}
		down := sp.Start >= int64(from) && sp.Start < int64(to)
		switch {
		case sp.Status == record.StatusOK && down:
			t.Fatalf("%s: consultation of investigation %d answered at %v, while the model was down", s.Name, sp.InvestigationID, time.Duration(sp.Start))
		case sp.Status == record.StatusOK:
			ok++
			if d := time.Duration(sp.End - sp.Start); !contains(took, d) {
				t.Fatalf("%s: consultation took %v, want one of %v", s.Name, d, took)
			}
		default:
			refused++
			if down && (sp.FaultID != fault || spanAttr(sp, "error") != "unavailable" || sp.InputTokens != 0) {
				t.Fatalf("%s: consultation refused in the outage: fault %q error %q tokens %d", s.Name, sp.FaultID, spanAttr(sp, "error"), sp.InputTokens)
			}
		}
	}
	notes := 0
	for i := range c.Transitions {
		if c.Transitions[i].Reason == recovery.ReasonSupervisorUnavailable {
			notes++
		}
	}
	if notes != refused {
		t.Errorf("%s: %d consultations refused, %d supervisor_unavailable notes", s.Name, refused, notes)
	}
	return ok, refused
}

func contains[T comparable](xs []T, x T) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// TestSupervisorThroughProvider: a model supervisor's consultations are calls to the model
// provider. On a generic fleet (no model block: the provider is unlimited but for the
// outage fault) where every operation's attempts all fail, so each investigation consults
// once, and on capacity-crunch with a one-hour model outage added, no consultation is
// answered while the model is down, and some are answered outside the outage.
func TestSupervisorThroughProvider(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 600
	s.Faults = []scenarios.Fault{
		{ID: "always", Kind: scenarios.FaultTransient, Tool: "svc", Probability: 1},
		{ID: "model-down", Index: 1, Kind: scenarios.FaultOutage, Tool: scenarios.ModelTool, At: 3 * time.Minute, For: 3 * time.Minute},
	}
	s.Recovery.Supervisor = scenarios.Supervisor{Kind: "model", Accuracy: 0.9, Latency: 5 * time.Second, Tokens: 500}
	ok, refused := consultations(t, s, 3*time.Minute, 6*time.Minute, "model-down", 5*time.Second)
	t.Logf("generic: %d consultations answered, %d refused", ok, refused)
	if ok < 300 || refused < 100 {
		t.Errorf("generic: %d answered, %d refused; want both (about 400 and 180)", ok, refused)
	}

	cc, err := scenarios.Load("capacity-crunch", nil)
	if err != nil {
		t.Fatal(err)
	}
	cc.Faults = append(cc.Faults, scenarios.Fault{ID: "model-down", Index: len(cc.Faults), Kind: scenarios.FaultOutage,
		Tool: scenarios.ModelTool, At: time.Hour, For: time.Hour})
	// The supervisor's 20s, plus 2s per 1000 tokens for its 2000 tokens; twice that in the
	// model's brownout.
	ok, refused = consultations(t, cc, time.Hour, 2*time.Hour, "model-down", 24*time.Second, 48*time.Second)
	t.Logf("capacity-crunch: %d consultations answered, %d refused", ok, refused)
	if ok == 0 || refused == 0 {
		t.Errorf("capacity-crunch: %d answered, %d refused; want both", ok, refused)
	}
}
