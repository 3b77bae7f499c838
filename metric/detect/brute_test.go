package detect

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// bruteIncidents recomputes Incidents from the definitions, independently of the fast scan:
// the walk X is recomputed as prefix sums from each restart, its running minimum and
// maximum by scanning, every span's counts by filtering. It is quadratic: tests only.
func bruteIncidents(calls []Call, opts Options) Result {
	if opts.MinFailed == 0 {
		opts.MinFailed = DefaultMinFailed
	}
	if opts.Alpha == 0 {
		opts.Alpha = DefaultAlpha
	}
	var r Result
	r.Incidents, r.Baseline, r.Threshold = bruteTwoPasses(calls, failures, opts)
	r.Saturation, r.RefusalBaseline, _ = bruteTwoPasses(calls, refusals, opts)
	return r
}

func bruteTwoPasses(calls []Call, m mode, opts Options) ([]Span, float64, float64) {
	var tested, events, refTested, refEvents []int
	for i := range calls {
		c := m.class(calls[i])
		if c == skip {
			continue
		}
		tested = append(tested, i)
		if c == event {
			events = append(events, i)
		}
		if opts.HasReference && calls[i].At() < opts.Reference {
			refTested = append(refTested, i)
			if c == event {
				refEvents = append(refEvents, i)
			}
		}
	}
	h := math.Log(4 * float64(max(len(tested), 1)) / opts.Alpha)
	if len(tested) == 0 {
		return nil, math.NaN(), h
	}
	if len(events) < opts.MinFailed {
		return nil, float64(len(events)) / float64(len(tested)), h
	}
	f, n := len(events), len(tested)
	if len(refTested) > 0 {
		f, n = len(refEvents), len(refTested)
	} else {
		// The calmer half: blocks of max(10, n/10) tested calls in order; the blocks with
		// the lowest event ratio, one at a time, while they hold fewer than half the calls.
		size := max(10, n/10)
		type block struct{ f, n int }
		var blocks []block
		for start := 0; start < len(tested); start += size {
			b := block{}
			for _, i := range tested[start:min(start+size, len(tested))] {
				b.n++
				if m.class(calls[i]) == event {
					b.f++
				}
			}
			blocks = append(blocks, b)
		}
		used := make([]bool, len(blocks))
		f, n = 0, 0
		for 2*n < len(tested) {
			best := -1
			for j, b := range blocks { // the first of the lowest ratio not used yet
				if !used[j] && (best < 0 || float64(b.f)/float64(b.n) < float64(blocks[best].f)/float64(blocks[best].n)) {
					best = j
				}
			}
			used[best] = true
			f, n = f+blocks[best].f, n+blocks[best].n
		}
	}
	var pass1 []Span
	if w, ok := newWalk(f, n, h, opts); ok {
		pass1 = bruteScan(calls, m, w, opts.End)
	}
	inside := func(i int) bool {
		return slices.ContainsFunc(pass1, func(s Span) bool { return s.First <= i && i <= s.Last })
	}
	fo, no := 0, 0
	for _, i := range tested {
		if !inside(i) {
			no++
			if m.class(calls[i]) == event {
				fo++
			}
		}
	}
	if no == 0 {
		fo, no = f, n
	}
	var spans []Span
	if w, ok := newWalk(fo, no, h, opts); ok {
		spans = bruteScan(calls, m, w, opts.End)
	}
	// Spans whose gap (tested calls strictly between them) holds fewer than half the calls of
	// the larger (the first with all merged into it) are one.
	for j := 0; j+1 < len(spans); {
		a, b := spans[j], spans[j+1]
		gap, gapEvents := 0, 0
		for _, i := range tested {
			if i > a.Last && i < b.First {
				gap++
				if m.class(calls[i]) == event {
					gapEvents++
				}
			}
		}
		if 2*gap < max(a.Tested, b.Tested) {
			spans[j] = Span{Start: a.Start, End: b.End, First: a.First, Last: b.Last, Alarm: a.Alarm,
				Events: a.Events + gapEvents + b.Events, Tested: a.Tested + gap + b.Tested}
			spans = append(spans[:j+1], spans[j+2:]...)
			continue
		}
		j++
	}
	return spans, float64(fo) / float64(no), h
}

// bruteScan applies the definition: from a restart at tested call p, X_t is the sum of the
// scores of tested calls p..t (X_{p-1} = 0); the alarm is the first t at which
// X_t − min_{p-1<=s<=t} X_s >= h with at least minEvents events after the last argmin s; the
// span's first call is the one after s, its last the last argmax of X over [alarm, t'] where
// t' is the first call after the alarm with max_{alarm<=s<=t'} X_s − X_t' >= h (or the last
// call); the next restart is the tested call after the span's last.
func bruteScan(calls []Call, m mode, w walk, end int64) []Span {
	var tested []int
	for i := range calls {
		if m.class(calls[i]) != skip {
			tested = append(tested, i)
		}
	}
	score := func(j int) int64 {
		if m.class(calls[tested[j]]) == event {
			return w.up
		}
		return w.down
	}
	var spans []Span
	for p := 0; p < len(tested); {
		// x[j-p+1] = X_j for j in [p-1, len).
		x := []int64{0}
		for j := p; j < len(tested); j++ {
			x = append(x, x[len(x)-1]+score(j))
		}
		alarm, s := -1, -1
		for t := p; t < len(tested) && alarm < 0; t++ {
			s = p - 1
			for u := p - 1; u <= t; u++ {
				if x[u-p+1] <= x[s-p+1] {
					s = u
				}
			}
			n := 0
			for u := s + 1; u <= t; u++ {
				if m.class(calls[tested[u]]) == event {
					n++
				}
			}
			if x[t-p+1]-x[s-p+1] >= w.h && n >= w.minEvents {
				alarm = t
			}
		}
		if alarm < 0 {
			break
		}
		last := alarm
		for t := alarm; t < len(tested); t++ {
			mx := alarm
			for u := alarm; u <= t; u++ {
				if x[u-p+1] >= x[mx-p+1] {
					mx = u
				}
			}
			last = mx
			if x[mx-p+1]-x[t-p+1] >= w.h {
				break
			}
		}
		sp := Span{Start: calls[tested[s+1]].At(), End: end, First: tested[s+1], Last: tested[last], Alarm: tested[alarm]}
		for u := s + 1; u <= last; u++ {
			sp.Tested++
			if m.class(calls[tested[u]]) == event {
				sp.Events++
			}
		}
		if last+1 < len(tested) {
			sp.End = calls[tested[last+1]].At()
		}
		spans = append(spans, sp)
		p = last + 1
	}
	return spans
}

// drawCalls draws a tool's calls for property tests: stretches of random length, each with
// its own failure and refusal ratio (from healthy to down), at random gaps including ties.
func drawCalls(t *rapid.T) ([]Call, Options) {
	n := rapid.IntRange(0, 300).Draw(t, "calls")
	calls := make([]Call, 0, n)
	var at int64
	for len(calls) < n {
		stretch := rapid.IntRange(1, 80).Draw(t, "stretch")
		pFail := rapid.SampledFrom([]float64{0, 0, 0.05, 0.3, 0.8, 1}).Draw(t, "pFail")
		pCap := rapid.SampledFrom([]float64{0, 0, 0, 0.5, 1}).Draw(t, "pCap")
		seed := rapid.Uint64().Draw(t, "seed")
		rng := rand.New(rand.NewPCG(seed, 1))
		for range min(stretch, n-len(calls)) {
			at += 2 * rng.Int64N(4) // even, so that ×3.5 stays exact; 0 makes ties
			calls = append(calls, NewCall(at, rng.Float64() < pFail, rng.Float64() < pCap))
		}
	}
	opts := Options{End: at + 2*rapid.Int64Range(0, 10).Draw(t, "tail")}
	if rapid.Bool().Draw(t, "reference") {
		opts.HasReference, opts.Reference = true, 2*rapid.Int64Range(0, at/2+1).Draw(t, "ref")
	}
	opts.MinFailed = rapid.SampledFrom([]int{0, 1, 3, 5}).Draw(t, "minFailed")
	opts.Alpha = rapid.SampledFrom([]float64{0, 0.01, 0.3}).Draw(t, "alpha")
	return calls, opts
}

// TestMatchesBruteForce holds the O(n) scan equal, span for span and call for call, to the
// brute force on random inputs.
func TestMatchesBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		calls, opts := drawCalls(t)
		got, err := Incidents(calls, opts)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteIncidents(calls, opts)
		if !slices.Equal(got.Incidents, want.Incidents) || !slices.Equal(got.Saturation, want.Saturation) {
			t.Fatalf("fast\n  %+v\n  %+v\nbrute\n  %+v\n  %+v", got.Incidents, got.Saturation, want.Incidents, want.Saturation)
		}
		if !same(got.Baseline, want.Baseline) || !same(got.RefusalBaseline, want.RefusalBaseline) || got.Threshold != want.Threshold {
			t.Fatalf("baselines %v %v threshold %v, brute %v %v %v", got.Baseline, got.RefusalBaseline, got.Threshold,
				want.Baseline, want.RefusalBaseline, want.Threshold)
		}
	})
}

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
