//go:build duckdb_arrow

package analysis

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
)

// The incident test on its thresholds (docs/metrics.md, tool_minutes): a minute with f
// failed attempts out of n is hot when f >= 5, f/n is above the tool's baseline p0, and
// n·KL(f/n ‖ p0) >= ln 10⁴. Here that is read as the likelihood ratio it is,
// (q/p0)^f · ((1−q)/(1−p0))^(n−f) >= 10⁴ with q = f/n, a product of powers rather than a
// sum of logarithms. The datasets put minutes within one step of each constant of the
// test: a ratio in [10⁴, 10⁴+1) and one in [10⁴−1, 10⁴) (ln 10⁴ moved by a unit of its last
// digit), minutes whose every attempt failed (no second term) within a factor e of 10⁴ on
// either side, baselines of exactly 0 and 1, a reference ratio of exactly 0, a minute far
// below a high baseline, and a tool that was only guarded (no attempt: baseline 0).

// hotLikelihoodRatio is the likelihood ratio of a minute's f failures of n at their own
// ratio against the baseline p0.
func hotLikelihoodRatio(f, n int64, p0 float64) float64 {
	q := float64(f) / float64(n)
	return math.Pow(q/p0, float64(f)) * math.Pow((1-q)/(1-p0), float64(n-f))
}

// hotByDefinition is the documented test of one minute against a baseline p0.
func hotByDefinition(f, n int64, p0 float64) bool {
	q := float64(f) / float64(n)
	switch {
	case f < 5 || q <= p0:
		return false
	case p0 == 0:
		return true // a baseline of 0: any minute with 5 failures
	}
	return hotLikelihoodRatio(f, n, p0) >= 1e4
}

// hotMinuteTool is one tool of a hot-minute run: 20 ordinary minutes (0-19) of `per`
// attempts with `failed` failures in all, spread as evenly as whole numbers allow over
// minutes failedFrom-19 (at most 4 a minute: never hot), the minutes of extra, then minute
// 25 with f failures of n. wantBase is the baseline worked out by hand from the definition,
// wantHot whether minute 25 is hot, and lo, hi the interval its likelihood ratio against
// that baseline was built to lie in.
type hotMinuteTool struct {
	tool               string
	per, failed        int64
	failedFrom         int64
	extra              []hotMinuteCount
	f, n               int64
	wantBase           float64
	wantHot            bool
	lo, hi             float64 // unchecked when hi is 0
	guarded, unguarded []int64 // minutes with a sample only (ghost)
}

// hotMinuteCount: f failures of n attempts in minute m.
type hotMinuteCount struct{ m, n, f int64 }

// hotMinuteRuns: run "hot-window" has a fault window 20:00-22:00, so pass 1 tests against the
// ratio of minutes 0-19 and minute 25 (hot) is left out of the baseline, which is that
// ratio; run "hot-nowindow" has none, so pass 1 tests against the ratio over every minute,
// minute 25's included, and a minute that is not hot stays in the baseline. Run
// "hot-window" also lists a later window, 26:00-27:00 (the earliest start counts: with the
// latest, minute 25 would be in the reference), and an empty one at 10:00 (not a window).
//
//   - "above" (window): 33 failures of 680 before the window; minute 25: 12 of 57. The
//     ratio against 33/680 is 10000.45: hot, and not hot against 10001.
//   - "all-above" (window): 29 of 200; minute 25: 5 of 5. Ratio (200/29)^5 = 15,601, within
//     a factor e above 10⁴: a second term of 1 in place of 0 makes it not hot.
//   - "zero-ref" (window): no failure before the window; minute 25: 5 of 5. Pass 1 tests
//     against a reference of exactly 0 (hot: 5 failures), the baseline is 0 and it is hot.
//   - "edge20" (window): 29 of 200, then 4 of 4 in minute 20, the window's first minute, and
//     minute 25: 5 of 5, hot against 29/200 in pass 1 (15,601): the baseline is 33/204, and
//     against it minute 25 is not hot ((204/33)^5 = 9,028). With minute 20's failures in the
//     reference, 33/200, pass 1 would not find it hot (8,177).
//   - "edge20b" (window): 32 of 200, 0 of 10 in minute 20, minute 25: 5 of 5: not hot in
//     pass 1 ((200/32)^5 = 9,537); with minute 20's attempts in the reference, 32/210, it
//     would be (12,172). The baseline is 37/215 (and (215/37)^5 = 6,625).
//   - "single" (window): one attempt before the window, answered (minute 5), then minute 25:
//     5 of 5. The reference is 0/1 = 0: hot in pass 1, a baseline of 0: hot.
//   - "early" (window): no failure in minutes 0-9, 4 of 10 a minute in 10-19; minute 25: 5
//     of 5. Against 40/200, 5^5 = 3,125: not hot; the baseline is 45/205. Counting the empty
//     window at 10:00 as the first, pass 1 would test against 0.
//   - "below" (no window): 27 of 440; minute 25: 11 of 31, baseline 38/471 with it. Ratio
//     9999.48: not hot (it would be against 9999).
//   - "all-below" (no window): 31 of 200; minute 25: 5 of 5, baseline 36/205. Ratio
//     (205/36)^5 = 5,988, within a factor e below 10⁴.
//   - "zero-base" (no window): no failure in 200; minute 25: 5 of 5. Pass 1: 5/205, ratio
//     41^5: hot, so the baseline is 0/200 = 0 and the minute is hot.
//   - "four" (no window): 2 of 400; minute 25: 4 of 4, far above the baseline 6/404 (a
//     ratio of (404/6)^4 = 2·10⁷) but fewer than 5 failures: not hot.
//   - "high" (no window): 80 of 160 (4 of 8 a minute); minute 25: 10 of 100, far below the
//     baseline 90/260: not hot, though n·KL(0.1 ‖ 90/260) = 16.3 is far above ln 10⁴.
//   - "all-failed" (no window): every attempt fails, 20 minutes of 5 of 5 and minute 25: 5 of
//     5: the baseline is exactly 1 and no minute is above it.
//   - "ghost" (no window): no attempt; samples at 31:00 (breaker open: minute 30 guarded), at
//     33:00 (closed, nothing parked: minute 32 is no row) and at 35:00 (closed, 1 parked:
//     minute 34 guarded). A baseline of 0 (no ordinary minute).
//   - "parked" (no window, built in hotMinuteRecords): a park on the open breaker at 40:00
//     and a throttle at 40:30 before sends at 42:00, and a park at 44:00 before a send at
//     45:00: minutes 40 (parked 1, throttled 1) and 44 (parked 1) are guarded without an
//     attempt. A park for another reason (a worker crashed) at 46:00, before a send at
//     47:00, neither parks on a guard nor makes minute 46 a row.
var hotMinuteRuns = map[string][]hotMinuteTool{
	"hot-window": {
		{tool: "above", per: 34, failed: 33, f: 12, n: 57, wantBase: 33.0 / 680, wantHot: true, lo: 1e4, hi: 1e4 + 1},
		{tool: "all-above", per: 10, failed: 29, f: 5, n: 5, wantBase: 29.0 / 200, wantHot: true, lo: 1e4, hi: 1e4 * math.E},
		{tool: "zero-ref", per: 10, failed: 0, f: 5, n: 5, wantBase: 0, wantHot: true},
		{tool: "edge20", per: 10, failed: 29, extra: []hotMinuteCount{{20, 4, 4}}, f: 5, n: 5, wantBase: 33.0 / 204},
		{tool: "edge20b", per: 10, failed: 32, extra: []hotMinuteCount{{20, 10, 0}}, f: 5, n: 5, wantBase: 37.0 / 215},
		{tool: "single", extra: []hotMinuteCount{{5, 1, 0}}, f: 5, n: 5, wantBase: 0, wantHot: true},
		{tool: "early", per: 10, failed: 40, failedFrom: 10, f: 5, n: 5, wantBase: 45.0 / 205},
	},
	"hot-nowindow": {
		{tool: "below", per: 22, failed: 27, f: 11, n: 31, wantBase: 38.0 / 471, lo: 1e4 - 1, hi: 1e4},
		{tool: "all-below", per: 10, failed: 31, f: 5, n: 5, wantBase: 36.0 / 205, lo: 1e4 / math.E, hi: 1e4},
		{tool: "zero-base", per: 10, failed: 0, f: 5, n: 5, wantBase: 0, wantHot: true},
		{tool: "four", per: 20, failed: 2, f: 4, n: 4, wantBase: 6.0 / 404},
		{tool: "high", per: 8, failed: 80, f: 10, n: 100, wantBase: 90.0 / 260},
		{tool: "all-failed", per: 5, failed: 100, f: 5, n: 5, wantBase: 1},
		{tool: "ghost", wantBase: 0, guarded: []int64{30, 34}, unguarded: []int64{32}},
	},
}

func hotMinuteRecords(run string) *record.Collector {
	var e edgeRecords
	end := 60 * minute
	for _, tl := range hotMinuteRuns[run] {
		counts := slices.Clone(tl.extra)
		for m := int64(0); m < 20 && tl.per > 0; m++ {
			// the failures of minute m: its share of tl.failed over minutes failedFrom-19.
			k := int64(0)
			if m >= tl.failedFrom {
				j, w := m-tl.failedFrom, 20-tl.failedFrom
				k = tl.failed*(j+1)/w - tl.failed*j/w
			}
			counts = append(counts, hotMinuteCount{m, tl.per, k})
		}
		counts = append(counts, hotMinuteCount{25, tl.n, tl.f})
		for _, c := range counts {
			for i := int64(0); i < c.n; i++ {
				e.attempt(tl.tool, c.m*minute+i*(minute/c.n), i < c.f, end)
			}
		}
	}
	if run == "hot-window" {
		e.c.Faults = append(e.c.Faults,
			record.Fault{FaultID: "down", Kind: "outage", Tool: "above", Start: 20 * minute, End: 22 * minute,
				Parameters: `{"duration_seconds":120}`, Window: true, Hits: record.HitsCalls},
			record.Fault{FaultID: "later", Kind: "outage", Tool: "above", Start: 26 * minute, End: 27 * minute,
				Parameters: `{"duration_seconds":60}`, Window: true, Hits: record.HitsCalls},
			record.Fault{FaultID: "empty", Kind: "outage", Tool: "above", Start: 10 * minute, End: 10 * minute,
				Parameters: `{"duration_seconds":0}`, Window: true, Hits: record.HitsCalls})
		return &e.c
	}
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
	return &e.c
}

// hotMinutesCase checks the runs against the reference (every tool_minutes row with its
// baseline and hot), then the view's baselines and hot minutes against the numbers worked
// out above, and that each tested minute lies where it was built to.
func hotMinutesCase() viewCase {
	runs := map[string]*record.Collector{}
	for run := range hotMinuteRuns {
		runs[run] = hotMinuteRecords(run)
	}
	ref := referenceCaseOf("hot minutes on the incident test's thresholds", runs, func(string, refResult) error { return nil })
	return viewCase{name: ref.name, load: ref.load, check: func(t testing.TB, db *DB) {
		ref.check(t, db)
		for run, tools := range hotMinuteRuns {
			for _, tl := range tools {
				if err := hotMinuteSees(tl); err != nil {
					t.Fatalf("%s %s: %v", run, tl.tool, err)
				}
				rows := query(t, db, fmt.Sprintf(`SELECT minute, baseline, hot FROM tool_minutes
					WHERE run_id = '%s' AND tool = '%s' ORDER BY minute`, run, tl.tool))
				want := len(tl.extra) + len(tl.guarded)
				if tl.per > 0 {
					want += 20
				}
				if tl.n > 0 {
					want++
				}
				if len(rows) != want {
					t.Fatalf("%s %s: %d minutes, want %d", run, tl.tool, len(rows), want)
				}
				for _, r := range rows {
					m, base, hot := r[0].(int64), r[1], r[2]
					if b, ok := base.(float64); !ok || math.Abs(b-tl.wantBase) > 1e-12 {
						t.Fatalf("%s %s minute %d: baseline %v, want %v", run, tl.tool, m, base, tl.wantBase)
					}
					if w := m == 25 && tl.wantHot; hot != w {
						t.Fatalf("%s %s minute %d: hot %v, want %v", run, tl.tool, m, hot, w)
					}
				}
			}
		}
	}}
}

// hotMinuteSees checks that the documented test, computed here as a likelihood ratio, gives
// the minute the fate it was built for against the baseline worked out by hand, within the
// interval it was built to lie in.
func hotMinuteSees(tl hotMinuteTool) error {
	if tl.n == 0 {
		return nil
	}
	if got := hotByDefinition(tl.f, tl.n, tl.wantBase); got != tl.wantHot {
		return fmt.Errorf("minute 25 hot %v by the definition, want %v", got, tl.wantHot)
	}
	if tl.hi > 0 {
		if r := hotLikelihoodRatio(tl.f, tl.n, tl.wantBase); !(r >= tl.lo && r < tl.hi) {
			return fmt.Errorf("minute 25: likelihood ratio %v, not in [%v, %v)", r, tl.lo, tl.hi)
		}
	}
	return nil
}

func TestHotMinutesOnThresholds(t *testing.T) {
	runViewCase(t, hotMinutesCase())
}
