package sim

import (
	"context"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// testScenario is a small valid scenario with the design's defaults, one tool and no
// faults; tests change what they study.
func testScenario() *scenarios.Scenario {
	return &scenarios.Scenario{
		Name:    "test",
		Seed:    1,
		Horizon: 30 * 24 * time.Hour,
		Workload: scenarios.Workload{
			Investigations: 100,
			Arrival:        scenarios.Arrival{Kind: scenarios.ArrivalPoisson, Rate: scenarios.Rate{PerSecond: 1}},
			Steps:          scenarios.Dist{Kind: scenarios.DistConstant, Value: 1},
			Think:          scenarios.Dist{Kind: scenarios.DistConstant, Value: 0},
			Tokens:         scenarios.Dist{Kind: scenarios.DistConstant, Value: 100},
			Model:          "test-model",
			Mix:            []scenarios.Weight{{Tool: "svc", Weight: 1}},
		},
		Tools: []scenarios.Tool{{
			Name: "svc", Version: "1", Idempotency: scenarios.Keyed, Compute: 1,
			Latency: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(100 * time.Millisecond)},
		}},
		Recovery: scenarios.Recovery{
			Retry: scenarios.Retry{MaxAttempts: 3, Initial: time.Second, Multiplier: 2, Max: time.Minute,
				Jitter: "full", OnExhausted: "escalate"},
			InspectBeforeRetry: true,
			Lease:              5 * time.Minute,
			Supervisor:         scenarios.Supervisor{Kind: "rules"},
		},
	}
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
