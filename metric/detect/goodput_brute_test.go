package detect

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// bruteGoodput is GoodputRecovery written from its documentation alone, by scanning every
// result instead of searching: the steady state's results, their windows and the 99th
// percentile of their lengths, then the windows after the last fault window in order.
func bruteGoodput(valid []int64, firstArrival, lastArrival int64, windows []Window) Goodput {
	var g Goodput
	have := false
	for _, w := range windows {
		if w.End <= w.Start {
			continue // no window
		}
		if !have {
			g.FaultStart, g.FaultEnd, have = w.Start, w.End, true
			continue
		}
		g.FaultStart, g.FaultEnd = min(g.FaultStart, w.Start), max(g.FaultEnd, w.End)
	}
	if !have || g.FaultStart <= firstArrival {
		return g
	}
	const k = GoodputWindow
	// The steady state: the results of the second half of [firstArrival, FaultStart).
	var steady []int
	for i, r := range valid {
		if 2*r >= firstArrival+g.FaultStart && r < g.FaultStart {
			steady = append(steady, i)
		}
	}
	g.Steady = len(steady)
	if g.Steady < 2*k {
		return g
	}
	// Its windows: from each of its results to the k-th, itself included, all in it.
	var lengths []int64
	for _, i := range steady {
		if slices.Contains(steady, i+k-1) {
			lengths = append(lengths, valid[i+k-1]-valid[i])
		}
	}
	slices.Sort(lengths)
	// The ⌈0.99·m⌉-th smallest: the least length at or below which 99% of them lie.
	for _, l := range lengths {
		at := 0
		for _, x := range lengths {
			if x <= l {
				at++
			}
		}
		if 100*at >= 99*len(lengths) {
			g.Limit = l
			break
		}
	}
	back := func(length int64) bool { return float64(length) <= float64(g.Limit)/0.9 }
	after := -1 // the first result at or after FaultEnd
	for i, r := range valid {
		if r >= g.FaultEnd {
			after = i
			break
		}
	}
	if after < 0 || after+k-1 >= len(valid) || valid[after+k-1] > lastArrival {
		// No window complete by the last arrival: tested (never back) only when the arrivals
		// lasted Limit/0.9 past FaultEnd.
		g.Tested = float64(lastArrival-g.FaultEnd) >= float64(g.Limit)/0.9
		return g
	}
	g.Tested = true
	if back(valid[after+k-1] - g.FaultEnd) {
		g.Recovered = true
		return g
	}
	for j := after; j+k-1 < len(valid) && valid[j+k-1] <= lastArrival; j++ {
		if back(valid[j+k-1] - valid[j]) {
			g.Recovered, g.Time = true, valid[j]-g.FaultEnd
			return g
		}
	}
	return g
}

// GoodputRecovery answers as its definition does, on small random runs whose instants
// collide (a grid of 7 µs), whose windows overlap, touch or are empty, whose arrivals start
// before, at or after the faults and stop anywhere, at rates that make each outcome common:
// never tested, tested and never back, back at once, and back later. Limit/0.9 is compared
// in integers by GoodputRecovery and in floats here: on instants below 2^40 the two agree.
func TestGoodputMatchesItsDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 29))
	var outcomes [4]int
	for c := range 4000 {
		pre, post := 60+rng.IntN(240), 20+rng.IntN(200) // results before and after the fault
		n := pre + post
		valid := make([]int64, n)
		at, faultStart := int64(0), int64(0)
		slow := 1 + rng.Int64N(6) // how much slower the results come after the fault,
		slowFor := rng.IntN(post) // for how many results
		for i := range valid {
			if i == pre {
				faultStart = at + 7
			}
			step := int64(7 * rng.IntN(3))
			if i >= pre && slowFor > 0 {
				step *= slow
				slowFor--
			}
			at += step
			valid[i] = at
		}
		var ws []Window
		for range rng.IntN(3) + 1 {
			s := faultStart + int64(7*rng.IntN(40)) - 70
			ws = append(ws, Window{Start: s, End: s + int64(7*(rng.IntN(30)-3))})
		}
		first := int64(7 * (rng.IntN(40) - 10))
		last := valid[n-1] - int64(7*rng.IntN(post)) + 70
		want := bruteGoodput(valid, first, last, ws)
		got, err := GoodputRecovery(valid, first, last, ws)
		if err != nil {
			t.Fatalf("case %d: %v", c, err)
		}
		if got != want {
			t.Fatalf("case %d (n %d, first %d, last %d, windows %v):\n got %+v\nwant %+v", c, n, first, last, ws, got, want)
		}
		switch {
		case !got.Tested:
			outcomes[0]++
		case !got.Recovered:
			outcomes[1]++
		case got.Time == 0:
			outcomes[2]++
		default:
			outcomes[3]++
		}
	}
	t.Logf("outcomes %v", outcomes)
	for i, what := range []string{"never tested", "never back", "back at once", "back later"} {
		if outcomes[i] < 100 {
			t.Errorf("%s in %d of 4000 cases: the cases do not exercise it", what, outcomes[i])
		}
	}
}

// Results out of order are refused, naming the first pair out of order.
func TestGoodputRefusesUnsortedResults(t *testing.T) {
	_, err := GoodputRecovery([]int64{1, 5, 4, 9}, 0, 10, fault)
	if err == nil || !strings.Contains(err.Error(), "result 2 at 4") || !strings.Contains(err.Error(), "result 1 at 5") {
		t.Fatalf("unsorted results: %v", err)
	}
	if _, err := GoodputRecovery([]int64{1, 5, 5, 9}, 0, 10, fault); err != nil {
		t.Fatalf("results at one instant: %v", err)
	}
}
