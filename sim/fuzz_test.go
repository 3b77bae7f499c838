package sim

import (
	"math"
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/sim/simtest"
)

// maxFuzzEvents bounds the events of a generated scenario: at most 30 investigations (x
// subagents, at most 7 agents each) over at most 13 hours, each open operation waking about
// once a second while it waits, is about 3 million at the very worst; a storm of
// zero-length waits is far more (the one FuzzSimulate found made 9.5 million in a minute).
const maxFuzzEvents = 5_000_000

// FuzzSimulate runs generated scenarios through the simulator with its invariant checker
// on. A scenario that Validate accepts must run without a panic, an error or a violation,
// account for every investigation, write no negative tokens, inverted spans or non-finite
// compute, and give the same digest twice. `make fuzz` runs it; its seed corpus runs in
// `make test`.
func FuzzSimulate(f *testing.F) {
	f.Add(uint64(1), []byte{})
	f.Add(uint64(2), []byte{200, 29, 1, 7, 90, 3, 2, 8, 250, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(uint64(3), []byte("subagents, crashes, humans and a breaker at once"))
	for i := range 12 {
		b := make([]byte, 64)
		for j := range b {
			b[j] = byte((i+1)*(j+7)*31 + j*j)
		}
		f.Add(uint64(i+10), b)
	}
	f.Fuzz(func(t *testing.T, seed uint64, data []byte) {
		s := simtest.Generate(data)
		if err := s.Validate(); err != nil {
			t.Skipf("the generator made an invalid scenario: %v", err)
		}
		var c record.Collector
		res := run(t, s, seed, &c)
		// A run this small needs a few hundred thousand events at most (one poll a second
		// per open operation over the horizon); millions mean a storm of zero-length waits.
		if res.Events > maxFuzzEvents {
			t.Fatalf("%d events for %d investigations over %v: an event storm", res.Events, s.Workload.Investigations, s.Horizon)
		}
		if res.Completed+res.Terminated+res.AwaitingHuman+res.InFlight != res.Started || res.Started > s.Workload.Investigations {
			t.Fatalf("accounting: %+v for %d investigations", res, s.Workload.Investigations)
		}
		for _, sp := range c.Spans {
			if sp.End < sp.Start || sp.InputTokens < 0 || sp.OutputTokens < 0 || !(sp.Compute >= 0) || math.IsInf(sp.Compute, 0) {
				t.Fatalf("span %+v", sp)
			}
		}
		for _, inv := range c.Investigations {
			if inv.Tokens < 0 || !(inv.Compute >= 0) || math.IsInf(inv.Compute, 0) {
				t.Fatalf("investigation %+v", inv)
			}
		}
		d1 := record.NewDigest()
		run(t, s, seed, d1)
		d2 := record.NewDigest()
		run(t, s, seed, d2)
		if d1.Sum() != d2.Sum() {
			t.Fatalf("two runs of one scenario and seed differ: %s vs %s", d1.Sum(), d2.Sum())
		}
	})
}
