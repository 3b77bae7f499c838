package detect

import (
	"fmt"
	"slices"
	"sort"
)

// GoodputWindow is the size of the goodput test's windows, in valid results: a window of the
// steady state lasts, on average, GoodputWindow inter-result times, whatever the time scale.
const GoodputWindow = 30

// Window is a fault window [Start, End) (a fault with a duration: an outage, a hang, a
// brownout, a zone crash). A window with End <= Start is no window.
type Window struct{ Start, End int64 }

// Goodput is the goodput recovery of one run.
type Goodput struct {
	// Tested: the run has a fault window, a steady state of at least 2·GoodputWindow valid
	// results, and after the last fault window either a window complete by the last root
	// arrival or, without one, arrivals that continued at least Limit/0.9 past FaultEnd (the
	// window from FaultEnd, still incomplete then, cannot be back). Without it there is
	// nothing to test (goodput_recovery_time undefined).
	Tested bool
	// Recovered: a window after the last fault window was back; false when Tested and none
	// was (goodput never came back while arrivals continued).
	Recovered bool
	// Time is, when Recovered, the time from FaultEnd to the start of the first window back:
	// 0 when the window from FaultEnd itself is, else the instant of its first result minus
	// FaultEnd.
	Time int64
	// FaultStart is the first fault window's start, FaultEnd the last one's end.
	FaultStart, FaultEnd int64
	// Steady is the valid results of the steady state: the second half of
	// [firstArrival, FaultStart), the first half being the warm-up while the fleet fills up.
	Steady int
	// Limit is the 99th percentile of the durations of the steady state's windows (from each
	// of its results to the GoodputWindow-th, itself included): a window is back when it
	// lasts at most Limit/0.9, that is when it delivers at 90% or more of the rate of the
	// steady state's slowest 1% of windows.
	Limit int64
}

// GoodputRecovery tests when goodput came back after the run's last fault window: valid is
// the instants of the valid results delivered (sorted), firstArrival and lastArrival the
// first and last root arrivals, windows the run's fault windows. Everything is a count of
// results or a comparison of instants, so multiplying every instant by k multiplies Time,
// FaultStart, FaultEnd and Limit by k exactly.
//
// A window is GoodputWindow consecutive results (or FaultEnd and the GoodputWindow results
// from it) and its duration from its start to its last result; only windows whose last
// result comes no later than lastArrival are tested (after the arrivals stop the fleet
// drains and slows down without being broken). Without a window complete by lastArrival
// (fewer than GoodputWindow results from FaultEnd to the last arrival), the run is still
// tested, never back, when lastArrival comes at least Limit/0.9 after FaultEnd: the window
// from FaultEnd then lasts longer than a window back can, and every later one ends later
// still (a fleet that delivers nothing after the fault while roots keep arriving never came
// back; it is not "nothing to test"). It runs in O(n log n).
func GoodputRecovery(valid []int64, firstArrival, lastArrival int64, windows []Window) (Goodput, error) {
	for i := 1; i < len(valid); i++ {
		if valid[i] < valid[i-1] {
			return Goodput{}, fmt.Errorf("detect: valid result %d at %d comes before result %d at %d: results must be sorted by time",
				i, valid[i], i-1, valid[i-1])
		}
	}
	var g Goodput
	have := false
	for _, w := range windows {
		if w.End <= w.Start {
			continue
		}
		if !have || w.Start < g.FaultStart {
			g.FaultStart = w.Start
		}
		if !have || w.End > g.FaultEnd {
			g.FaultEnd = w.End
		}
		have = true
	}
	if !have || g.FaultStart <= firstArrival {
		return g, nil
	}
	const k = GoodputWindow
	// Steady results: 2·r >= firstArrival + FaultStart (the second half) and r < FaultStart.
	i0 := sort.Search(len(valid), func(i int) bool { return 2*valid[i] >= firstArrival+g.FaultStart })
	i1 := sort.Search(len(valid), func(i int) bool { return valid[i] >= g.FaultStart })
	g.Steady = max(i1-i0, 0)
	if g.Steady < 2*k {
		return g, nil
	}
	durations := make([]int64, 0, g.Steady-k+1)
	for i := i0; i+k-1 < i1; i++ {
		durations = append(durations, valid[i+k-1]-valid[i])
	}
	slices.Sort(durations)
	m := len(durations)
	g.Limit = durations[(99*m+99)/100-1] // the ⌈0.99·m⌉-th smallest
	back := func(d int64) bool { return 9*d <= 10*g.Limit }

	j0 := sort.Search(len(valid), func(i int) bool { return valid[i] >= g.FaultEnd })
	if j0+k-1 >= len(valid) || valid[j0+k-1] > lastArrival {
		// No window complete by the last arrival (every later window ends no earlier than
		// the one from FaultEnd). When the arrivals lasted past FaultEnd + Limit/0.9, the
		// window from FaultEnd lasts longer than that whenever its last result comes: not
		// back, and no later window is tested: never back (a fleet that delivers fewer than
		// GoodputWindow results after the fault while the roots keep arriving).
		g.Tested = 9*(lastArrival-g.FaultEnd) >= 10*g.Limit
		return g, nil
	}
	g.Tested = true
	if back(valid[j0+k-1] - g.FaultEnd) {
		g.Recovered = true
		return g, nil
	}
	for j := j0; j+k-1 < len(valid) && valid[j+k-1] <= lastArrival; j++ {
		if back(valid[j+k-1] - valid[j]) {
			g.Recovered, g.Time = true, valid[j]-g.FaultEnd
			return g, nil
		}
	}
	return g, nil
}
