package sim

import (
	"testing"
	"time"

	"github.com/mayday-sim/mayday/sim/record"
)

// A blocked operation is caused by the run's configuration and by the model turn that chose
// it: its caused_by names both, each a span of the run, the turn a plan span of the same
// investigation that ended when the block was recorded.
func TestBlockedSpanCausedByItsTurn(t *testing.T) {
	s := policyBlockScenario(200)
	var c record.Collector
	run(t, s, 9, &c)
	byID := map[uint64]*record.Span{}
	for i := range c.Spans {
		byID[c.Spans[i].SpanID] = &c.Spans[i]
	}
	blocked := 0
	for i := range c.Spans {
		sp := &c.Spans[i]
		if sp.Status != record.StatusBlocked {
			continue
		}
		blocked++
		if len(sp.CausedBy) != 2 {
			t.Fatalf("blocked span %d caused by %v; want the configuration and the turn", sp.SpanID, sp.CausedBy)
		}
		for _, id := range sp.CausedBy {
			if byID[id] == nil {
				t.Fatalf("blocked span %d caused by %d, no span of the run", sp.SpanID, id)
			}
		}
		turn := byID[sp.CausedBy[1]]
		if turn.Operation != record.OpPlan || turn.InvestigationID != sp.InvestigationID || turn.End != sp.Start {
			t.Fatalf("blocked span %d (inv %d at %d) caused by %+v; want its plan turn ending then", sp.SpanID, sp.InvestigationID, sp.Start, turn)
		}
	}
	if blocked < 20 { // 200 investigations x 4 steps x 0.2 on first tries: about 100
		t.Fatalf("%d blocked operations; the test needs some", blocked)
	}
}

// A scenario built in Go without a horizon takes the default one (30 days) and runs until
// its work is done, as one with a horizon far beyond it does.
func TestNoHorizonRunsToTheEnd(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 50
	var far, none record.Collector
	s.Horizon = 1000 * time.Hour
	a := run(t, s, 3, &far)
	s.Horizon = 0
	b := run(t, s, 3, &none)
	if s.Horizon != 30*24*time.Hour {
		t.Errorf("horizon of a Go-built scenario without one = %v, want the default 30d", s.Horizon)
	}
	if a.Makespan <= 0 || a.Makespan != b.Makespan || len(far.Spans) != len(none.Spans) {
		t.Fatalf("without a horizon: makespan %d, %d spans; with a far one: %d, %d", b.Makespan, len(none.Spans), a.Makespan, len(far.Spans))
	}
	for _, inv := range none.Investigations {
		if !inv.Ended {
			t.Fatalf("investigation %d still open without a horizon", inv.InvestigationID)
		}
	}
}
