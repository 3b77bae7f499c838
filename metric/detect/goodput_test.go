package detect

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// results draws valid results at rate(at) per minute (a Poisson process, by thinning at 20
// a minute) over [0, to).
func results(rng *rand.Rand, to int64, rate func(at int64) float64) []int64 {
	var out []int64
	for at := int64(0); ; {
		at += 2 * int64(rng.ExpFloat64()/20*float64(minute)/2) // even, so that ×3.5 stays exact
		if at >= to {
			return out
		}
		if rng.Float64() < rate(at)/20 {
			out = append(out, at)
		}
	}
}

// steps is 10 results a minute, none in [120, 130) (the fault window), after rate until
// minute back, 10 again from there.
func steps(after float64, back int64) func(int64) float64 {
	return func(at int64) float64 {
		switch {
		case at < 120*minute:
			return 10
		case at < 130*minute:
			return 0
		case at < back*minute:
			return after
		}
		return 10
	}
}

var fault = []Window{{Start: 120 * minute, End: 130 * minute}}

func mustGoodput(t *testing.T, valid []int64, first, last int64, ws []Window) Goodput {
	t.Helper()
	g, err := GoodputRecovery(valid, first, last, ws)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Goodput at 20% of its rate for 20 minutes after the window, then back: recovered about 20
// minutes after the window's end. A window of 30 results starting in the last minutes of the
// slow stretch can already be back (its results are mostly at the full rate), and the first
// results back can come slow: within 4 minutes (8 inter-result times of the slow stretch).
func TestGoodputRecovers(t *testing.T) {
	var mean float64
	const seeds = 30
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 23))
		valid := results(rng, 300*minute, steps(2, 150))
		g := mustGoodput(t, valid, 0, 280*minute, fault)
		if !g.Tested || !g.Recovered || abs(g.Time-20*minute) > 4*minute {
			t.Fatalf("seed %d: %+v, want recovered 20 minutes after the window", seed, g)
		}
		mean += float64(g.Time) / float64(minute) / seeds
	}
	t.Logf("recovered %.2f min after the window on average (truth 20)", mean)
}

// Goodput that stays at 20% never comes back (a window of 30 results then lasts 15 minutes
// on average, sd 2.7, against a Limit/0.9 near 5: 3.6 sd below, 2·10^-4 per window and
// about ten independent windows a run); a slowdown to 99% is back at once (time 0) but in
// a few seeds. Per seed, the window from the fault's end is slower than Limit/0.9
// with probability about P(a steady window > 1.11·q99) <= 1%, so the seeds not back at
// once are at most Binomial(50, 0.01): P(more than 3) < 2·10^-3.
func TestGoodputNeverAndAtOnce(t *testing.T) {
	late := 0
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 29))
		valid := results(rng, 300*minute, steps(2, 1000))
		if g := mustGoodput(t, valid, 0, 280*minute, fault); !g.Tested || g.Recovered {
			t.Fatalf("seed %d: at 20%%: %+v, want tested, never recovered", seed, g)
		}
		valid = results(rng, 300*minute, func(at int64) float64 {
			if at < 120*minute {
				return 10
			}
			return 9.9
		})
		g := mustGoodput(t, valid, 0, 280*minute, fault)
		if !g.Recovered {
			t.Fatalf("seed %d: at 99%%: %+v, want recovered", seed, g)
		}
		if g.Time > 0 {
			late++
		}
	}
	t.Logf("%d of 50 seeds at 99%% not back at once", late)
	if late > 3 {
		t.Errorf("%d of 50 seeds at 99%% not back at once, want at most 3", late)
	}
}

// Nothing to test: no window, an empty window, a window before the steady state holds 60
// results, arrivals that stop before a window after the fault is complete.
func TestGoodputUndefined(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 31))
	valid := results(rng, 300*minute, steps(10, 0))
	for name, c := range map[string]struct {
		last int64
		ws   []Window
	}{
		"no window":    {280 * minute, nil},
		"empty window": {280 * minute, []Window{{Start: 100 * minute, End: 100 * minute}}},
		"early fault":  {280 * minute, []Window{{Start: 10 * minute, End: 20 * minute}}},
		"arrivals end": {131 * minute, fault},
	} {
		if g := mustGoodput(t, valid, 0, c.last, c.ws); g.Tested || g.Recovered {
			t.Errorf("%s: %+v, want nothing tested", name, g)
		}
	}
	if _, err := GoodputRecovery([]int64{3, 2}, 0, 10, fault); err == nil {
		t.Error("unsorted results: no error")
	}
}

// Multiplying every instant by k = 2, 3.5 and 60 multiplies Time, Limit and the fault's
// bounds by k exactly and changes nothing else.
func TestGoodputTimeScaling(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 37))
		back := 130 + rng.Int64N(40)
		valid := results(rng, 300*minute, steps(rng.Float64()*10, back))
		ws := []Window{{Start: 2 * rng.Int64N(60*minute), End: 120 * minute}, {Start: 110 * minute, End: 130 * minute}}
		base := mustGoodput(t, valid, 0, 280*minute, ws)
		for _, k := range [][2]int64{{2, 1}, {7, 2}, {60, 1}} {
			sv := make([]int64, len(valid))
			for i, v := range valid {
				sv[i] = v * k[0] / k[1]
			}
			sw := []Window{}
			for _, w := range ws {
				sw = append(sw, Window{Start: w.Start * k[0] / k[1], End: w.End * k[0] / k[1]})
			}
			got := mustGoodput(t, sv, 0, 280*minute*k[0]/k[1], sw)
			want := base
			want.Time, want.Limit = want.Time*k[0]/k[1], want.Limit*k[0]/k[1]
			want.FaultStart, want.FaultEnd = want.FaultStart*k[0]/k[1], want.FaultEnd*k[0]/k[1]
			if got != want {
				t.Fatalf("seed %d ×%d/%d: %+v, want %+v", seed, k[0], k[1], got, want)
			}
		}
	}
}

// A fleet that delivers fewer than a window of results after the fault while roots keep
// arriving never came back; it is not "nothing to test". Valid results every 9 s from 0 to
// the fault at minute 120 (steady state: minutes 60-120, 400 results, every window 29·9 =
// 261 s: Limit 261 s, so a window is back when it lasts at most 290 s), then after the
// fault's end at minute 130 none, or 29 results a second apart: no window is ever complete.
// The window from the fault's end lasts longer than the time to the last arrival, so with
// the last arrival 290 s or more after the fault's end it cannot be back (tested, never
// back); a microsecond less and it still could (nothing tested). 30 results a second apart
// instead make the window from the fault's end complete (29 s): back at once.
func TestGoodputSilentAfterFault(t *testing.T) {
	const second = minute / 60
	var steady []int64
	for at := int64(0); at < 120*minute; at += 9 * second {
		steady = append(steady, at)
	}
	end := int64(130 * minute)
	burst := func(n int) []int64 {
		out := slices.Clone(steady)
		for i := range int64(n) {
			out = append(out, end+i*second)
		}
		return out
	}
	for _, c := range []struct {
		name         string
		valid        []int64
		last         int64
		tested, back bool
	}{
		{"silent, 290 s", burst(0), end + 290*second, true, false},
		{"silent, 290 s − 1 µs", burst(0), end + 290*second - 1, false, false},
		{"silent, 2 h", burst(0), end + 120*minute, true, false},
		{"29 results, 290 s", burst(29), end + 290*second, true, false},
		{"29 results, 290 s − 1 µs", burst(29), end + 290*second - 1, false, false},
		{"30 results, 290 s − 1 µs", burst(30), end + 290*second - 1, true, true},
	} {
		g := mustGoodput(t, c.valid, 0, c.last, fault)
		if g.Steady != 400 || g.Limit != 261*second {
			t.Fatalf("%s: steady state of %d results, Limit %d µs; want 400, %d", c.name, g.Steady, g.Limit, 261*second)
		}
		if g.Tested != c.tested || g.Recovered != c.back || g.Time != 0 {
			t.Errorf("%s: %+v, want tested %v, recovered %v, time 0", c.name, g, c.tested, c.back)
		}
	}
}
