package sim

import (
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// TestExamples runs every embedded example at reduced size with the invariant checks on.
func TestExamples(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 100
	}
	list := scenarios.List()
	if len(list) == 0 {
		t.Fatal("no embedded example scenarios")
	}
	for _, info := range list {
		t.Run(info.Name, func(t *testing.T) {
			s, err := scenarios.Load(info.Name, nil)
			if err != nil {
				t.Fatalf("load %s: %v", info.Name, err)
			}
			s.Workload.Investigations = min(s.Workload.Investigations, n)
			var c record.Collector
			res := run(t, s, s.Seed, &c)
			if res.Started != s.Workload.Investigations && res.Makespan < int64(s.Horizon) {
				t.Fatalf("%d of %d investigations started", res.Started, s.Workload.Investigations)
			}
			t.Logf("%s: %+v spans %d transitions %d executions %d", info.Name, res, len(c.Spans), len(c.Transitions), len(c.Executions))
		})
	}
}
