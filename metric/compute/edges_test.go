package compute

import (
	"math"
	"slices"
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
)

// These tests build runs by hand around one rule each, at the values where the rule's
// boundary decides the result, so that a rule off by one (a window of four minutes, a
// comparison that lets equality through) changes a metric.

const minute = 60 * sec

// same reports whether got is want, NaN for NaN.
func same(got, want float64) bool { return got == want || math.IsNaN(got) && math.IsNaN(want) }

// hand builds records for a Sink, numbering spans.
type hand struct {
	s    *Sink
	span uint64
}

func newHand(opts Options) *hand { return &hand{s: New(opts)} }

func (h *hand) next() uint64 { h.span++; return h.span }

// failed is a failed attempt at tool t of step step of investigation inv, sent at at.
func (h *hand) failed(inv, step, at int64) {
	h.s.Span(&record.Span{InvestigationID: inv, SpanID: h.next(), Operation: record.OpExecuteTool, Tool: "t", HasKey: true,
		OpKey: record.OpKey{Investigation: inv, Step: int32(step)}, Attempt: 1, Start: at, End: at, Status: record.StatusError})
}

// valid is a valid result of step step (0: of no step) of investigation inv at at.
func (h *hand) valid(inv, step, at int64) {
	h.s.Span(&record.Span{InvestigationID: inv, SpanID: h.next(), Operation: record.OpValidate, HasKey: step > 0,
		OpKey: record.OpKey{Investigation: inv, Step: int32(step)}, Start: at, End: at, Status: record.StatusOK})
}

// row is the row of root inv, arrived at arrived, ended at ended (-1: still open).
func (h *hand) row(inv, arrived, ended int64) {
	r := &record.Investigation{InvestigationID: inv, RootID: inv, ArrivedAt: arrived, FinalState: "running"}
	if ended >= 0 {
		r.Ended, r.EndedAt, r.FinalState = true, ended, "completed"
	}
	h.s.Investigation(r)
}

func (h *hand) finish(t *testing.T) Row {
	t.Helper()
	r, err := h.s.Finish(0)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// An episode runs from its step's first sign to the step's first valid result at or after
// it, else to its investigation's end (never recovered), else to the run's end (censored:
// neither recovered nor never).
func TestEpisodeOutcomes(t *testing.T) {
	h := newHand(Options{})
	// Investigation 1: step 1 fails at 10 s and is valid at 40 s (recovered, 30 s); step 2's
	// first sign is an invalid result at 45 s before its failure at 50 s, valid at 100 s
	// (55 s); step 3 was valid at 5 s, fails at 20 s, is valid at 90 s and 80 s (the first
	// valid result after the sign counts: 60 s); step 4 fails at 60 s and never recovers
	// before the investigation ends at 200 s (never, 140 s).
	h.failed(1, 1, 10*sec)
	h.valid(1, 1, 40*sec)
	h.s.Span(&record.Span{InvestigationID: 1, SpanID: h.next(), Operation: record.OpValidate, HasKey: true,
		OpKey: record.OpKey{Investigation: 1, Step: 2}, Start: 45 * sec, End: 45 * sec, Status: record.StatusInvalid})
	h.failed(1, 2, 50*sec)
	h.valid(1, 2, 100*sec)
	h.valid(1, 3, 5*sec)
	h.failed(1, 3, 20*sec)
	h.valid(1, 3, 90*sec)
	h.valid(1, 3, 80*sec)
	h.failed(1, 4, 60*sec)
	h.row(1, 0, 200*sec)
	// Investigation 2 fails at 100 s and is still open when the run ends at 200 s: censored
	// at 100 s.
	h.failed(2, 1, 100*sec)
	h.row(2, 0, -1)
	r := h.finish(t)
	// 3 recovered of 5 episodes.
	if g := r.Get("episode_recovery_rate"); g != 3.0/5 {
		t.Errorf("episode_recovery_rate = %v, want 3/5 (the censored episode is not recovered)", g)
	}
	// Kaplan-Meier over 30 (r), 55 (r), 60 (r), 100 (c), 140 (n): the recovered share is
	// 1/5, then + 4/5·1/4, then + 3/5·1/3 = 0.6 at 60 s; nothing more recovers.
	if g := r.Get("median_recovery_time"); g != 60 {
		t.Errorf("median_recovery_time = %v, want 60", g)
	}
	if g := r.Get("p95_recovery_time"); !math.IsNaN(g) {
		t.Errorf("p95_recovery_time = %v, want NaN (only 60%% ever recover)", g)
	}
}

// A censored episode leaves the set at risk without recovering or failing to: over 10 (r),
// 20 (c), 30 (r), 40 (r) the recovered share is 1/4 at 10 s, 1/4 + 3/4·1/2 = 5/8 at 30 s
// and 1 at 40 s. Counted as recovered the median would be 20 s; as never recovered, the
// share would stop at 3/4 and p95 be undefined.
func TestCensoredEpisodeLeavesTheRiskSet(t *testing.T) {
	h := newHand(Options{})
	for i, c := range []struct {
		length int64
		open   bool
	}{{10, false}, {20, true}, {30, false}, {40, false}} {
		inv := int64(i + 1)
		if !c.open {
			h.failed(inv, 1, 0)
			h.valid(inv, 1, c.length*sec)
			h.row(inv, 0, c.length*sec)
		} else {
			// The run ends at 40 s (the last row): an episode open from 20 s is censored at 20 s.
			h.failed(inv, 1, 20*sec)
			h.row(inv, 0, -1)
		}
	}
	r := h.finish(t)
	for name, want := range map[string]float64{"median_recovery_time": 30, "p95_recovery_time": 40, "episode_recovery_rate": 3.0 / 4} {
		if g := r.Get(name); g != want {
			t.Errorf("%s = %v, want %v", name, g, want)
		}
	}
}

// goodputRun is a run of one root arriving at the start of each minute up to lastArrival,
// valid[m] valid results in minute m, and fault windows covering minutes [from, to): two
// overlapping ones, [from, to-1) and [from+1, to), and with extraWindows more inside them,
// a fault that is no window and a window of no length before them.
func goodputRun(t *testing.T, valid []int64, from, to, lastArrival int64, extraWindows ...bool) Row {
	t.Helper()
	h := newHand(Options{})
	for m := int64(0); m <= lastArrival; m++ {
		h.row(m+1, m*minute, m*minute+sec)
	}
	for m, n := range valid {
		for range n {
			h.valid(0, 0, int64(m)*minute+30*sec)
		}
	}
	if len(extraWindows) > 0 {
		// Inside [from, to): windows that neither start earlier nor end later.
		h.s.Fault(&record.Fault{Kind: "outage", Window: true, Start: (from + 1) * minute, End: to * minute})
		h.s.Fault(&record.Fault{Kind: "transient", Start: 0, End: 40 * minute})
		h.s.Fault(&record.Fault{Kind: "outage", Window: true, Start: 3 * minute, End: 3 * minute})
	}
	h.s.Fault(&record.Fault{Kind: "outage", Window: true, Start: from * minute, End: (to - 1) * minute})
	h.s.Fault(&record.Fault{Kind: "outage", Window: true, Start: (from + 1) * minute, End: to * minute})
	if len(extraWindows) > 0 {
		h.s.Fault(&record.Fault{Kind: "outage", Window: true, Start: from * minute, End: (from + 1) * minute})
	}
	return h.finish(t)
}

// start is investigation inv leaving pending at at.
func (h *hand) start(inv, at int64) {
	h.s.Transition(&record.Transition{InvestigationID: inv, At: at, From: "pending", To: "running"})
}

// sub is the row of subagent inv of root 1, arrived at arrived, still open.
func (h *hand) sub(inv, arrived int64) {
	h.s.Investigation(&record.Investigation{InvestigationID: inv, ParentID: 1, RootID: 1, ArrivedAt: arrived, FinalState: "running"})
}

// An investigation waits from its arrival to its first start; one that never started waits
// until the run's end. Roots and subagents are counted apart.
func TestPendingTimes(t *testing.T) {
	for _, c := range []struct {
		name            string
		build           func(h *hand)
		root, subagents float64
	}{
		// Waits 10 s and 160 s (arrived at 40 s, never started, the run ends at 200 s): 85.
		{"never started", func(h *hand) {
			h.start(1, 10*sec)
			h.row(1, 0, 200*sec)
			h.row(2, 40*sec, -1)
		}, 85, math.NaN()},
		// The first start counts, whatever order the transitions come in: 50 s, not 60 s;
		// a transition into pending or out of running is no start. Waits 10 s and 50 s: 30.
		{"first start", func(h *hand) {
			h.start(1, 10*sec)
			h.row(1, 0, 200*sec)
			h.start(2, 60*sec)
			h.start(2, 50*sec)
			h.s.Transition(&record.Transition{InvestigationID: 2, At: 20 * sec, From: "running", To: "pending"})
			h.s.Transition(&record.Transition{InvestigationID: 2, At: 30 * sec, From: "pending", To: "pending"})
			h.row(2, 0, 200*sec)
		}, 30, math.NaN()},
		// Subagents: 5 s, and 140 s for one arrived at 60 s that never started: 72.5.
		{"subagents", func(h *hand) {
			h.start(1, 0)
			h.start(4, 35*sec)
			h.sub(4, 30*sec)
			h.sub(5, 60*sec)
			h.row(1, 0, 200*sec)
		}, 0, 72.5},
	} {
		h := newHand(Options{})
		c.build(h)
		r := h.finish(t)
		if g := r.Get("median_pending_time"); !same(g, c.root) {
			t.Errorf("%s: median_pending_time = %v, want %v", c.name, g, c.root)
		}
		if g := r.Get("median_subagent_pending_time"); !same(g, c.subagents) {
			t.Errorf("%s: median_subagent_pending_time = %v, want %v", c.name, g, c.subagents)
		}
	}
}

// backlog_growth is the roots arrived less those ended by the last arrival, per hour from
// the first arrival to the last; peak_backlog the most roots open after any instant, the
// ends of an instant counted with its arrivals.
func TestBacklog(t *testing.T) {
	h := newHand(Options{})
	// Arrivals at 0, 0, 10 min, 30 min; ends at 10 min (counted at once: the backlog after
	// 10 min is 2, never 3), 30 min (ended by the last arrival, inclusive) and 40 min; one
	// still open. 4 arrived, 2 ended by 30 min: 2 per half hour, 4 per hour. Peak: 2 after
	// 0, 2 after 10 min, 2 after 30 min.
	h.row(1, 0, 10*minute)
	h.row(2, 0, 30*minute)
	h.row(3, 10*minute, 40*minute)
	h.row(4, 30*minute, -1)
	r := h.finish(t)
	if g := r.Get("backlog_growth"); g != 4 {
		t.Errorf("backlog_growth = %v, want 4", g)
	}
	if g := r.Get("peak_backlog"); g != 2 {
		t.Errorf("peak_backlog = %v, want 2", g)
	}
	// Subagents are not roots: a run of subagents alone has no backlog.
	h = newHand(Options{})
	h.sub(2, 0)
	r = h.finish(t)
	if g := r.Get("backlog_growth"); !math.IsNaN(g) || r.Get("peak_backlog") != 0 || r.Get("started") != 0 {
		t.Errorf("subagents alone: backlog_growth %v, peak %v, started %v; want NaN, 0, 0", g, r.Get("peak_backlog"), r.Get("started"))
	}
}

func TestQuantileContEdges(t *testing.T) {
	x := []int64{10, 20, 30, 40, 50}
	for _, c := range []struct{ p, w float64 }{{0, 10}, {1, 50}, {0.5, 30}, {0.95, 48}, {0.1, 14}, {0.9, 46}} {
		if g := quantileCont(x, c.p); math.Abs(g-c.w) > 1e-9 {
			t.Errorf("quantileCont(%v, %v) = %v, want %v", x, c.p, g, c.w)
		}
	}
}

// An outage of a tool called about three times a minute, every call failing for 30 minutes
// and none outside it, is one incident from its first failed call to the first call after
// its last that succeeded; every failure is inside it. The rule itself is tested in package
// metric/detect; this holds the Sink to feeding it a tool's calls in order and adding up the
// incident's span.
func TestOutageIsOneIncident(t *testing.T) {
	h := newHand(Options{Tables: true})
	call := func(at int64, st record.Status) {
		h.s.Span(&record.Span{SpanID: h.next(), Operation: record.OpExecuteTool, Tool: "t", Start: at, End: at, Status: st,
			FaultID: map[bool]string{true: "outage-t", false: ""}[st == record.StatusError]})
	}
	h.s.Fault(&record.Fault{FaultID: "outage-t", Kind: "outage", Tool: "t", Window: true, Start: 60 * minute, End: 90 * minute})
	for at := int64(0); at < 150*minute; at += 20 * sec {
		st := record.StatusOK
		if at >= 60*minute && at < 90*minute {
			st = record.StatusError
		}
		call(at, st)
	}
	r := h.finish(t)
	if g := r.Get("correlated_failure_share"); g != 1 {
		t.Errorf("correlated_failure_share = %v, want 1", g)
	}
	tb := h.s.Tables("r")
	if len(tb.Incidents) != 1 {
		t.Fatalf("%d incidents, want 1: %+v", len(tb.Incidents), tb.Incidents)
	}
	in := tb.Incidents[0]
	if in.Start != TimeOf(60*minute) || in.End != TimeOf(90*minute) || in.FailedAttempts != 90 || in.Calls != 90 {
		t.Errorf("incident %+v, want [60m, 90m) with 90 failed calls of 90", in)
	}
	if !slices.Equal(in.FaultIDs, []string{"outage-t"}) {
		t.Errorf("fault ids %v", in.FaultIDs)
	}
	var inside int
	for _, m := range tb.ToolMinutes {
		if m.InIncident {
			inside++
		}
	}
	if inside != 30 {
		t.Errorf("%d minutes in the incident, want 30", inside)
	}
}

// A rate limit's refusals, with no fault, are saturation, not an incident.
func TestRefusalsAreSaturation(t *testing.T) {
	h := newHand(Options{Tables: true})
	for i := range int64(600) {
		at := i * 6 * sec
		sp := &record.Span{SpanID: h.next(), Operation: record.OpExecuteTool, Tool: "t", Start: at, End: at, Status: record.StatusOK}
		if at >= 20*minute && at < 30*minute && i%2 == 0 {
			sp.Status = record.StatusError
			sp.Attrs = []record.Attr{{Key: "error", Value: "overloaded"}}
		}
		h.s.Span(sp)
	}
	h.finish(t)
	tb := h.s.Tables("r")
	if len(tb.Incidents) != 0 || len(tb.Saturation) != 1 {
		t.Fatalf("%d incidents, %d saturation spans, want 0 and 1", len(tb.Incidents), len(tb.Saturation))
	}
	if s := tb.Saturation[0]; s.Refused != 50 {
		t.Errorf("saturation %+v, want 50 refusals", s)
	}
}

// A park or throttle becomes a sign of the operation of the keyed span at its instant (the
// last by span id), else of the first one after it, else of the last one before.
func TestMarksFindTheirOperation(t *testing.T) {
	h := newHand(Options{Guards: true})
	keyed := func(step int32, id uint64, at int64) {
		h.s.Span(&record.Span{InvestigationID: 1, SpanID: id, Operation: record.OpExecuteTool, Tool: "t", HasKey: true,
			OpKey: record.OpKey{Investigation: 1, Step: step}, Start: at, End: at, Status: record.StatusOK})
	}
	park := func(at int64, reason string) {
		h.s.Transition(&record.Transition{InvestigationID: 1, At: at, Action: "park", Reason: reason})
	}
	keyed(1, 10, 10*sec)
	keyed(3, 31, 30*sec) // at 30 s, the later span id: a mark at 30 s is step 3's
	keyed(2, 30, 30*sec)
	park(20*sec, "breaker_open")    // the first span after: step 2 (30 s, id 30)
	park(30*sec, "retry_throttled") // the same instant: step 3
	park(50*sec, "breaker_open")    // none after: the last before, step 3
	park(5*sec, "other")            // not a park of a guard: no sign
	for step := int32(1); step <= 3; step++ {
		h.valid(1, int64(step), 100*sec)
	}
	h.row(1, 0, 100*sec)
	r := h.finish(t)
	// Step 2 from 20 s, step 3 from 30 s, both valid at 100 s: 80 s and 70 s; step 1 has none.
	for name, want := range map[string]float64{"median_recovery_time": 70, "p95_recovery_time": 80, "episode_recovery_rate": 1} {
		if g := r.Get(name); g != want {
			t.Errorf("%s = %v, want %v", name, g, want)
		}
	}
}

// Investigation ids need not be small or dense: an id far past the states the Sink made
// room for, one past the dense range, and a negative one all count.
func TestSparseInvestigationIDs(t *testing.T) {
	h := newHand(Options{})
	ids := []int64{1, 5000, maxDense, maxDense + 7, -3}
	for _, id := range ids {
		h.start(id, sec)
		h.row(id, 0, 2*sec)
	}
	r := h.finish(t)
	if g := r.Get("started"); g != float64(len(ids)) {
		t.Errorf("started = %v, want %d", g, len(ids))
	}
	if g := r.Get("completed"); g != float64(len(ids)) {
		t.Errorf("completed = %v, want %d", g, len(ids))
	}
	if g := r.Get("median_pending_time"); g != 1 {
		t.Errorf("median_pending_time = %v, want 1", g)
	}
}

// A transition from nowhere ("") into a state is a start, as one out of pending is.
func TestStartFromNowhere(t *testing.T) {
	h := newHand(Options{})
	h.s.Transition(&record.Transition{InvestigationID: 1, At: 4 * sec, To: "running"})
	h.row(1, sec, 9*sec)
	if g := h.finish(t).Get("median_pending_time"); g != 3 {
		t.Errorf("median_pending_time = %v, want 3", g)
	}
}
