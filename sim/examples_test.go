package sim

import (
	"encoding/json"
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
			order := &orderSink{}
			res := run(t, s, s.Seed, record.Tee{&c, order})
			if order.lateFault {
				t.Fatal("a Fault record came after other records")
			}
			if len(c.Faults) != len(s.Faults) {
				t.Fatalf("%d fault records for %d faults", len(c.Faults), len(s.Faults))
			}
			for _, f := range c.Faults {
				if !json.Valid([]byte(f.Parameters)) {
					t.Fatalf("fault %s parameters are not JSON: %s", f.FaultID, f.Parameters)
				}
			}
			if res.Started != s.Workload.Investigations && res.Makespan < int64(s.Horizon) {
				t.Fatalf("%d of %d investigations started", res.Started, s.Workload.Investigations)
			}
			t.Logf("%s: %+v spans %d transitions %d executions %d", info.Name, res, len(c.Spans), len(c.Transitions), len(c.Executions))
		})
	}
}

// orderSink notices a Fault record that comes after any other record.
type orderSink struct {
	record.Discard
	others    bool
	lateFault bool
}

func (o *orderSink) Fault(*record.Fault)                 { o.lateFault = o.lateFault || o.others }
func (o *orderSink) Span(*record.Span)                   { o.others = true }
func (o *orderSink) Transition(*record.Transition)       { o.others = true }
func (o *orderSink) Execution(*record.Execution)         { o.others = true }
func (o *orderSink) Investigation(*record.Investigation) { o.others = true }
func (o *orderSink) Sample(*record.Sample)               { o.others = true }
func (o *orderSink) Worker(*record.Worker)               { o.others = true }
