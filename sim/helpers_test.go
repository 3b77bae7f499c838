package sim

import (
	"context"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// testScenario is a small valid scenario with the documented defaults, one tool and no
// faults; tests change what they study.
func testScenario() *scenarios.Scenario {
	s := scenarios.Defaults()
	s.Name = "test"
	s.Workload.Investigations = 100
	s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalPoisson, Rate: scenarios.Rate{PerSecond: 1}}
	s.Workload.Tokens = scenarios.Dist{Kind: scenarios.DistConstant, Value: 100}
	s.Workload.Model = "test-model"
	s.Workload.Mix = []scenarios.Weight{{Tool: "svc", Weight: 1}}
	s.Tools = []scenarios.Tool{{
		Name: "svc", Version: "1", Idempotency: scenarios.Keyed, Compute: 1,
		Latency: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(100 * time.Millisecond)},
	}}
	return s
}

// run runs s with invariant checks on and fails the test on any violation.
func run(t testing.TB, s *scenarios.Scenario, seed uint64, sink record.Sink) Result {
	t.Helper()
	res, err := Run(context.Background(), s, seed, sink, Options{Check: true})
	if err != nil {
		t.Fatalf("Run(%s, seed %d): %v", s.Name, seed, err)
	}
	if len(res.Violations) > 0 {
		n := min(len(res.Violations), 10)
		t.Fatalf("Run(%s, seed %d): %d invariant violations, first %d:\n%v", s.Name, seed, len(res.Violations), n, res.Violations[:n])
	}
	return res
}

func TestSmoke(t *testing.T) {
	s := testScenario()
	var c record.Collector
	res := run(t, s, 1, &c)
	if res.Started != 100 || res.Completed != 100 {
		t.Fatalf("result %+v", res)
	}
	t.Logf("%+v spans=%d transitions=%d execs=%d samples=%d", res, len(c.Spans), len(c.Transitions), len(c.Executions), len(c.Samples))
}

// TestSideEffectsRecorded checks that every execution record says whether its tool has side
// effects: idempotency keyed or none does, natural does not.
func TestSideEffectsRecorded(t *testing.T) {
	for _, idem := range []scenarios.Idempotency{scenarios.Keyed, scenarios.None, scenarios.Natural} {
		s := testScenario()
		s.Tools[0].Idempotency = idem
		var c record.Collector
		run(t, s, 1, &c)
		if len(c.Executions) == 0 {
			t.Fatalf("%s: no executions", idem)
		}
		for _, e := range c.Executions {
			if e.SideEffects != (idem != scenarios.Natural) {
				t.Fatalf("%s: execution %+v has SideEffects %t", idem, e, e.SideEffects)
			}
		}
	}
}
