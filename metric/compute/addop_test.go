package compute

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/mayday-sim/mayday/sim/record"
)

// An investigation's operations for tool_stats count each (operation, tool) pair once,
// whether they are few (searched in a list) or more than opScan (kept in a set too), in any
// order and with any repeats.
func TestAddOpCountsEachOperationOnce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tools := []*toolAcc{{}, {}}
		e := &tsInv{}
		seen := map[opTool]bool{}
		n := rapid.IntRange(0, 200).Draw(t, "n")
		for range n {
			k := opTool{record.OpKey{Investigation: 1, Step: int32(rapid.IntRange(0, 80).Draw(t, "step")),
				Revision: int32(rapid.IntRange(0, 1).Draw(t, "rev"))}, tools[rapid.IntRange(0, 1).Draw(t, "tool")]}
			if got, want := e.addOp(k), !seen[k]; got != want {
				t.Fatalf("addOp(%v) = %v after %d operations, want %v", k.key, got, len(e.ops), want)
			}
			seen[k] = true
		}
		if len(e.ops) != len(seen) {
			t.Fatalf("%d operations kept, %d distinct", len(e.ops), len(seen))
		}
	})
}
