package recovery_test

import (
	"testing"

	"github.com/mayday-sim/mayday/recovery"
)

// Legal is the lifecycle of docs/architecture.md, written out here edge by edge, and false
// (never a panic) for every other pair of values a State can hold, the undefined ones
// included: a journal read back from a file may carry any byte.
func TestLegalIsTheLifecycleForEveryPairOfValues(t *testing.T) {
	edges := map[[2]recovery.State]bool{
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
	for from := 0; from < 256; from++ {
		for to := 0; to < 256; to++ {
			f, o := recovery.State(from), recovery.State(to)
			var got bool
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("Legal(%d, %d) panicked: %v", from, to, r)
					}
				}()
				got = recovery.Legal(f, o)
			}()
			if want := edges[[2]recovery.State{f, o}]; got != want {
				t.Errorf("Legal(%v, %v) = %v, want %v", f, o, got, want)
			}
		}
	}
}
