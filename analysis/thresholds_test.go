//go:build duckdb_arrow

package analysis

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// thresholdCases are datasets that put values on the thresholds of the incident and
// goodput definitions, at whole minutes (so a minute computed one microsecond off shows),
// and make medians and means differ. Each is checked against the Go reference, which must
// itself see the edge the dataset was built for.
func thresholdCases() []viewCase {
	return []viewCase{edgeIncidentsCase(), edgeGoodputCase(), edgeHangCase()}
}

// edgeHangCase: a hang. After a baseline of 1% failures, 6 attempts sent in minute 25 hang
// until their one-hour timeout (minute 85) and are retried in minute 86, long after the
// incident (minute 25, where the failed attempts were sent) ended. The incident's
// retries_sent is 6: the retries of its attempts, whenever they went out.
func edgeHangCase() viewCase {
	var e edgeRecords
	end := 120 * minute
	for m := int64(0); m < 20; m++ {
		for i := 0; i < 100; i++ {
			e.attempt("api", m*minute+int64(i)*100_000_000, i == 0, end)
		}
	}
	for range 6 {
		e.attempt("api", 25*minute, true, end)
		first := e.c.Spans[len(e.c.Spans)-1]
		e.c.Spans[len(e.c.Spans)-1].Status = record.StatusTimeout
		e.c.Spans[len(e.c.Spans)-1].End = 85 * minute
		e.span++
		retry := first
		retry.SpanID, retry.Attempt, retry.Start, retry.End, retry.Status = e.span, 2, 86*minute, 86*minute+second, record.StatusOK
		e.c.Spans = append(e.c.Spans, retry)
	}
	return referenceCaseOf("a hang's retries after the timeouts", map[string]*record.Collector{"edge-hang": &e.c},
		func(id string, want refResult) error {
			if len(want.Incidents) != 1 || want.Incidents[0].FirstMinute != 25 || want.Incidents[0].Retries != 6 {
				return fmt.Errorf("incidents %+v, want one in minute 25 with 6 retries", want.Incidents)
			}
			return nil
		})
}

// edgeRecords builds runs by hand: investigations of one step each.
type edgeRecords struct {
	c    record.Collector
	span uint64
	inv  int64
}

// attempt records one attempt at tool starting at (and, failed fast, ending at) at, by a
// new root investigation that ends at end.
func (e *edgeRecords) attempt(tool string, at int64, failed bool, end int64) {
	e.span++
	e.inv++
	st := record.StatusOK
	if failed {
		st = record.StatusError
	}
	e.c.Spans = append(e.c.Spans, record.Span{TraceID: e.inv, SpanID: e.span, InvestigationID: e.inv, Operation: record.OpExecuteTool,
		Tool: tool, HasKey: true, OpKey: record.OpKey{Investigation: e.inv}, Attempt: 1, Start: at, End: at, Status: st})
	e.c.Investigations = append(e.c.Investigations, record.Investigation{InvestigationID: e.inv, RootID: e.inv, ArrivedAt: at,
		Ended: true, EndedAt: end, FinalState: "completed", Tokens: 10})
}

// valid records a step's valid result at at, by a new root investigation arrived at 0.
func (e *edgeRecords) valid(at int64) {
	e.span++
	e.inv++
	e.c.Spans = append(e.c.Spans, record.Span{TraceID: e.inv, SpanID: e.span, InvestigationID: e.inv, Operation: record.OpValidate,
		HasKey: true, OpKey: record.OpKey{Investigation: e.inv}, Start: at, End: at, Status: record.StatusOK})
	e.c.Investigations = append(e.c.Investigations, record.Investigation{InvestigationID: e.inv, RootID: e.inv,
		Ended: true, EndedAt: at, FinalState: "completed", Tokens: 10})
}

// referenceCaseOf checks the runs against the reference (every metric, incident, episode and
// tool_stats row), then asks sees whether the reference saw what the runs were built for.
func referenceCaseOf(name string, runs map[string]*record.Collector, sees func(id string, want refResult) error) viewCase {
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range runs {
			if !yield(id) {
				return
			}
		}
	})
	return viewCase{name: name, load: func(t testing.TB, db *DB) {
		for _, id := range ids {
			if err := LoadCollector(db, id, runs[id], traces.Run{Scenario: id, Status: traces.StatusComplete}); err != nil {
				t.Fatal(err)
			}
		}
	}, check: func(t testing.TB, db *DB) {
		for _, id := range ids {
			want := checkRunRecords(t, db, refRun{ID: id}, runs[id])
			if err := sees(id, want); err != nil {
				t.Fatalf("%s: the reference does not see the edge: %v", id, err)
			}
		}
	}}
}

// edgeIncidentsCase: a baseline of 1% failures (20 minutes of 100 attempts, one failed),
// then minutes with exactly 5 failures of 5 (hot: at least 5, far above 1%) and one with 4
// (not hot: fewer than 5). Hot minutes 25 and 28 are 3 apart (2 inactive minutes between:
// one incident); 32 is 4 after 28 (a new one); a breaker open during minute 44 (a sample at
// its end) joins the hot minute 46 ahead of it. Every attempt starts on a whole minute, but
// one a microsecond before minute 52, which holds 4 failures: a minute computed a microsecond
// off makes 51 or 52 hot.
func edgeIncidentsCase() viewCase {
	var e edgeRecords
	end := 60 * minute
	for m := int64(0); m < 20; m++ {
		for i := 0; i < 100; i++ {
			e.attempt("api", m*minute+int64(i)*100_000_000, i == 0, end)
		}
	}
	for _, hot := range []struct {
		minute, failed int64
	}{{25, 5}, {28, 5}, {32, 5}, {38, 4}, {46, 5}} {
		for i := int64(0); i < hot.failed; i++ {
			e.attempt("api", hot.minute*minute, true, end)
		}
	}
	// Minute 52: 4 failures on its first instant and one a microsecond before it, in minute
	// 51: neither minute is hot.
	for i := 0; i < 4; i++ {
		e.attempt("api", 52*minute, true, end)
	}
	e.attempt("api", 52*minute-1000, true, end)
	e.c.Samples = append(e.c.Samples, record.Sample{Tool: "api", At: 45 * minute, BreakerState: "half_open"})
	return referenceCaseOf("incidents on their thresholds", map[string]*record.Collector{"edge-incidents": &e.c},
		func(id string, want refResult) error {
			var got [][2]int64
			for _, inc := range want.Incidents {
				got = append(got, [2]int64{inc.FirstMinute, inc.EndMinute})
			}
			if w := [][2]int64{{25, 29}, {32, 33}, {44, 47}}; !slices.Equal(got, w) {
				return fmt.Errorf("incidents %v, want %v", got, w)
			}
			return nil
		})
}

// edgeGoodputCase: valid results per minute before a fault window of minutes 20-21 are 10,
// except 1 in minutes 3, 7 and 11 and none in minute 0 (ramp-up): the median baseline is 10,
// the mean 8.6. After the window: none until minute 29, then 9 a minute (exactly 90% of
// 10), 8 in minute 33 (below 90% of the median, above 90% of the mean) and one more in
// minute 32, a microsecond before minute 33 (and one on the first instant of each minute:
// a minute computed a microsecond off moves a result into minute 33). Run "reach": the
// last arrival is in minute 38, so the five good minutes 34-38 end exactly on it: 34·60 −
// 22·60 = 720 s. Run "short": the last arrival is in minute 37: NULL. Run "inside": a window
// that ends at 21:30 with goodput never down: recovered in the window's own minute, 0 s.
func edgeGoodputCase() viewCase {
	build := func(lastArrival, windowEnd int64, dip bool) *record.Collector {
		var e edgeRecords
		e.c.Faults = append(e.c.Faults, record.Fault{FaultID: "down", Kind: "outage", Tool: "api", Start: 20 * minute,
			End: windowEnd, Parameters: fmt.Sprintf(`{"duration_seconds":%d}`, (windowEnd-20*minute)/second)})
		for m := int64(1); m < 50; m++ {
			n := 10
			switch {
			case m == 3 || m == 7 || m == 11:
				n = 1
			case !dip:
			case m >= 20 && m < 30:
				n = 0
			case m == 33:
				n = 8
			case m >= 30:
				n = 9
			}
			for i := 0; i < n; i++ {
				e.valid(m*minute + int64(i)*second)
			}
		}
		if dip { // in minute 32, a microsecond before minute 33
			e.valid(33*minute - 1000)
		}
		e.c.Investigations = append(e.c.Investigations, record.Investigation{InvestigationID: 10_000, RootID: 10_000,
			ArrivedAt: lastArrival * minute, Ended: true, EndedAt: 50 * minute, FinalState: "completed"})
		return &e.c
	}
	wants := map[string]float64{"goodput-reach": 720, "goodput-short": math.NaN(), "goodput-inside": 0}
	return referenceCaseOf("goodput on its thresholds", map[string]*record.Collector{
		"goodput-reach":  build(38, 22*minute, true),
		"goodput-short":  build(37, 22*minute, true),
		"goodput-inside": build(45, 21*minute+30*second, false),
	}, func(id string, want refResult) error {
		g, w := want.Metrics.Get("goodput_recovery_time"), wants[id]
		if g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
			return fmt.Errorf("goodput_recovery_time %v, want %v", g, w)
		}
		return nil
	})
}

func TestThresholdDatasets(t *testing.T) {
	for _, c := range thresholdCases() {
		t.Run(c.name, func(t *testing.T) { runViewCase(t, c) })
	}
}
