package sim

import (
	"math"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// gen turns fuzz bytes into choices; past the end every choice is 0, so any input, even
// an empty one, makes a scenario.
type gen struct{ b []byte }

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

// n is a choice in [0, k).
func (g *gen) n(k int) int { return int(g.byte()) % k }

// fuzzScenario is the scenario the generator of the key tree (scenarios.Generate) writes for
// the choices in g, or nil when Parse refuses it or the size model expects more than
// maxEvents events (too long for one fuzz input).
func fuzzScenario(t *testing.T, g *gen, maxEvents float64) *scenarios.Scenario {
	data := scenarios.Generate(g.n)
	s, err := scenarios.Parse("fuzz.yaml", data, nil)
	if err != nil {
		return nil
	}
	if est := scenarios.EstimateEvents(s); est.Total > maxEvents {
		return nil
	}
	return s
}

// maxFuzzEvents bounds the size model's estimate of a fuzzed scenario, so one input runs in
// well under a second.
const maxFuzzEvents = 2_000_000

// FuzzSimulate runs scenarios generated from the key tree (every key the format has) through
// the simulator with its invariant checker on. A scenario that Parse accepts must run without a panic, an error or a violation,
// stay within the size model's estimate of its events, account for every investigation,
// write no negative tokens, inverted spans or non-finite
// compute, and give the same digest twice. `make fuzz` runs it; its seed corpus runs in
// `make test`.
func FuzzSimulate(f *testing.F) {
	f.Add(uint64(1), []byte{})
	f.Add(uint64(2), []byte{200, 29, 1, 7, 90, 3, 2, 8, 250, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(uint64(3), []byte("subagents, crashes, humans and a breaker at once"))
	// Inputs long enough for files that set many keys; about one in five is a scenario
	// Parse accepts and small enough to run.
	for i := range 64 {
		f.Add(uint64(i+10), randomInput(i))
	}
	f.Fuzz(func(t *testing.T, seed uint64, data []byte) {
		s := fuzzScenario(t, &gen{b: data}, maxFuzzEvents)
		if s == nil {
			t.Skip("refused by Parse or too large for one input")
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("Parse accepted a scenario that Validate refuses: %v", err)
		}
		var c record.Collector
		res := run(t, s, seed, &c)
		// The size model bounds every run's events: more means a storm it does not know.
		if est := scenarios.EstimateEvents(s); float64(res.Events) > est.Total {
			t.Fatalf("%d events; the size model expects at most %.0f (%+v)", res.Events, est.Total, est)
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
