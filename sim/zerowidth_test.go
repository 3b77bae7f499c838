package sim

import (
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// TestZeroWidthUniformIsConstant: a uniform distribution whose min equals its max is that
// constant, and draws nothing from its random stream: a run with every duration uniform of
// zero width gives exactly the records of the same run with constants, down to the later
// draws (invalid outputs) that share those streams.
func TestZeroWidthUniformIsConstant(t *testing.T) {
	build := func(uniform bool) *scenarios.Scenario {
		s := testScenario()
		s.Workload.Investigations = 30
		s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 4}
		s.Workload.Behaviour.InvalidOutput = 0.3
		d := func(v time.Duration) scenarios.Dist {
			if uniform {
				return scenarios.Dist{Kind: scenarios.DistUniform, Min: float64(v), Max: float64(v)}
			}
			return scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(v)}
		}
		s.Workload.Think = d(2 * time.Second)
		s.Tools[0].Latency = d(time.Second)
		return s
	}
	var c, u record.Collector
	run(t, build(false), 7, &c)
	run(t, build(true), 7, &u)
	if len(c.Investigations) != 30 || len(c.Spans) != len(u.Spans) || len(c.Investigations) != len(u.Investigations) {
		t.Fatalf("constant: %d spans, %d investigations; uniform of zero width: %d, %d", len(c.Spans), len(c.Investigations), len(u.Spans), len(u.Investigations))
	}
	for i := range c.Investigations {
		if c.Investigations[i] != u.Investigations[i] {
			t.Fatalf("investigation %d: constant %+v, uniform of zero width %+v", i, c.Investigations[i], u.Investigations[i])
		}
	}
	for i := range c.Spans {
		a, b := c.Spans[i], u.Spans[i]
		if a.Start != b.Start || a.End != b.End || a.Status != b.Status || a.Operation != b.Operation {
			t.Fatalf("span %d: constant %v..%v %s %s, uniform %v..%v %s %s", i, a.Start, a.End, a.Operation, a.Status, b.Start, b.End, b.Operation, b.Status)
		}
	}
}
