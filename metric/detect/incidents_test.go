package detect

import (
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"
)

const minute = int64(60_000_000)

// poisson draws calls at perMinute on average (exponential gaps) over [from, to), each
// failing with probability fail(at).
func poisson(rng *rand.Rand, from, to int64, perMinute float64, fail func(at int64) float64) []Call {
	var calls []Call
	for at := from + int64(rng.ExpFloat64()/perMinute*float64(minute)); at < to; at += int64(rng.ExpFloat64() / perMinute * float64(minute)) {
		calls = append(calls, NewCall(at, rng.Float64() < fail(at), false))
	}
	return calls
}

// outage is a failure probability of p inside each [from, to) given, base outside.
func outage(base, p float64, windows ...[2]int64) func(int64) float64 {
	return func(at int64) float64 {
		for _, w := range windows {
			if at >= w[0] && at < w[1] {
				return p
			}
		}
		return base
	}
}

// firstAtOrAfter is the index of the first call at or after at (len when none).
func firstAtOrAfter(calls []Call, at int64) int {
	for i, c := range calls {
		if c.At() >= at {
			return i
		}
	}
	return len(calls)
}

func mustIncidents(t *testing.T, calls []Call, opts Options) Result {
	t.Helper()
	r, err := Incidents(calls, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A 30-minute outage of a tool whose calls never fail outside it, at ~3 and ~1 calls (all
// failed) a minute: one incident, from the first call of the outage to the first call after
// it, exactly (nothing fails outside, so the evidence can start nowhere else, and the first
// success after it is where the calls succeed again).
func TestOutageZeroBaseline(t *testing.T) {
	for _, perMinute := range []float64{3, 1} {
		var delay, startOff, endOff float64
		const seeds = 40
		for seed := range uint64(seeds) {
			rng := rand.New(rand.NewPCG(seed, 7))
			from, to := 60*minute, 90*minute
			calls := poisson(rng, 0, 150*minute, perMinute, outage(0, 1, [2]int64{from, to}))
			r := mustIncidents(t, calls, Options{End: 150 * minute})
			if len(r.Incidents) != 1 || len(r.Saturation) != 0 {
				t.Fatalf("%v/min seed %d: incidents %+v saturation %+v, want one incident", perMinute, seed, r.Incidents, r.Saturation)
			}
			in := r.Incidents[0]
			first, after := firstAtOrAfter(calls, from), firstAtOrAfter(calls, to)
			if in.First != first || in.Last != after-1 || in.Start != calls[first].At() || in.End != calls[after].At() {
				t.Fatalf("%v/min seed %d: incident %+v, want calls %d..%d, end at call %d", perMinute, seed, in, first, after-1, after)
			}
			if in.Events != after-first {
				t.Errorf("%v/min seed %d: %d failed calls inside, want %d", perMinute, seed, in.Events, after-first)
			}
			delay += float64(calls[in.Alarm].At()-in.Start) / float64(minute) / seeds
			startOff += float64(in.Start-from) / float64(minute) / seeds
			endOff += float64(in.End-to) / float64(minute) / seeds
		}
		t.Logf("%v calls/min: mean detection delay %.1f min, start %.1f min and end %.1f min after the truth", perMinute, delay, startOff, endOff)
	}
}

// A 20-minute outage seen at 3 to 7 calls a minute, its three middle minutes at 3 or 4
// calls (all failed), on a 2% background of failures: one incident within 2 minutes of the
// truth at either end. The 2% background can start the evidence a few calls early, or end it
// at a background failure a few calls late: right after the outage the walk stands at its
// maximum and a failure within up/|down| ≈ 4 successes of it is a new maximum; 4 calls are
// at most 1.3 minutes here.
func TestOutageSparseMinutes(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 11))
		var calls []Call
		from, to := 50*minute, 70*minute
		for m := range int64(120) {
			n := 3 + rng.Int64N(5)
			if m >= 59 && m < 62 {
				n = 3 + rng.Int64N(2)
			}
			for j := range n {
				at := m*minute + j*minute/n
				fail := rng.Float64() < 0.02 || at >= from && at < to
				calls = append(calls, NewCall(at, fail, false))
			}
		}
		r := mustIncidents(t, calls, Options{End: 120 * minute})
		if len(r.Incidents) != 1 {
			t.Fatalf("seed %d: incidents %+v, want one", seed, r.Incidents)
		}
		in := r.Incidents[0]
		if abs(in.Start-from) > 2*minute || abs(in.End-to) > 2*minute {
			t.Errorf("seed %d: incident [%v, %v) min, want [50, 70) to within 2 minutes", seed,
				float64(in.Start)/float64(minute), float64(in.End)/float64(minute))
		}
	}
}

func abs(x int64) int64 { return max(x, -x) }

// Outages on top of a 10% background of independent failures, at 5 calls a minute: a full
// outage and a brownout failing 70% of calls, 30 minutes each, are one incident each, within
// 3 minutes (15 calls) of the truth: evidence that starts early on background failures falls
// back to 0 within a few calls (each success takes back ln(2)-ish, a failure gives ~1.5).
func TestOutageOnBaseline(t *testing.T) {
	for _, p := range []float64{1, 0.7} {
		var startOff, endOff float64
		const seeds = 40
		for seed := range uint64(seeds) {
			rng := rand.New(rand.NewPCG(seed, 13))
			from, to := 100*minute, 130*minute
			calls := poisson(rng, 0, 240*minute, 5, outage(0.1, p, [2]int64{from, to}))
			r := mustIncidents(t, calls, Options{End: 240 * minute, Reference: from, HasReference: true})
			if len(r.Incidents) != 1 {
				t.Fatalf("p=%v seed %d: incidents %+v, want one", p, seed, r.Incidents)
			}
			in := r.Incidents[0]
			if abs(in.Start-from) > 3*minute || abs(in.End-to) > 3*minute {
				t.Errorf("p=%v seed %d: incident [%.1f, %.1f) min, want [100, 130) to within 3 minutes", p, seed,
					float64(in.Start)/float64(minute), float64(in.End)/float64(minute))
			}
			if math.Abs(r.Baseline-0.1) > 0.03 {
				t.Errorf("p=%v seed %d: baseline %v, want 0.1 (the outage kept out of it)", p, seed, r.Baseline)
			}
			startOff += float64(in.Start-from) / float64(minute) / seeds
			endOff += float64(in.End-to) / float64(minute) / seeds
		}
		t.Logf("p=%v on 10%%: start %+.2f min, end %+.2f min from the truth on average", p, startOff, endOff)
	}
}

// Two outages 100 minutes apart are two incidents, each exactly its own calls.
func TestTwoOutages(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 17))
		ws := [][2]int64{{30 * minute, 50 * minute}, {150 * minute, 170 * minute}}
		calls := poisson(rng, 0, 240*minute, 3, outage(0, 1, ws...))
		r := mustIncidents(t, calls, Options{End: 240 * minute})
		if len(r.Incidents) != 2 {
			t.Fatalf("seed %d: incidents %+v, want two", seed, r.Incidents)
		}
		for k, w := range ws {
			first, after := firstAtOrAfter(calls, w[0]), firstAtOrAfter(calls, w[1])
			if in := r.Incidents[k]; in.First != first || in.Last != after-1 {
				t.Errorf("seed %d: incident %d %+v, want calls %d..%d", seed, k, in, first, after-1)
			}
		}
	}
}

// Silence inside an outage (a breaker open: no call for 20 minutes) does not end it: one
// incident from the first failed call to the first success after it.
func TestSilenceDoesNotEnd(t *testing.T) {
	var calls []Call
	for m := range int64(100) {
		switch {
		case m >= 40 && m < 45:
			for j := range int64(3) {
				calls = append(calls, NewCall(m*minute+j*minute/3, true, false))
			}
		case m >= 45 && m < 65: // breaker open
		default:
			calls = append(calls, NewCall(m*minute, false, false))
		}
	}
	r := mustIncidents(t, calls, Options{End: 100 * minute, Reference: 40 * minute, HasReference: true})
	if len(r.Incidents) != 1 || r.Incidents[0].Start != 40*minute || r.Incidents[0].End != 65*minute {
		t.Fatalf("incidents %+v, want one over [40, 65) minutes", r.Incidents)
	}
}

// Capacity refusals are no failures: a 10-minute burst of refusals (80% of the calls) is no
// incident and one saturation span, from its first refusal to the first call after its last
// (nothing is refused outside it); an outage with 30% of its calls refused is still one
// incident, from its first tested call to the first one after it.
func TestCapacityIsSaturation(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 19))
		from, to := 60*minute, 70*minute
		calls := poisson(rng, 0, 120*minute, 5, outage(0, 0))
		for i := range calls {
			if calls[i].At() >= from && calls[i].At() < to && rng.Float64() < 0.8 {
				calls[i] = NewCall(calls[i].At(), true, true)
			}
		}
		r := mustIncidents(t, calls, Options{End: 120 * minute})
		if len(r.Incidents) != 0 || len(r.Saturation) != 1 {
			t.Fatalf("seed %d: incidents %+v saturation %+v, want one saturation span only", seed, r.Incidents, r.Saturation)
		}
		first, last := -1, -1
		for i, c := range calls {
			if c.Capacity() {
				last = max(last, i)
				if first < 0 {
					first = i
				}
			}
		}
		if s := r.Saturation[0]; s.First != first || s.Last != last || s.End != calls[last+1].At() {
			t.Errorf("seed %d: saturation %+v, want calls %d..%d", seed, s, first, last)
		}

		calls = poisson(rng, 0, 120*minute, 5, outage(0, 1, [2]int64{from, to}))
		for i := range calls {
			if calls[i].At() >= from && calls[i].At() < to && rng.Float64() < 0.3 {
				calls[i] = NewCall(calls[i].At(), calls[i].Failed(), true)
			}
		}
		r = mustIncidents(t, calls, Options{End: 120 * minute})
		first, last = -1, -1
		for i, c := range calls {
			if c.At() >= from && c.At() < to && !c.Capacity() {
				last = i
				if first < 0 {
					first = i
				}
			}
		}
		if len(r.Incidents) != 1 || r.Incidents[0].First != first || r.Incidents[0].Last != last {
			t.Errorf("seed %d: outage with refusals: incidents %+v, want one over calls %d..%d", seed, r.Incidents, first, last)
		}
	}
}

// Independent failures raise no incident beyond the rate the threshold is set for.
//
// Threshold sets the false-alarm rate at most α = DefaultAlpha = 0.01 per tool and run. The
// test draws R = 1,800 runs (failure ratios 0.05, 0.1, 0.3 × 300, 3,000 and 30,000 calls
// at 1, 10 and 100 calls a minute, 200 seeds each); the runs are independent, so the runs
// with a false incident are at most Binomial(R, α) (stochastically), and the test allows the
// largest k with P(Binomial(R, α) > k) <= 10^-6 (computed below, k = 41): a correct rule
// fails it with probability below 10^-6, and a rule whose true rate is 0.04 (mean 72)
// passes it with probability below 10^-4, so the test is not vacuous. The same runs with
// the threshold cut to 3 nats must alarm (the runs can alarm at all).
func TestIndependentFailuresFalseAlarms(t *testing.T) {
	const runs, alpha = 1800, DefaultAlpha
	falseRuns, weakRuns, total := 0, 0, 0
	for _, p := range []float64{0.05, 0.1, 0.3} {
		for k, n := range []int{300, 3000, 30000} {
			perMinute := []float64{1, 10, 100}[k]
			for seed := range uint64(runs / 9) {
				rng := rand.New(rand.NewPCG(seed, uint64(n)+uint64(100*p)))
				calls := make([]Call, n)
				for i := range calls {
					calls[i] = NewCall(int64(float64(i)/perMinute*float64(minute)), rng.Float64() < p, false)
				}
				r := mustIncidents(t, calls, Options{End: calls[n-1].At()})
				total++
				if len(r.Incidents) > 0 {
					falseRuns++
				}
				if k == 0 {
					w, _ := newWalk(int(p*float64(n)), n, 3, Options{MinFailed: 1, Alpha: alpha})
					if len(scan(calls, failures, w, calls[n-1].At(), nil)) > 0 {
						weakRuns++
					}
				}
			}
		}
	}
	allowed := binomialQuantile(total, alpha, 1e-6)
	t.Logf("%d of %d runs of independent failures with a false incident (allowed %d); threshold 3 nats: %d of %d",
		falseRuns, total, allowed, weakRuns, total/3)
	if falseRuns > allowed {
		t.Errorf("%d runs of %d with a false incident, more than the %d a rate of %v allows", falseRuns, total, allowed, alpha)
	}
	if weakRuns == 0 {
		t.Errorf("no run alarms even at a 3-nat threshold: the runs test nothing")
	}
}

// binomialQuantile is the smallest k with P(Binomial(n, p) > k) <= tail.
func binomialQuantile(n int, p, tail float64) int {
	cdf := 0.0
	for k := 0; k <= n; k++ {
		lg, _ := math.Lgamma(float64(n + 1))
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		cdf += math.Exp(lg - lk - lnk + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
		if 1-cdf <= tail {
			return k
		}
	}
	return n
}

// scaled multiplies every instant of calls and opts by num/den (den divides every instant).
func scaled(calls []Call, opts Options, num, den int64) ([]Call, Options) {
	out := make([]Call, len(calls))
	for i, c := range calls {
		out[i] = NewCall(c.At()*num/den, c.Failed(), c.Capacity())
	}
	opts.End = opts.End * num / den
	opts.Reference = opts.Reference * num / den
	return out, opts
}

// Multiplying every instant by k = 2, 3.5 and 60 multiplies every start and end by k,
// exactly, and changes nothing else.
func TestTimeScaling(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		calls, opts := drawCalls(t)
		base, err := Incidents(calls, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range [][2]int64{{2, 1}, {7, 2}, {60, 1}} {
			sc, so := scaled(calls, opts, k[0], k[1])
			got, err := Incidents(sc, so)
			if err != nil {
				t.Fatal(err)
			}
			for _, pair := range [][2][]Span{{base.Incidents, got.Incidents}, {base.Saturation, got.Saturation}} {
				want, have := pair[0], pair[1]
				if len(want) != len(have) {
					t.Fatalf("×%d/%d: %d spans, want %d", k[0], k[1], len(have), len(want))
				}
				for i, w := range want {
					w.Start, w.End = w.Start*k[0]/k[1], w.End*k[0]/k[1]
					if have[i] != w {
						t.Fatalf("×%d/%d: span %+v, want %+v", k[0], k[1], have[i], w)
					}
				}
			}
		}
	})
}

// The spans of random inputs are ordered and disjoint, each holds at least MinFailed
// events, starts at its first event and ends at a call's instant (or the run's end), with
// First <= Alarm <= Last and the counts of calls[First..Last].
func TestSpanProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		calls, opts := drawCalls(t)
		r, err := Incidents(calls, opts)
		if err != nil {
			t.Fatal(err)
		}
		minEvents := max(opts.MinFailed, 1)
		if opts.MinFailed == 0 {
			minEvents = DefaultMinFailed
		}
		for _, c := range []struct {
			m     mode
			spans []Span
		}{{failures, r.Incidents}, {refusals, r.Saturation}} {
			for i, s := range c.spans {
				if i > 0 && (s.First <= c.spans[i-1].Last || s.Start < c.spans[i-1].End) {
					t.Fatalf("span %+v overlaps or precedes %+v", s, c.spans[i-1])
				}
				if !(s.First <= s.Alarm && s.Alarm <= s.Last) || s.Start != calls[s.First].At() || s.Start > s.End {
					t.Fatalf("span %+v: bad bounds", s)
				}
				if c.m.class(calls[s.First]) != event || c.m.class(calls[s.Last]) != event {
					t.Fatalf("span %+v does not start and end at events", s)
				}
				endsAtCall := s.End == opts.End
				for _, x := range calls[s.Last+1:] {
					if c.m.class(x) != skip {
						endsAtCall = x.At() == s.End
						break
					}
				}
				if !endsAtCall {
					t.Fatalf("span %+v does not end at the next tested call", s)
				}
				events, tested := 0, 0
				for _, x := range calls[s.First : s.Last+1] {
					switch c.m.class(x) {
					case event:
						events++
						tested++
					case quiet:
						tested++
					}
				}
				if events != s.Events || tested != s.Tested || events < minEvents {
					t.Fatalf("span %+v: %d events of %d tested, at least %d wanted", s, events, tested, minEvents)
				}
			}
		}
	})
}

// Bad input is an error naming it.
func TestBadInput(t *testing.T) {
	for name, c := range map[string]struct {
		calls []Call
		opts  Options
	}{
		"unsorted":   {[]Call{NewCall(5, false, false), NewCall(4, false, false)}, Options{End: 9}},
		"end early":  {[]Call{NewCall(5, false, false)}, Options{End: 4}},
		"alpha":      {nil, Options{Alpha: 1}},
		"min failed": {nil, Options{MinFailed: -1}},
	} {
		if _, err := Incidents(c.calls, c.opts); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func BenchmarkIncidents(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	calls := poisson(rng, 0, 10_000*minute, 100, outage(0.05, 1, [2]int64{2000 * minute, 2030 * minute}))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Incidents(calls, Options{End: 10_000 * minute}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(calls))*float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// A brownout that fails a quarter of the calls for an hour, on a 1% baseline at 30 calls a
// minute, is one incident: the walk, balanced near that rate, rises and falls around the
// threshold, and its pieces, separated by fewer calls than they hold, are merged. It covers
// the hour to within 5 minutes at either end. (A quarter is about the rate p* at which the
// walk against p0 ≈ 1% and p1 = (1+p0)/2 is balanced: ln((1−p1)/(1−p0)) / ln(...) ≈ 0.14,
// so the rise is slow and uneven; 20 seeds.)
func TestBrownoutIsOneIncident(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 23))
		var calls []Call
		for at := int64(0); at < 240*minute; at += 2_000_000 { // every 2 s
			p := 0.01
			if at >= 60*minute && at < 120*minute {
				p = 0.25
			}
			calls = append(calls, NewCall(at, rng.Float64() < p, false))
		}
		r := mustIncidents(t, calls, Options{End: 240 * minute})
		var inside []Span
		for _, in := range r.Incidents {
			if in.End > 55*minute && in.Start < 125*minute {
				inside = append(inside, in)
			}
		}
		if len(inside) != 1 {
			t.Errorf("seed %d: %d incidents in the brownout, want 1: %+v", seed, len(inside), inside)
			continue
		}
		if in := inside[0]; in.Start > 65*minute || in.Start < 55*minute || in.End < 115*minute || in.End > 125*minute {
			t.Errorf("seed %d: incident [%d, %d) min, want about [60, 120)", seed, in.Start/minute, in.End/minute)
		}
	}
}

// A call keeps its time and both flags, at either sign and at the ends of its range, and
// calls of one sign order as integers by when they were sent.
func TestCallPacking(t *testing.T) {
	const limit = 1<<61 - 1
	for _, at := range []int64{0, 1, -1, 59_999_999, limit, -limit - 1} {
		for _, f := range []bool{false, true} {
			for _, c := range []bool{false, true} {
				call := NewCall(at, f, c)
				if call.At() != at || call.Failed() != f || call.Capacity() != c {
					t.Errorf("NewCall(%d, %v, %v) reads back as (%d, %v, %v)", at, f, c, call.At(), call.Failed(), call.Capacity())
				}
			}
		}
	}
	if !(NewCall(5, true, true) < NewCall(6, false, false) && NewCall(-6, true, true) < NewCall(-5, false, false)) {
		t.Error("calls of one sign do not order by when they were sent")
	}
}
