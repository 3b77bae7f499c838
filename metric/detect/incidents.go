package detect

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Call is one call sent to a tool (the model provider included), in 8 bytes: when it was
// sent, in microseconds from any origin (within ±2⁶¹), and two flags. A run's calls are held
// all at once for the rule, millions of them for a large run, hence the packing; ordered
// as integers, calls are ordered by when they were sent (for times of one sign).
type Call uint64

// NewCall is the call sent at at. failed: it failed (an error, a timeout, a lost reply).
// capacity: it was refused by a rate limit, a queue limit or load shedding. A refusal says
// the tool was full, not broken: it is evidence of saturation, never of an incident,
// whether or not failed is set.
func NewCall(at int64, failed, capacity bool) Call {
	c := Call(uint64(at) << 2)
	if failed {
		c |= 2
	}
	if capacity {
		c |= 1
	}
	return c
}

// At is when the call was sent.
func (c Call) At() int64 { return int64(c) >> 2 }

// Failed reports whether the call failed.
func (c Call) Failed() bool { return c&2 != 0 }

// Capacity reports whether the call was refused for want of capacity.
func (c Call) Capacity() bool { return c&1 != 0 }

// Options are the run-wide inputs of Incidents. The zero value of every field but End is
// a default.
type Options struct {
	// End is the run's end (same clock as Call.At, no earlier than the last call): a span
	// still open at the last call ends here.
	End int64
	// Reference, when HasReference: the first pass estimates the baseline from the calls
	// sent before it (the start of the run's first fault window), when there are any, rather
	// than from every call.
	Reference    int64
	HasReference bool
	// MinFailed is the fewest failed calls (refusals for saturation) a span holds; 0 means
	// DefaultMinFailed. It keeps a baseline of 0 from making an incident of a few strays.
	MinFailed int
	// Alpha is the false-alarm rate per tool and run the threshold is set for (see
	// Threshold); 0 means DefaultAlpha.
	Alpha float64
}

// Defaults of Options.
const (
	DefaultMinFailed = 5
	DefaultAlpha     = 0.01
)

// Span is an incident (failed calls far above the tool's baseline) or a saturation span
// (capacity refusals far above it) of one tool.
type Span struct {
	// Start is the instant of calls[First]; End (exclusive) the instant of the first tested
	// call after calls[Last] (for an incident: the first call that did not fail, capacity
	// refusals aside), or Options.End when none came. Silence does not end a span.
	Start, End int64
	// First and Last index the span's first and last failed call (refusal) in calls; Alarm
	// the call at which the evidence reached the threshold (First <= Alarm <= Last): the
	// detection delay is calls[Alarm].At() − Start.
	First, Last, Alarm int
	// Events is the failed calls (refusals) in calls[First..Last], Tested the calls tested
	// there (for an incident every call but a capacity refusal; for saturation every call).
	Events, Tested int
}

// Result is what Incidents finds in one tool's calls.
type Result struct {
	Incidents  []Span // in order, disjoint
	Saturation []Span // in order, disjoint
	// Baseline is the tool's failure ratio (over calls that were not refused) outside the
	// first pass's incidents, the p0 the final pass was tested against before its upper
	// bound; RefusalBaseline the same for refusals over every call. NaN when nothing was
	// tested.
	Baseline, RefusalBaseline float64
	// Threshold is h, in nats, for the failures' test (Threshold of the calls not refused).
	Threshold float64
}

// Threshold is the evidence h, in nats, a rise of the walk must reach for a false-alarm rate
// alpha per tool and run of n tested calls. Under the baseline (each call failing
// independently with probability at most p0), the likelihood ratio of a rise started at any
// one call is a nonnegative supermartingale with mean at most 1, so by Ville's inequality it
// ever reaches e^h with probability at most e^−h; a run holds at most n rises, so a false
// alarm comes with probability at most n·e^−h (Lorden: the CUSUM's ARL0 >= e^h). A false
// incident needs one of four things: the first pass's baseline estimate below the truth, a
// false alarm of the first pass, the same two of the second; by the union bound each gets
// alpha/4: h = ln(4n/alpha), and the baseline tested is the upper alpha/4 confidence bound
// of its estimate (upper). (The bound treats the estimated baseline as given; the tests
// measure the rate with it estimated.)
func Threshold(n int, alpha float64) float64 {
	return math.Log(4 * float64(max(n, 1)) / alpha)
}

// Incidents finds the incidents and the saturation spans of one tool in calls, sorted by
// At. It runs in O(len(calls)) and allocates only the spans it returns.
func Incidents(calls []Call, opts Options) (Result, error) {
	if opts.MinFailed == 0 {
		opts.MinFailed = DefaultMinFailed
	}
	if opts.Alpha == 0 {
		opts.Alpha = DefaultAlpha
	}
	switch {
	case opts.MinFailed < 1:
		return Result{}, fmt.Errorf("detect: MinFailed %d: want at least 1", opts.MinFailed)
	case !(opts.Alpha > 0 && opts.Alpha < 1):
		return Result{}, fmt.Errorf("detect: Alpha %v: want a rate in (0, 1)", opts.Alpha)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i].At() < calls[i-1].At() {
			return Result{}, fmt.Errorf("detect: call %d at %d comes before call %d at %d: calls must be sorted by time",
				i, calls[i].At(), i-1, calls[i-1].At())
		}
	}
	if n := len(calls); n > 0 && opts.End < calls[n-1].At() {
		return Result{}, fmt.Errorf("detect: End %d is before the last call at %d", opts.End, calls[n-1].At())
	}
	var r Result
	r.Incidents, r.Baseline, r.Threshold = twoPasses(calls, failures, opts)
	r.Saturation, r.RefusalBaseline, _ = twoPasses(calls, refusals, opts)
	return r, nil
}

// mode says what a call is to one test: an event, a tested call without the event, or not
// tested at all.
type mode uint8

const (
	failures mode = iota // events: failed calls; capacity refusals are not tested
	refusals             // events: capacity refusals; every call is tested
)

const (
	skip uint8 = iota
	event
	quiet
)

func (m mode) class(c Call) uint8 {
	switch {
	case m == refusals && c.Capacity(), m == failures && c.Failed() && !c.Capacity():
		return event
	case m == failures && c.Capacity():
		return skip
	}
	return quiet
}

// twoPasses runs the test twice: against a first estimate of the baseline (the calls before
// the reference, else all calls), then against the ratio outside the first pass's spans, so
// that a disruption does not raise the bar it is tested against. It returns the final
// spans, the baseline of the final pass and the threshold.
func twoPasses(calls []Call, m mode, opts Options) ([]Span, float64, float64) {
	var n, f, nRef, fRef int
	for i := range calls {
		c := m.class(calls[i])
		if c == skip {
			continue
		}
		n++
		before := opts.HasReference && calls[i].At() < opts.Reference
		if before {
			nRef++
		}
		if c == event {
			f++
			if before {
				fRef++
			}
		}
	}
	h := Threshold(n, opts.Alpha)
	if n == 0 {
		return nil, math.NaN(), h
	}
	if f < opts.MinFailed {
		return nil, float64(f) / float64(n), h
	}
	fb, nb := f, n
	if nRef > 0 {
		fb, nb = fRef, nRef
	} else {
		fb, nb = calmHalf(calls, m, n)
	}
	var spans []Span
	if w, ok := newWalk(fb, nb, h, opts); ok {
		spans = scan(calls, m, w, opts.End, spans)
	}
	fo, no := f, n
	for _, s := range spans {
		fo, no = fo-s.Events, no-s.Tested
	}
	if no == 0 {
		fo, no = fb, nb
	}
	spans = spans[:0]
	if w, ok := newWalk(fo, no, h, opts); ok {
		spans = merge(calls, m, scan(calls, m, w, opts.End, spans))
	}
	if len(spans) == 0 {
		spans = nil
	}
	return spans, float64(fo) / float64(no), h
}

// calmHalf is the first pass's baseline without a reference: the events and tested calls of
// the calmer half of the tool's calls. The tested calls are cut, in order, into blocks of a
// tenth of them (at least 10 each); the blocks are taken from the least eventful up until
// they hold half the calls. An outage that takes most of a tool's calls (a trace of a few
// hours around one) would raise an estimate over all the calls to where the outage itself
// is tested against itself and never stands out; the calmer half is the tool's ordinary
// ratio as long as a disruption takes less than half of its time. It is a screen only: the
// second pass's baseline is the ratio outside what it finds.
func calmHalf(calls []Call, m mode, n int) (int, int) {
	size := max(10, n/10)
	type block struct{ f, n int }
	var blocks []block
	cur := block{}
	for i := range calls {
		c := m.class(calls[i])
		if c == skip {
			continue
		}
		cur.n++
		if c == event {
			cur.f++
		}
		if cur.n == size {
			blocks = append(blocks, cur)
			cur = block{}
		}
	}
	if cur.n > 0 {
		blocks = append(blocks, cur)
	}
	// least eventful first: f_i/n_i ascending, compared exactly as f_i·n_j < f_j·n_i.
	slices.SortStableFunc(blocks, func(a, b block) int { return cmp.Compare(a.f*b.n, b.f*a.n) })
	var f, t int
	for _, b := range blocks {
		if 2*t >= n {
			break
		}
		f, t = f+b.f, t+b.n
	}
	return f, t
}

// unit is the resolution of the walk's scores: 2^-32 nats. Scores are integers so that
// sums are exact and independent of the order of additions (the brute force in the tests
// finds the same spans to the call).
const unit = 1 << 32

// walk is the score of one call: up for an event, down (< 0) for a tested call without one,
// the log-likelihood ratio of the alternative p1 = (1+p0)/2 against the baseline p0, and
// the threshold h, all in units.
type walk struct {
	up, down, h int64
	minEvents   int
}

// newWalk returns the walk for a baseline of f events in n tested calls, tested at h nats;
// ok false when the baseline leaves nothing to detect (every call an event).
//
// p0 is the upper confidence bound of f/n (upper), so that an estimate below the truth
// raises no alarm. p1 = (1+p0)/2, "half the calls that used to succeed now fail": the walk
// rises, on average, whenever calls fail at more than p* = −down/(up−down), between p0 and
// p1. Scores are rounded toward less evidence (down), so the bound of Threshold holds.
func newWalk(f, n int, h float64, opts Options) (walk, bool) {
	p0 := upper(f, n, opts.Alpha/4)
	if p0 >= 1 {
		return walk{}, false
	}
	p1 := (1 + p0) / 2
	a := math.Log(p1 / p0)
	b := math.Log1p(-p1) - math.Log1p(-p0)
	return walk{
		up:        int64(math.Floor(a * unit)),
		down:      int64(math.Floor(b * unit)),
		h:         int64(math.Ceil(h * unit)),
		minEvents: opts.MinFailed,
	}, true
}

// upper is the Chernoff upper confidence bound of a ratio seen as f of n: the largest q >= f/n
// with n·KL(f/n ‖ q) <= ln(1/delta). P(X/n <= x) <= exp(−n·KL(x ‖ p)) for X ~ Binomial(n, p)
// and x < p, so upper(X, n) < p with probability at most delta. With f = 0 it is
// 1 − delta^(1/n).
func upper(f, n int, delta float64) float64 {
	if f >= n {
		return 1
	}
	p := float64(f) / float64(n)
	target := math.Log(1/delta) / float64(n)
	lo, hi := p, 1.0
	for range 64 {
		mid := (lo + hi) / 2
		if kl(p, mid) > target {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// kl is the Bernoulli relative entropy KL(p ‖ q).
func kl(p, q float64) float64 {
	var v float64
	if p > 0 {
		v += p * math.Log(p/q)
	}
	if p < 1 {
		v += (1 - p) * math.Log((1-p)/(1-q))
	}
	return v
}

// scan appends the spans of one pass to out. The walk's rise s (its value above its running
// minimum) starts afresh at an event whenever it stood at 0; a span is found at the call
// where s >= h with at least minEvents events in the rise, and the scan resumes after it
// (follow).
func scan(calls []Call, m mode, w walk, end int64, out []Span) []Span {
	var s int64
	events, first := 0, 0
	for i := 0; i < len(calls); i++ {
		switch m.class(calls[i]) {
		case skip:
			continue
		case event:
			if s == 0 {
				first, events = i, 0
			}
			s += w.up
			events++
		default:
			s = max(s+w.down, 0)
		}
		if s >= w.h && events >= w.minEvents {
			sp := follow(calls, m, w, end, first, i)
			out = append(out, sp.Span)
			// Resume at the first tested call after the span (its End), walk reset.
			i, s, events = sp.next-1, 0, 0
		}
	}
	return out
}

// merge joins consecutive spans whose gap (the tested calls between the one's last event and
// the other's first) holds fewer than half the calls of the larger one (the first being all
// that was merged into it so far): a disruption that fails calls at about the rate the walk
// is balanced at (a brownout failing a quarter of the calls) rises and falls around the
// threshold, and its pieces, close in calls, are one disruption; two outages apart by as
// long as the longer lasted stay two. A gap
// measured in calls, not time, keeps the rule free of any time scale; silence between two
// pieces is no gap at all, as it ends no span.
func merge(calls []Call, m mode, spans []Span) []Span {
	if len(spans) < 2 {
		return spans
	}
	out := spans[:1]
	for _, b := range spans[1:] {
		a := &out[len(out)-1]
		var gap, gapEvents int
		for i := a.Last + 1; i < b.First; i++ {
			switch m.class(calls[i]) {
			case event:
				gap++
				gapEvents++
			case quiet:
				gap++
			}
		}
		if 2*gap < max(a.Tested, b.Tested) {
			a.End, a.Last = b.End, b.Last
			a.Events += gapEvents + b.Events
			a.Tested += gap + b.Tested
			continue
		}
		out = append(out, b)
	}
	return out
}

// found is a Span and the index of the first tested call after it (len(calls) if none).
type found struct {
	Span
	next int
}

// follow extends the span alarmed at call a, whose rise started at call first, to the last
// event at the walk's running maximum before the walk fell h below it (the drawdown d >= h),
// or before the calls ran out.
func follow(calls []Call, m mode, w walk, end int64, first, a int) found {
	last := a
	var d int64
loop:
	for i := a + 1; i < len(calls); i++ {
		switch m.class(calls[i]) {
		case event:
			if d -= w.up; d <= 0 {
				d, last = 0, i
			}
		case quiet:
			if d -= w.down; d >= w.h {
				break loop
			}
		}
	}
	sp := found{Span: Span{Start: calls[first].At(), End: end, First: first, Last: last, Alarm: a}, next: len(calls)}
	for i := first; i <= last; i++ {
		switch m.class(calls[i]) {
		case event:
			sp.Events++
			sp.Tested++
		case quiet:
			sp.Tested++
		}
	}
	for i := last + 1; i < len(calls); i++ {
		if m.class(calls[i]) != skip {
			sp.End, sp.next = calls[i].At(), i
			break
		}
	}
	return sp
}
