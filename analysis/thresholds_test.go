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
	return []viewCase{edgeIncidentsCase(), edgeGoodputCase(), edgeHangCase(), emptyRunCase(), edgeEmptyWindowCase(), edgeRootsCase(), hotMinutesCase(), edgeEpisodesCase()}
}

// edgeEmptyWindowCase: a fault window of zero length (an outage of 0 s at minute 22) is
// not a window, so the failure baseline of the incident test is the rate over the whole
// run: 20 minutes of 100 attempts with one failure, 300 attempts with 15 failures in minute
// 30 and 5 minutes of 20 failed attempts from minute 40, 135 of 2,400 (5.6%). Against it
// minute 30 is not hot (the likelihood-ratio statistic is about 1.6, below ln 10⁴ = 9.2);
// against the 1% of the minutes before minute 22 it would be (12.4).
func edgeEmptyWindowCase() viewCase {
	var e edgeRecords
	end := 60 * minute
	for m := int64(0); m < 20; m++ {
		for i := 0; i < 100; i++ {
			e.attempt("api", m*minute+int64(i)*100_000_000, i == 0, end)
		}
	}
	for i := 0; i < 300; i++ {
		e.attempt("api", 30*minute+int64(i)*100_000_000, i < 15, end)
	}
	for m := int64(40); m < 45; m++ {
		for i := 0; i < 20; i++ {
			e.attempt("api", m*minute+int64(i)*second, true, end)
		}
	}
	e.c.Faults = append(e.c.Faults, record.Fault{FaultID: "empty", Kind: "outage", Tool: "api", Start: 22 * minute, End: 22 * minute,
		Parameters: `{"duration_seconds":0}`, Window: true, Hits: record.HitsCalls})
	return referenceCaseOf("a fault window of zero length", map[string]*record.Collector{"edge-empty-window": &e.c},
		func(id string, want refResult) error {
			if len(want.Incidents) != 1 || want.Incidents[0].FirstMinute != 40 {
				return fmt.Errorf("incidents %+v, want one from minute 40", want.Incidents)
			}
			return nil
		})
}

// edgeRootsCase: roots the metrics must tell apart. Root 1 leaves pending, comes back to
// it (its worker released) and leaves again; before that it has an arrival record ("" ->
// pending) and a refusal while pending (pending -> pending), neither of which starts it:
// its pending time is its first start, 60 s. Root 2 was terminated with a result that
// is valid and passed validation (a trace may say so): it is neither a valid nor a
// validated completion. The run's tokens, 1 in all (root 2's, wasted), and its compute, 1
// compute-second (root 2's execution, wasted), are exactly 1, so that a ratio over them
// cannot mistake 1 for none.
func edgeRootsCase() viewCase {
	c := &record.Collector{}
	c.Investigations = []record.Investigation{
		{InvestigationID: 1, RootID: 1, Ended: true, EndedAt: 300 * second, FinalState: "completed", TrulyValid: true, Validated: true, Steps: 1},
		{InvestigationID: 2, RootID: 2, ArrivedAt: 10 * second, Ended: true, EndedAt: 90 * second, FinalState: "terminated",
			TerminationReason: "budget_exhausted", TrulyValid: true, Validated: true, Tokens: 1, Compute: 1},
	}
	c.Transitions = []record.Transition{
		{InvestigationID: 1, At: 0, To: "pending", Event: "arrived"},
		{InvestigationID: 1, At: 10 * second, From: "pending", To: "pending", Event: "refused"},
		{InvestigationID: 1, At: 60 * second, From: "pending", To: "running", Event: "started"},
		{InvestigationID: 1, At: 100 * second, From: "running", To: "pending", Event: "released"},
		{InvestigationID: 1, At: 200 * second, From: "pending", To: "running", Event: "started"},
		{InvestigationID: 1, At: 300 * second, From: "running", To: "completed", Event: "completed"},
		{InvestigationID: 2, At: 10 * second, From: "", To: "running", Event: "started"},
		{InvestigationID: 2, At: 90 * second, From: "running", To: "terminated", Event: "terminated"},
	}
	key := record.OpKey{Investigation: 2}
	c.Spans = []record.Span{{TraceID: 2, SpanID: 1, InvestigationID: 2, Operation: record.OpExecuteTool, Tool: "api",
		HasKey: true, OpKey: key, Attempt: 1, Start: 20 * second, End: 21 * second, Status: record.StatusOK}}
	c.Executions = []record.Execution{{Tool: "api", OpKey: key, InvestigationID: 2, Execution: 1, Start: 20 * second,
		End: 21 * second, Outcome: "ok", Delivered: true, Compute: 1}}
	return referenceCaseOf("roots the metrics tell apart", map[string]*record.Collector{"edge-roots": c},
		func(id string, want refResult) error {
			m := want.Metrics
			if m.Get("median_pending_time") != 30 || m.Get("correct_completion_rate") != 0.5 ||
				m.Get("validation_pass_rate") != 1 || m.Get("wasted_token_ratio") != 1 || m.Get("wasted_compute_ratio") != 1 {
				return fmt.Errorf("metrics %v", m)
			}
			return nil
		})
}

// emptyRunCase: a run that recorded nothing (every investigation refused before it was
// written, or a horizon of zero). Its clock is one minute long, and no root arrives in it.
func emptyRunCase() viewCase {
	return referenceCaseOf("a run without records", map[string]*record.Collector{"empty": {}},
		func(id string, want refResult) error {
			if r := refGoodputRows(&record.Collector{}); len(r) != 1 || r[0].arrivalsContinue {
				return fmt.Errorf("goodput rows %+v, want one minute without arrivals", r)
			}
			return nil
		})
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
// its end) joins the hot minute 46 ahead of it; one open during minute 55, far from any hot
// minute, is no incident. Every attempt starts on a whole minute, but
// one a microsecond before minute 52, which holds 4 failures: a minute computed a microsecond
// off makes 51 or 52 hot.
func edgeIncidentsCase() viewCase {
	c := edgeIncidentsRecords()
	return referenceCaseOf("incidents on their thresholds", map[string]*record.Collector{"edge-incidents": c},
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

// edgeIncidentsRecords are the records of edgeIncidentsCase (a fresh copy each call).
func edgeIncidentsRecords() *record.Collector {
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
	// In hot minute 25, an answered attempt tagged with a fault (not a failure: its fault is
	// not the incident's) and a blocked call by another root (no disruption of the tool).
	e.attempt("api", 25*minute, false, end)
	e.c.Spans[len(e.c.Spans)-1].FaultID = "slow"
	e.attempt("api", 25*minute, false, end)
	e.c.Spans[len(e.c.Spans)-1].Status = record.StatusBlocked
	// Minute 52: 4 failures on its first instant and one a microsecond before it, in minute
	// 51: neither minute is hot.
	for i := 0; i < 4; i++ {
		e.attempt("api", 52*minute, true, end)
	}
	e.attempt("api", 52*minute-1000, true, end)
	e.c.Samples = append(e.c.Samples, record.Sample{Tool: "api", At: 45 * minute, BreakerState: "half_open"},
		record.Sample{Tool: "api", At: 56 * minute, BreakerState: "open"}) // guarded alone in minute 55: no incident
	return &e.c
}

// edgeGoodputCase: roots arrive from minute 0; valid results are 1 a minute in minutes 1-9
// (the warm-up), then the steady state. A fault window 20:00-22:00 (the steady state is the
// second half of minutes 0-19: 10-19). Run "reach": 10 a minute (mean 10, sd 0: the
// threshold is exactly 45 of 50 in 5 minutes); after the window none until minute 24, 8 in
// minute 25 and 9 a minute from 26, and one more result a microsecond before minute 25
// (in minute 24): the window 25-29 holds 44 (a minute computed a microsecond off would make
// it 45), 26-30 holds exactly 45, so 26·60 − 22·60 = 240 s; with the warm-up in the
// baseline it would pass earlier. The last arrival is in minute 30, the window's last
// minute. Run "short": the last arrival in minute 29: the windows that can be tested all
// fail, so goodput never came back (goodput_recovered 0). Run "noise": 6 and 14 in turn
// (mean 10, sample sd √(160/9)): threshold 45 − 2.326·√5·4.216 = 23.07; after the window
// 4 in minute 25 and 5 a minute from 26: 25-29 holds 24 and passes (a population sd would
// put the threshold at 24.2 and pass a minute later, no noise term never): 180 s. Run
// "inside": a window ending at 21:30 with goodput never down: back in the window's own
// minute, 0 s. Run "early9": a window at minute 9 leaves 4 steady minutes (5-8): nothing
// to test, NULL for both metrics (not a collapse); "early10", at minute 10, leaves 5: 0 s.
// Run "windows": "reach" with more faults listed before its window: a window 21:00-21:30
// inside it (neither the earliest start nor the latest end), a transient fault over the whole
// run (no duration: not a window) and an empty window at minute 10 (end = start): the
// windows still start at 20:00 and end at 22:00, so the same 240 s.
func edgeGoodputCase() viewCase {
	type run struct {
		lastArrival, from, to int64
		steady, after         func(m int64) int
		extra                 int64 // a valid result at this instant when > 0
		faults                []record.Fault
	}
	ten := func(int64) int { return 10 }
	dip := func(m int64) int {
		switch {
		case m < 25:
			return 0
		case m == 25:
			return 8
		}
		return 9
	}
	build := func(r run) *record.Collector {
		var e edgeRecords
		e.c.Faults = append(e.c.Faults, r.faults...)
		e.c.Faults = append(e.c.Faults, record.Fault{FaultID: "down", Kind: "outage", Tool: "api", Start: r.from,
			End: r.to, Parameters: fmt.Sprintf(`{"duration_seconds":%d}`, (r.to-r.from)/second), Window: true, Hits: record.HitsCalls})
		for m := int64(1); m < 50; m++ {
			n := r.steady(m)
			switch {
			case m*minute >= r.from:
				n = r.after(m)
			case m < 10 && r.from >= 20*minute:
				n = 1
			}
			for i := 0; i < n; i++ {
				e.valid(m*minute + int64(i)*second)
			}
		}
		if r.extra > 0 {
			e.valid(r.extra)
		}
		e.c.Investigations = append(e.c.Investigations, record.Investigation{InvestigationID: 10_000, RootID: 10_000,
			ArrivedAt: r.lastArrival * minute, Ended: true, EndedAt: 50 * minute, FinalState: "completed"})
		return &e.c
	}
	noise := func(m int64) int { return 6 + 8*int(m%2) }
	fives := func(m int64) int {
		switch {
		case m < 25:
			return 0
		case m == 25:
			return 4
		}
		return 5
	}
	// Steady states whose threshold, 4.5·baseline − 2.326·√5·sd, lies within 0.001·√5·sd of
	// a window's whole number of results: above it (2 results in two minutes and 29 in eight:
	// threshold 46.9897, a window of 47 from minute 25) and below it (7 in six minutes and 29
	// in four: threshold 12.0117, a window of 12 from minute 25, then 13). The constant 2.326
	// moved by one unit of its last digit moves the threshold by 0.0022·sd, across the window.
	stepAt := func(n int64, a, b int) func(int64) int {
		return func(m int64) int {
			if m < n {
				return a
			}
			return b
		}
	}
	above := func(m int64) int { return [...]int{0, 9, 9, 9, 10, 10, 10}[min(max(m-24, 0), 6)] }
	below := func(m int64) int { return [...]int{0, 2, 2, 2, 3, 3, 3}[min(max(m-24, 0), 6)] }
	edge := map[string]bool{"goodput-z-above": true, "goodput-z-below": false}
	// A steady state of no results (no level to return to), one of exactly 1 result a
	// minute (a level all the same), and a recovery half a second after the last window ends.
	zero := func(int64) int { return 0 }
	one := func(int64) int { return 1 }
	from22 := func(m int64) int { return 10 * int(min(max(m-21, 0), 1)) }
	nan := math.NaN()
	wants := map[string][2]float64{"goodput-zero": {nan, nan}, "goodput-one": {0, 1}, "goodput-subsecond": {0.5, 1}, "goodput-z-above": {180, 1}, "goodput-z-below": {240, 1}, "goodput-reach": {240, 1}, "goodput-short": {nan, 0}, "goodput-noise": {180, 1},
		"goodput-inside": {0, 1}, "goodput-early9": {nan, nan}, "goodput-early10": {0, 1}, "goodput-windows": {240, 1}}
	others := []record.Fault{
		{FaultID: "inner", Kind: "hang", Tool: "api", Start: 21 * minute, End: 21*minute + 30*second, Parameters: `{"duration_seconds":30}`, Window: true, Hits: record.HitsCalls},
		{FaultID: "noise", Kind: "transient", Tool: "api", Start: 0, End: 50 * minute, Parameters: `{"probability":0.01}`, Hits: record.HitsCalls},
		{FaultID: "empty", Kind: "outage", Tool: "api", Start: 10 * minute, End: 10 * minute, Parameters: `{"duration_seconds":0}`, Window: true, Hits: record.HitsCalls},
	}
	runs := map[string]*record.Collector{
		"goodput-zero":      build(run{45, 20 * minute, 22 * minute, zero, ten, 0, nil}),
		"goodput-one":       build(run{45, 20 * minute, 22 * minute, one, one, 0, nil}),
		"goodput-subsecond": build(run{45, 20 * minute, 22*minute - second/2, ten, from22, 0, nil}),
		"goodput-z-above":   build(run{45, 20 * minute, 22 * minute, stepAt(12, 2, 29), above, 0, nil}),
		"goodput-z-below":   build(run{45, 20 * minute, 22 * minute, stepAt(16, 7, 29), below, 0, nil}),
		"goodput-reach":     build(run{30, 20 * minute, 22 * minute, ten, dip, 25*minute - 1000, nil}),
		"goodput-short":     build(run{29, 20 * minute, 22 * minute, ten, dip, 25*minute - 1000, nil}),
		"goodput-noise":     build(run{40, 20 * minute, 22 * minute, noise, fives, 0, nil}),
		"goodput-inside":    build(run{45, 20 * minute, 21*minute + 30*second, ten, ten, 0, nil}),
		"goodput-early9":    build(run{45, 9 * minute, 11 * minute, ten, ten, 0, nil}),
		"goodput-early10":   build(run{45, 10 * minute, 12 * minute, ten, ten, 0, nil}),
		"goodput-windows":   build(run{30, 20 * minute, 22 * minute, ten, dip, 25*minute - 1000, others}),
	}
	return referenceCaseOf("goodput on its thresholds", runs, func(id string, want refResult) error {
		if up, ok := edge[id]; ok {
			r := refGoodputRows(runs[id])[25]
			gap := float64(r.window) - r.threshold
			if !up {
				gap = -gap
			}
			if !(gap > 0 && gap < 0.001*math.Sqrt(5)*r.sd) {
				return fmt.Errorf("minute 25: window %d, threshold %v, sd %v: not within 0.001·√5·sd on the side built", r.window, r.threshold, r.sd)
			}
		}
		same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
		g, back, w := want.Metrics.Get("goodput_recovery_time"), want.Metrics.Get("goodput_recovered"), wants[id]
		if !same(g, w[0]) || !same(back, w[1]) {
			return fmt.Errorf("goodput_recovery_time %v, goodput_recovered %v; want %v, %v", g, back, w[0], w[1])
		}
		return nil
	})
}

func TestThresholdDatasets(t *testing.T) {
	for _, c := range thresholdCases() {
		t.Run(c.name, func(t *testing.T) { runViewCase(t, c) })
	}
}
