package sim

import (
	"testing"

	"github.com/mayday-sim/mayday/recovery"
)

// TestFigure3 pins the checker's edge table to docs/architecture.md: exactly these twelve edges.
func TestFigure3(t *testing.T) {
	want := map[[2]recovery.State]bool{
		{recovery.Pending, recovery.Running}:          true,
		{recovery.Running, recovery.Waiting}:          true,
		{recovery.Running, recovery.Recovering}:       true,
		{recovery.Running, recovery.Completed}:        true,
		{recovery.Waiting, recovery.Running}:          true,
		{recovery.Waiting, recovery.Recovering}:       true,
		{recovery.Recovering, recovery.Running}:       true,
		{recovery.Recovering, recovery.Waiting}:       true,
		{recovery.Recovering, recovery.AwaitingHuman}: true,
		{recovery.Recovering, recovery.Terminated}:    true,
		{recovery.AwaitingHuman, recovery.Running}:    true,
		{recovery.AwaitingHuman, recovery.Terminated}: true,
	}
	for from := recovery.Pending; from <= recovery.Terminated; from++ {
		for to := recovery.Pending; to <= recovery.Terminated; to++ {
			if got := legal(from, to); got != want[[2]recovery.State{from, to}] {
				t.Errorf("legal(%s, %s) = %t", from, to, got)
			}
		}
	}
}

// TestCheckerCatches feeds the checker bad journals directly: it must notice.
func TestCheckerCatches(t *testing.T) {
	w := &sim{}
	w.checker.on = true
	a := &agent{id: 7}
	bad := []recovery.JournalRecord{
		{From: recovery.Pending, To: recovery.Running},
		{From: recovery.Running, To: recovery.AwaitingHuman}, // not an edge
		{From: recovery.Waiting, To: recovery.Running},       // does not start where the last ended
		{From: recovery.AwaitingHuman, To: recovery.Terminated},
		{From: recovery.Terminated, To: recovery.Running}, // after a final state
	}
	for i := range bad {
		w.checker.transition(w, a, &bad[i])
		a.journal = append(a.journal, bad[i])
	}
	// Record 2 is not an edge; record 3 starts in waiting after awaiting_human; record 4
	// starts in awaiting_human after record 3 ended in running; record 5 follows a final state.
	if got := len(w.checker.violations); got != 4 {
		t.Fatalf("%d violations, want 4: %v", got, w.checker.violations)
	}
}
