package sim

import (
	"testing"

	"github.com/mayday-sim/mayday/recovery"
)

// A state past the last one (a corrupt or newer journal) is no edge's end, on either side,
// and asking does not index past the table.
func TestLegalPastTheLastState(t *testing.T) {
	past := recovery.Terminated + 1
	for _, e := range [][2]recovery.State{{past, recovery.Running}, {recovery.Running, past}, {past, past}, {past + 7, recovery.Pending}} {
		if legal(e[0], e[1]) {
			t.Errorf("legal(%d, %d) = true", e[0], e[1])
		}
	}
}
