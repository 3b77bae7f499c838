package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// randomInput is fuzz input i of a fixed sequence: 600 bytes, enough choices for a file
// that sets many keys.
func randomInput(i int) []byte {
	r := rand.New(rand.NewPCG(uint64(i), 0x5eed))
	b := make([]byte, 600)
	for j := range b {
		b[j] = byte(r.Uint32())
	}
	return b
}

// The size model bounds the events of every run (property): for scenarios generated from
// the key tree, whatever keys they set, a run never processes more events than
// scenarios.EstimateEvents says. A scenario the estimate puts above the test's budget is
// skipped, not run; the test needs enough runs to mean something.
func TestEventsWithinEstimate(t *testing.T) {
	inputs, budget := 200, 300_000.0
	if testing.Short() {
		inputs = 60
	}
	ran := 0
	for i := range inputs {
		data := randomInput(i)
		s := fuzzScenario(t, &gen{b: data}, budget)
		if s == nil {
			continue
		}
		ran++
		res, err := Run(t.Context(), s, uint64(i), record.NewDigest(), Options{})
		if err != nil {
			t.Fatalf("input %d: %v\n%s", i, err, scenarios.Generate((&gen{b: data}).n))
		}
		if est := scenarios.EstimateEvents(s); float64(res.Events) > est.Total {
			t.Errorf("input %d: %d events; the size model expects at most %.0f (%+v)\n%s", i, res.Events, est.Total, est, scenarios.Generate((&gen{b: data}).n))
		}
	}
	if ran < inputs/20 {
		t.Errorf("only %d of %d generated scenarios ran", ran, inputs)
	}
	t.Logf("%d of %d generated scenarios ran", ran, inputs)
}
