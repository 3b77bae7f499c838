//go:build duckdb_arrow

package analysis

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/mayday-sim/mayday/metric/detect"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// thresholdCases are datasets that put values on the thresholds of the incident and
// goodput definitions, at whole minutes (so a minute computed one microsecond off shows),
// and make medians and means differ. Each is checked against the Go reference, which must
// itself see the edge the dataset was built for.
func thresholdCases() []viewCase {
	return []viewCase{edgeIncidentsCase(), edgeGoodputCase(), edgeHangCase(), emptyRunCase(), edgeEmptyWindowCase(), edgeRootsCase(), guardedMinutesCase(), edgeEpisodesCase()}
}

// edgeEmptyWindowCase: a fault window of zero length (an outage of 0 s at minute 22) is
// not a window, so the incident rule's first pass estimates the baseline from every call,
// not from those before minute 22: 20 minutes of 100 calls with one failure (1%), then a
// brownout of 300 calls at minute 30 failing one in five, and 5 minutes of 20 failed calls
// in a row from minute 40. Against the 1% before minute 22 (p0 about 1.5% with its bound)
// each five calls of the brownout add about ln(0.5/0.015) + 4·ln(0.5/0.985) = +0.8 nats, an
// incident; against the ratio outside the burst over every call, 80 of 2300 (p0 about
// 4.3%), they add about −0.3: its evidence never builds up.
// The check runs the rule both ways on the dataset's calls and wants them to differ, the
// reference (and the table) taking the whole-run estimate.
func edgeEmptyWindowCase() viewCase {
	var e edgeRecords
	end := 60 * minute
	for m := int64(0); m < 20; m++ {
		for i := 0; i < 100; i++ {
			e.attempt("api", m*minute+int64(i)*100_000_000, i == 0, end)
		}
	}
	for i := 0; i < 300; i++ {
		e.attempt("api", 30*minute+int64(i)*100_000_000, i%5 == 0, end)
	}
	for m := int64(40); m < 45; m++ {
		for i := 0; i < 20; i++ {
			e.attempt("api", m*minute+int64(i)*second, true, end)
		}
	}
	e.c.Faults = append(e.c.Faults, record.Fault{FaultID: "empty", Kind: "outage", Tool: "api", Start: 22 * minute, End: 22 * minute,
		Parameters: `{"duration_seconds":0}`, Window: true, Hits: record.HitsCalls})
	c := &e.c
	return referenceCaseOf("a fault window of zero length", map[string]*record.Collector{"edge-empty-window": c},
		func(id string, want refResult) error {
			calls := refToolCalls(refCalls(c))["api"]
			opts := detect.Options{End: tsMicros(runEnd(c))}
			whole, err := detect.Incidents(calls, opts)
			if err != nil {
				return err
			}
			opts.Reference, opts.HasReference = 22*minute/1000, true
			before, err := detect.Incidents(calls, opts)
			if err != nil {
				return err
			}
			if got := incidentWindows(want.Incidents, "api"); !slices.Equal(got, spanWindows(whole.Incidents)) ||
				slices.Equal(got, spanWindows(before.Incidents)) {
				return fmt.Errorf("incidents %v: want those of the whole run's baseline %v, which differ from those of the calls before minute 22 %v",
					got, spanWindows(whole.Incidents), spanWindows(before.Incidents))
			}
			return nil
		})
}

// incidentWindows is the windows [start, end) (µs) of tool's incidents.
func incidentWindows(incidents []refIncident, tool string) [][2]int64 {
	var out [][2]int64
	for _, inc := range incidents {
		if inc.Tool == tool {
			out = append(out, [2]int64{inc.Start, inc.End})
		}
	}
	return out
}

func spanWindows(spans []detect.Span) [][2]int64 {
	var out [][2]int64
	for _, s := range spans {
		out = append(out, [2]int64{s.Start, s.End})
	}
	return out
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
// until their one-hour timeout (minute 85) and are retried in minute 86. Nothing else is
// sent meanwhile, and silence does not end an incident: it spans [25:00, 86:00), from the
// first failed call to the first call after it that did not fail (a retry). Its
// retries_sent is 6: the retries of its calls, whenever they went out. Six failures in a row
// are an incident: MinFailed is 5, and each adds ln(p1/p0) >= ln(1/2 / p0) with p0 the
// upper bound of the baseline (see edgeStep), past detect.Threshold after 5.
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
			if err := edgeStep(20, 2000+12, 5); err != nil {
				return err
			}
			if len(want.Incidents) != 1 || want.Incidents[0].Start != 25*minute/1000 || want.Incidents[0].End != 86*minute/1000 ||
				want.Incidents[0].Retries != 6 {
				return fmt.Errorf("incidents %+v, want one over [25:00, 86:00) with 6 retries", want.Incidents)
			}
			return nil
		})
}

// edgeStep checks that k failed calls in a row reach the incident threshold
// detect.Threshold(n, DefaultAlpha) for a tool whose n tested calls hold f failures (f of
// the baseline, the spans' own left out): the rule tests against p0, the upper
// DefaultAlpha/4 Chernoff bound of f/n of the calls outside the spans (at most f of n−k),
// and a failure adds ln(p1/p0) with p1 = (1+p0)/2 >= 1/2, so k failures add at least
// k·ln(1/(2·p0)).
func edgeStep(f, n, k int) error {
	p0 := chernoffUpper(f, n-k, detect.DefaultAlpha/4)
	h := detect.Threshold(n, detect.DefaultAlpha)
	if got := float64(k) * math.Log(0.5/p0); got < h {
		return fmt.Errorf("%d failures in a row add %.3g nats against p0 %.4g, below the threshold %.3g", k, got, p0, h)
	}
	return nil
}

// chernoffUpper is the largest q >= f/n with n·KL(f/n ‖ q) <= ln(1/delta) (the upper
// confidence bound the rule tests a baseline at), by bisection.
func chernoffUpper(f, n int, delta float64) float64 {
	p := float64(f) / float64(n)
	kl := func(q float64) float64 {
		v := (1 - p) * math.Log((1-p)/(1-q))
		if p > 0 {
			v += p * math.Log(p/q)
		}
		return v
	}
	lo, hi := p, 1.0
	for range 100 {
		if mid := (lo + hi) / 2; float64(n)*kl(mid) > math.Log(1/delta) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
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

// edgeIncidentsCase: a baseline of 1% failures (20 minutes of 100 calls, one failed), then
// bursts of failed calls in a row, each followed by 40 answered calls a second apart (enough
// to bring the evidence back to 0: each adds ln((1−p1)/(1−p0)) <= ln(1/2 / (1−p0)), about
// −0.68 nats, and the threshold is about 14): 5 failures on the first instant of minute 25
// (MinFailed, and 5·ln(1/(2·p0)) past detect.Threshold: edgeStep), with an answered call
// tagged with a fault (not the incident's) and a blocked one (not sent) at the same instant:
// an incident from 25:00 to the first answered call after (25:01); 4 at minute 38 (below
// MinFailed: none, whatever the evidence); 4 on the first instant of minute 52 and one a
// microsecond before it: an incident from that microsecond, in minute 51; and 6 at minute
// 58 with no call after them: an incident open until the run's end (60:00). A breaker open
// during minute 44 (a sample at its end) and during minute 55 guard those minutes, and
// make no incident of their own: silence and guards are no evidence.
func edgeIncidentsCase() viewCase {
	c := edgeIncidentsRecords()
	return referenceCaseOf("incidents on their thresholds", map[string]*record.Collector{"edge-incidents": c},
		func(id string, want refResult) error {
			if err := edgeStep(24, len(refCalls(c)), 5); err != nil {
				return err
			}
			if got, w := incidentWindows(want.Incidents, "api"), edgeIncidentWindows(); !slices.Equal(got, w) {
				return fmt.Errorf("incidents %v, want %v", got, w)
			}
			return nil
		})
}

// edgeIncidentWindows are the incidents of edgeIncidentsRecords (µs).
func edgeIncidentWindows() [][2]int64 {
	const m = minute / 1000
	return [][2]int64{{25 * m, 25*m + 1_000_000}, {52*m - 1, 52*m + 1_000_000}, {58 * m, 60 * m}}
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
	quiet := func(from int64) {
		for i := int64(1); i <= 40; i++ {
			e.attempt("api", from+i*second, false, end)
		}
	}
	for _, burst := range []struct {
		minute, failed int64
	}{{25, 5}, {38, 4}} {
		for i := int64(0); i < burst.failed; i++ {
			e.attempt("api", burst.minute*minute, true, end)
		}
		quiet(burst.minute * minute)
	}
	// At the first instant of minute 25, an answered attempt tagged with a fault (not a
	// failure: its fault is not the incident's) and a blocked call by another root (not sent).
	e.attempt("api", 25*minute, false, end)
	e.c.Spans[len(e.c.Spans)-1].FaultID = "slow"
	e.attempt("api", 25*minute, false, end)
	e.c.Spans[len(e.c.Spans)-1].Status = record.StatusBlocked
	// Minute 52: 4 failures on its first instant and one a microsecond before it.
	e.attempt("api", 52*minute-1000, true, end)
	for i := 0; i < 4; i++ {
		e.attempt("api", 52*minute, true, end)
	}
	quiet(52 * minute)
	for i := 0; i < 6; i++ {
		e.attempt("api", 58*minute, true, end)
	}
	e.c.Samples = append(e.c.Samples, record.Sample{Tool: "api", At: 45 * minute, BreakerState: "half_open"},
		record.Sample{Tool: "api", At: 56 * minute, BreakerState: "open"})
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

// guardedMinutesCase: minutes a tool was guarded without a call are rows of tool_minutes,
// and no incident. Tool "ghost" has no call: samples at 31:00 (breaker open: minute 30
// guarded), at 33:00 (closed, nothing parked: minute 32 is no row) and at 35:00 (closed, 1
// parked: minute 34 guarded). Tool "parked": a park on the open breaker at 40:00 and a
// throttle at 40:30 before sends at 42:00, and a park at 44:00 before a send at 45:00:
// minutes 40 (parked 1, throttled 1) and 44 (parked 1) are guarded without a call. A park
// for another reason (a worker crashed) at 46:00, before a send at 47:00, neither parks on
// a guard nor makes minute 46 a row.
func guardedMinutesCase() viewCase {
	var e edgeRecords
	end := 60 * minute
	e.c.Samples = append(e.c.Samples, record.Sample{Tool: "ghost", At: 31 * minute, BreakerState: "open"},
		record.Sample{Tool: "ghost", At: 33 * minute, BreakerState: "closed"},
		record.Sample{Tool: "ghost", At: 35 * minute, BreakerState: "closed", Parked: 1})
	for _, p := range []struct {
		at, send int64
		reason   string
	}{{40 * minute, 42 * minute, "breaker_open"}, {40*minute + 30*second, 42 * minute, "retry_throttled"}, {44 * minute, 45 * minute, "breaker_open"}, {46 * minute, 47 * minute, "worker_crashed"}} {
		e.attempt("parked", p.send, false, end)
		e.c.Investigations[len(e.c.Investigations)-1].ArrivedAt = 39 * minute
		e.c.Transitions = append(e.c.Transitions, record.Transition{InvestigationID: e.inv, At: p.at, From: "running",
			To: "waiting", Event: "failed", Action: "park", Reason: p.reason})
	}
	ref := referenceCaseOf("guarded minutes without a call", map[string]*record.Collector{"guarded-minutes": &e.c},
		func(string, refResult) error { return nil })
	return viewCase{name: ref.name, load: ref.load, check: func(t testing.TB, db *DB) {
		ref.check(t, db)
		var got []string
		for _, r := range query(t, db, `SELECT tool, minute, attempts, parked, throttled, guarded, in_incident FROM tool_minutes
			WHERE run_id = 'guarded-minutes' ORDER BY tool, minute`) {
			got = append(got, fmt.Sprint(r))
		}
		want := []string{"[ghost 30 0 0 0 true false]", "[ghost 34 0 0 0 true false]", "[parked 40 0 1 1 true false]",
			"[parked 42 2 0 0 false false]", "[parked 44 0 1 0 true false]", "[parked 45 1 0 0 false false]", "[parked 47 1 0 0 false false]"}
		if !slices.Equal(got, want) {
			t.Errorf("tool_minutes %q, want %q", got, want)
		}
	}}
}
