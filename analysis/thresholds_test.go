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
// The check runs the rule both ways on the dataset's calls and wants the table to take the
// whole-run way. Without a reference the first pass's baseline is the calmer half of the
// calls (detect.calmHalf), here the 1% of the first 20 minutes too, so both ways now find
// the brownout: the dataset holds the table to the rule without a reference, and
// TestZeroLengthWindowIsNoWindow (metric/compute) holds the Sink to ignoring such a window.
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
			if got := incidentWindows(want.Incidents, "api"); !slices.Equal(got, spanWindows(whole.Incidents)) || len(got) == 0 {
				return fmt.Errorf("incidents %v: want those of the rule without a reference %v (with one at minute 22: %v)",
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

// edgeGoodputCase: datasets on the edges of the goodput rule (detect.GoodputRecovery, in
// valid results: windows of 30 results, a steady state of at least 60, Limit the
// ⌈0.99·m⌉-th smallest duration of its m windows, a window back when 9·duration <=
// 10·Limit). Roots arrive from 0:00; a warm-up of 1 valid result a minute at 0:30, 1:30, ...,
// 9:30; the fault window 20:00-22:00, so the steady state is the results in [10:00, 20:00)
// (2t >= 0 + 20:00 and t < 20:00); the last root arrives at 45:00 unless said. Every figure
// below is derived by hand; the check also wants the reference's own steady count and Limit.
//
//   - "zero": no result in the steady state: fewer than 60, nothing tested (NULL, NULL).
//   - "60": 60 results 10 s apart from 10:00 (to 19:50): exactly 60; its 31 windows last
//     29·10 = 290 s, Limit 290 s; after the fault, results 10 s apart from 22:00: the window
//     from 22:00 lasts 290 s, 9·290 <= 10·290: back at once (0 s, 1).
//   - "59": "60" with its first result a microsecond before 10:00, in the warm-up's half: 59
//     steady results, nothing tested (NULL, NULL).
//   - "at-limit": 67 results 9 s apart from 10:00 (to 19:54): 38 windows of 261 s, Limit 261 s,
//     so a window is back when it lasts at most 290 s (9·290 = 10·261); after the fault the
//     results of "60": the window from 22:00 lasts exactly 290 s: back (0 s, 1). A rule that
//     counted the fault's end out (t > 22:00) would start it at 22:10 and end it at 27:00,
//     300 s from 22:00: not back (then 10 s).
//   - "above-limit": "at-limit" with the 30th result after the fault (22:00 + 290 s) a
//     microsecond later: the window from 22:00 lasts 290 s + 1 µs (9·d = 10·Limit + 9 µs:
//     not back); the one from the next result, 22:10 to 27:00, lasts 290 s: back, 10 s (1).
//     With the warm-up in the steady state, Limit would be far larger and it back at once.
//   - "arrival-at": "above-limit" with the last arrival at 27:00, the end of that window:
//     still tested (10 s, 1). "arrival-before": a microsecond before 27:00: only the windows
//     ending by then are tested, that from 22:00 (ending 26:50 + 1 µs) and none back:
//     (NULL, 0). "arrival-decided": the last arrival at 26:50, a microsecond before the
//     window from 22:00 ends: no window is complete, but that one already lasts 290 s by the
//     last arrival, longer when it ends: never back (NULL, 0). "untested": a microsecond
//     earlier still, 26:50 − 1 µs: it could yet be back, nothing tested (NULL, NULL).
//   - "silent": "at-limit" without a result after the fault while roots arrive until 45:00
//     (a fleet that collapsed): no window is ever complete, and the one from 22:00 lasts
//     longer than 290 s by 26:50: never back (NULL, 0), not "nothing to test".
//   - "subsecond": "at-limit" with the results after the fault half a second later (22:00.5,
//     22:10.5, ...): the window from 22:00 lasts 290.5 s (not back), the one from 22:00.5
//     290 s: back 0.5 s after the fault (1).
//   - "windows": "subsecond" with more faults listed before its window: a window
//     21:00-21:30 inside it (neither the earliest start nor the latest end: from 21:30 the
//     answer would be 30.5 s), a transient fault over the whole run (no duration: not a
//     window; as one it would start at the first arrival, nothing tested) and an empty
//     window at 10:00 (end = start; as one, the steady state would be the warm-up's 5
//     results in [5:00, 10:00), nothing tested): the same 0.5 s.
//   - "p99-fast" and "p99-slow": 129 steady results, 10:00, then 10:40 and 126 more 4 s
//     apart (to 19:04), then 19:18: gaps of 40 s, 126 of 4 s and 14 s. Window i spans gaps
//     i to i+28: window 0 lasts 40 + 28·4 = 152 s, windows 1-98 last 116 s, window 99 lasts
//     28·4 + 14 = 126 s; m = 100, so Limit is the 99th smallest, 126 s (the 98th is 116 s,
//     the 100th 152 s), and a window is back when it lasts at most 140 s. After the fault,
//     results 4.5 s apart from 22:00 ("fast": windows of 130.5 s, back at once: 0 s, 1; not
//     back against 116 s) or 5 s apart ("slow": 145 s, never back: NULL, 0; back at once
//     against 152 s).
func edgeGoodputCase() viewCase {
	const us = int64(1000) // ns
	every := func(from int64, n int, gap int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = from + int64(i)*gap
		}
		return out
	}
	type run struct {
		steady, after []int64 // valid results (ns) before and after the fault
		lastArrival   int64
		faults        []record.Fault // listed before the window 20:00-22:00
	}
	build := func(r run) *record.Collector {
		var e edgeRecords
		e.c.Faults = append(e.c.Faults, r.faults...)
		e.c.Faults = append(e.c.Faults, record.Fault{FaultID: "down", Kind: "outage", Tool: "api", Start: 20 * minute,
			End: 22 * minute, Parameters: `{"duration_seconds":120}`, Window: true, Hits: record.HitsCalls})
		for _, at := range slices.Concat(every(30*second, 10, minute), r.steady, r.after) {
			e.valid(at)
		}
		e.c.Investigations = append(e.c.Investigations, record.Investigation{InvestigationID: 10_000, RootID: 10_000,
			ArrivedAt: r.lastArrival, Ended: true, EndedAt: 50 * minute, FinalState: "completed"})
		return &e.c
	}
	tens := every(22*minute, 160, 10*second) // 22:00 to 48:30
	late := slices.Clone(tens)
	late[29] += us
	halfLate := every(22*minute+second/2, 160, 10*second)
	s60 := every(10*minute, 60, 10*second)
	s59 := slices.Clone(s60)
	s59[0] -= us
	s67 := every(10*minute, 67, 9*second)
	s129 := slices.Concat([]int64{10 * minute}, every(10*minute+40*second, 127, 4*second), []int64{19*minute + 18*second})
	others := []record.Fault{
		{FaultID: "inner", Kind: "hang", Tool: "api", Start: 21 * minute, End: 21*minute + 30*second, Parameters: `{"duration_seconds":30}`, Window: true, Hits: record.HitsCalls},
		{FaultID: "noise", Kind: "transient", Tool: "api", Start: 0, End: 50 * minute, Parameters: `{"probability":0.01}`, Hits: record.HitsCalls},
		{FaultID: "empty", Kind: "outage", Tool: "api", Start: 10 * minute, End: 10 * minute, Parameters: `{"duration_seconds":0}`, Window: true, Hits: record.HitsCalls},
	}
	runs := map[string]*record.Collector{
		"goodput-zero":            build(run{nil, tens, 45 * minute, nil}),
		"goodput-60":              build(run{s60, tens, 45 * minute, nil}),
		"goodput-59":              build(run{s59, tens, 45 * minute, nil}),
		"goodput-at-limit":        build(run{s67, tens, 45 * minute, nil}),
		"goodput-above-limit":     build(run{s67, late, 45 * minute, nil}),
		"goodput-arrival-at":      build(run{s67, late, 27 * minute, nil}),
		"goodput-arrival-before":  build(run{s67, late, 27*minute - us, nil}),
		"goodput-arrival-decided": build(run{s67, late, 26*minute + 50*second, nil}),
		"goodput-untested":        build(run{s67, late, 26*minute + 50*second - us, nil}),
		"goodput-silent":          build(run{s67, nil, 45 * minute, nil}),
		"goodput-subsecond":       build(run{s67, halfLate, 45 * minute, nil}),
		"goodput-windows":         build(run{s67, halfLate, 45 * minute, others}),
		"goodput-p99-fast":        build(run{s129, every(22*minute, 300, 4500*1000*us), 45 * minute, nil}),
		"goodput-p99-slow":        build(run{s129, every(22*minute, 270, 5*second), 45 * minute, nil}),
	}
	nan := math.NaN()
	type want struct {
		time, back float64
		steady     int
		limit      int64 // µs; 0 when the steady state is too short
	}
	wants := map[string]want{
		"goodput-zero":            {nan, nan, 0, 0},
		"goodput-60":              {0, 1, 60, 290e6},
		"goodput-59":              {nan, nan, 59, 0},
		"goodput-at-limit":        {0, 1, 67, 261e6},
		"goodput-above-limit":     {10, 1, 67, 261e6},
		"goodput-arrival-at":      {10, 1, 67, 261e6},
		"goodput-arrival-before":  {nan, 0, 67, 261e6},
		"goodput-arrival-decided": {nan, 0, 67, 261e6},
		"goodput-untested":        {nan, nan, 67, 261e6},
		"goodput-silent":          {nan, 0, 67, 261e6},
		"goodput-subsecond":       {0.5, 1, 67, 261e6},
		"goodput-windows":         {0.5, 1, 67, 261e6},
		"goodput-p99-fast":        {0, 1, 129, 126e6},
		"goodput-p99-slow":        {nan, 0, 129, 126e6},
	}
	// 9·d − 10·Limit (µs) of the window from the fault's end, on the edge: 0 and 9.
	edge := map[string]int64{"goodput-at-limit": 0, "goodput-above-limit": 9}
	return referenceCaseOf("goodput on its thresholds", runs, func(id string, got refResult) error {
		w := wants[id]
		valid, first, last, windows, _ := refGoodputInstants(runs[id])
		g, err := detect.GoodputRecovery(valid, first, last, windows)
		if err != nil {
			return err
		}
		if g.Steady != w.steady || g.Limit != w.limit {
			return fmt.Errorf("steady state of %d results, Limit %d µs; want %d, %d", g.Steady, g.Limit, w.steady, w.limit)
		}
		if e, ok := edge[id]; ok {
			j := slices.IndexFunc(valid, func(v int64) bool { return v >= g.FaultEnd })
			if d := valid[j+detect.GoodputWindow-1] - g.FaultEnd; 9*d-10*g.Limit != e {
				return fmt.Errorf("the window from the fault's end lasts %d µs: 9·d − 10·Limit = %d, want %d", d, 9*d-10*g.Limit, e)
			}
		}
		same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
		gt, back := got.Metrics.Get("goodput_recovery_time"), got.Metrics.Get("goodput_recovered")
		if !same(gt, w.time) || !same(back, w.back) {
			return fmt.Errorf("goodput_recovery_time %v, goodput_recovered %v; want %v, %v", gt, back, w.time, w.back)
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
