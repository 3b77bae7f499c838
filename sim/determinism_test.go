package sim

import (
	"context"
	"runtime"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

func fleet(t testing.TB, n int) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Load("research-fleet", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Workload.Investigations = n
	return s
}

func digest(t testing.TB, s *scenarios.Scenario, seed uint64) (string, int64) {
	t.Helper()
	d := record.NewDigest()
	run(t, s, seed, d)
	return d.Sum(), d.Rows()
}

// TestDeterminism: the same scenario and seed give the same records, row for row, twice in
// one process and whatever GOMAXPROCS is; another seed gives other records.
func TestDeterminism(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 500
	}
	s := fleet(t, n)
	first, rows := digest(t, s, 42)
	if rows < int64(n) {
		t.Fatalf("only %d rows", rows)
	}
	if again, _ := digest(t, s, 42); again != first {
		t.Fatalf("same seed, different digest: %s then %s", first, again)
	}
	old := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(old)
	for _, procs := range []int{1, 4} {
		runtime.GOMAXPROCS(procs)
		if d, _ := digest(t, s, 42); d != first {
			t.Fatalf("GOMAXPROCS=%d: digest %s, want %s", procs, d, first)
		}
	}
	runtime.GOMAXPROCS(old)
	if other, _ := digest(t, s, 43); other == first {
		t.Fatalf("seeds 42 and 43 give the same digest %s", first)
	}
}

// TestStreamsIsolated: the draws of one entity do not depend on the others. Adding a tool
// that no investigation uses, and a fault on a busy tool that draws on every attempt but
// (with probability 1e-12) never fires, leaves every other record of the run unchanged:
// with one shared stream, the fault's draws would shift everything after them.
func TestStreamsIsolated(t *testing.T) {
	s := fleet(t, 300)
	base, _ := digest(t, s, 5)
	s2 := fleet(t, 300)
	s2.Tools = append(s2.Tools, scenarios.Tool{Name: "unused", Idempotency: scenarios.Natural,
		Latency: scenarios.Dist{Kind: scenarios.DistConstant, Value: 1e9}})
	s2.Faults = append(s2.Faults, scenarios.Fault{ID: "extra", Index: len(s2.Faults), Kind: scenarios.FaultTransient, Tool: "backtest", Probability: 1e-12})
	d := record.NewDigest()
	// The extra fault record and the extra tool's samples are new rows; compare everything
	// else by filtering them out.
	res, err := Run(context.Background(), s2, 5, filterSink{d, "unused", "extra"}, Options{Check: true})
	if err != nil || len(res.Violations) > 0 {
		t.Fatalf("run: %v %v", err, res.Violations)
	}
	if got := d.Sum(); got != base {
		t.Fatalf("adding an unused tool and a fault on it changed the other records")
	}
}

// filterSink drops the records of one tool and one fault.
type filterSink struct {
	record.Sink
	tool, fault string
}

func (f filterSink) Sample(s *record.Sample) {
	if s.Tool != f.tool {
		f.Sink.Sample(s)
	}
}

func (f filterSink) Fault(r *record.Fault) {
	if r.FaultID != f.fault {
		f.Sink.Fault(r)
	}
}
