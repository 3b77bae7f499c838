package compute

import (
	"context"
	"math"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
)

// Time scales: a run whose every instant and duration is multiplied by k has the same
// incidents, k times as long, the same correlated_failure_share, and k times the goodput
// recovery time, the recovery times and the makespan, because the incident and goodput
// rules (package metric/detect) read the order and instants of calls and results only,
// never a bin of fixed length. Instants are truncated to the microsecond as a TIMESTAMP
// keeps them, so a scaled instant may differ from k times the unscaled one by less than k
// microseconds: that is the tolerance.

// scaled returns a copy of c with every instant and duration multiplied by k.
func scaled(c *record.Collector, k int64) *record.Collector {
	out := &record.Collector{Faults: append([]record.Fault(nil), c.Faults...),
		Spans:          append([]record.Span(nil), c.Spans...),
		Transitions:    append([]record.Transition(nil), c.Transitions...),
		Executions:     append([]record.Execution(nil), c.Executions...),
		Investigations: append([]record.Investigation(nil), c.Investigations...),
		Samples:        append([]record.Sample(nil), c.Samples...),
		Workers:        c.Workers}
	for i := range out.Faults {
		out.Faults[i].Start *= k
		out.Faults[i].End *= k
	}
	for i := range out.Spans {
		s := &out.Spans[i]
		s.Start, s.End, s.QueueWait = s.Start*k, s.End*k, s.QueueWait*k
	}
	for i := range out.Transitions {
		out.Transitions[i].At *= k
	}
	for i := range out.Executions {
		out.Executions[i].Start *= k
		out.Executions[i].End *= k
	}
	for i := range out.Investigations {
		out.Investigations[i].ArrivedAt *= k
		out.Investigations[i].EndedAt *= k
	}
	for i := range out.Samples {
		out.Samples[i].At *= k
	}
	return out
}

func TestTimeScalesIncidentsAndGoodput(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	cases := []struct {
		name string
		sets []string
	}{
		{"shared-outage", nil},
		{"retry-storm", nil},
		{"research-fleet", []string{"workload.investigations=400"}},
		{"lost-responses", []string{"workload.investigations=300"}},
		{"capacity-crunch", []string{"workload.investigations=200"}},
	}
	sawIncident, sawGoodput := false, false
	for _, c := range cases {
		s, err := scenarios.Load(c.name, c.sets)
		if err != nil {
			t.Fatal(err)
		}
		var recs record.Collector
		if _, err := sim.Run(context.Background(), s, s.Seed, &recs, sim.Options{}); err != nil {
			t.Fatal(err)
		}
		run := func(rc *record.Collector) (Row, Tables) {
			sink := New(Options{Guards: GuardsOf(s), Tables: true})
			rc.Replay(sink)
			row, err := sink.Finish(1)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			return row, sink.Tables("r")
		}
		row1, tab1 := run(&recs)
		for _, k := range []int64{2, 3, 60} {
			rowK, tabK := run(scaled(&recs, k))
			if len(tabK.Incidents) != len(tab1.Incidents) {
				t.Errorf("%s ×%d: %d incidents, want %d", c.name, k, len(tabK.Incidents), len(tab1.Incidents))
				continue
			}
			origin := int64(TimeOf(0))
			for i, in := range tab1.Incidents {
				sawIncident = true
				got := tabK.Incidents[i]
				for _, p := range [][2]Time{{in.Start, got.Start}, {in.End, got.End}, {in.DetectedAt, got.DetectedAt}} {
					want := (int64(p[0]) - origin) * k
					if d := int64(p[1]) - origin - want; d < -k || d > k {
						t.Errorf("%s ×%d: incident %d of %s at %d µs, want %d", c.name, k, i+1, in.Tool, int64(p[1])-origin, want)
					}
				}
				if got.Tool != in.Tool || got.FailedAttempts != in.FailedAttempts || got.Calls != in.Calls {
					t.Errorf("%s ×%d: incident %d %+v, want the calls of %+v", c.name, k, i+1, got, in)
				}
			}
			if a, b := rowK.Get("correlated_failure_share"), row1.Get("correlated_failure_share"); !(a == b || math.IsNaN(a) && math.IsNaN(b)) {
				t.Errorf("%s ×%d: correlated_failure_share %v, want %v", c.name, k, a, b)
			}
			for _, m := range []string{"goodput_recovery_time", "median_recovery_time", "p95_recovery_time", "makespan"} {
				a, b := rowK.Get(m), row1.Get(m)
				if math.IsNaN(a) || math.IsNaN(b) {
					if math.IsNaN(a) != math.IsNaN(b) {
						t.Errorf("%s ×%d: %s %v, want %v ×%d", c.name, k, m, a, b, k)
					}
					continue
				}
				if m == "goodput_recovery_time" {
					sawGoodput = true
				}
				if math.Abs(a-b*float64(k)) > float64(k)*1e-6+1e-9*a {
					t.Errorf("%s ×%d: %s %v, want %v ×%d = %v", c.name, k, m, a, b, k, b*float64(k))
				}
			}
			if a, b := rowK.Get("goodput_recovered"), row1.Get("goodput_recovered"); !(a == b || math.IsNaN(a) && math.IsNaN(b)) {
				t.Errorf("%s ×%d: goodput_recovered %v, want %v", c.name, k, a, b)
			}
		}
	}
	// The relation would hold vacuously on runs without an incident or a goodput test.
	if !sawIncident || !sawGoodput {
		t.Errorf("no incident (%v) or no goodput recovery time (%v) among the runs: the test says little", sawIncident, sawGoodput)
	}
}
