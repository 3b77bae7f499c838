package sim

import (
	"math"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// arrivals runs n one-step investigations with the given arrival process and returns their
// arrival times in id order.
func arrivals(t *testing.T, n int, arr scenarios.Arrival) []int64 {
	s := testScenario()
	s.Workload.Investigations = n
	s.Workload.Arrival = arr
	var c record.Collector
	run(t, s, 3, &c)
	at := make([]int64, n)
	for _, inv := range c.Investigations {
		at[inv.InvestigationID-1] = inv.ArrivedAt
	}
	return at
}

// TestArrivals checks the three arrival processes. at_once: everyone at time 0. uniform over
// T: arrivals come in id order within [0, T), and the number in the first half is
// binomial(n, 1/2), within 5 standard errors of n/2. poisson at rate λ: the gaps are
// exponential with mean 1/λ, so their mean is within 5 standard errors (1/(λ√n)) of 1/λ.
func TestArrivals(t *testing.T) {
	const n = 20_000
	for _, at := range arrivals(t, 1000, scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}) {
		if at != 0 {
			t.Fatalf("at_once arrival at %d", at)
		}
	}
	over := time.Hour
	u := arrivals(t, n, scenarios.Arrival{Kind: scenarios.ArrivalUniform, Over: over})
	half := 0
	for i, at := range u {
		if at < 0 || at >= int64(over) || i > 0 && at < u[i-1] {
			t.Fatalf("uniform arrival %d at %v (previous %v)", i, time.Duration(at), time.Duration(u[max(i-1, 0)]))
		}
		if at < int64(over/2) {
			half++
		}
	}
	if d := math.Abs(float64(half) - n/2.0); d > 5*math.Sqrt(n/4.0) {
		t.Errorf("uniform: %d of %d arrivals in the first half", half, n)
	}
	const rate = 2.0
	p := arrivals(t, n, scenarios.Arrival{Kind: scenarios.ArrivalPoisson, Rate: scenarios.Rate{PerSecond: rate}})
	mean := float64(p[n-1]-p[0]) / 1e9 / float64(n-1) // the n-1 gaps between arrivals
	if d := math.Abs(mean - 1/rate); d > 5/(rate*math.Sqrt(n-1)) {
		t.Errorf("poisson: mean gap %.4fs, want %.4fs", mean, 1/rate)
	}
}

// TestPiecewiseArrivals: 1/s for 1000s, nothing for 500s, then 4/s. The first stretch's
// count is Poisson(1000), within 5 standard errors (5·√1000 ≈ 158) of 1000; none arrive in
// the quiet stretch; after it the mean gap is within 5 standard errors (1/(4√m)) of 0.25s.
func TestPiecewiseArrivals(t *testing.T) {
	const n = 10_000
	arr := scenarios.Arrival{Kind: scenarios.ArrivalPiecewise, Pieces: []scenarios.Piece{
		{Rate: scenarios.Rate{PerSecond: 1}, For: 1000 * time.Second},
		{Rate: scenarios.Rate{PerSecond: 0}, For: 500 * time.Second},
		{Rate: scenarios.Rate{PerSecond: 4}},
	}}
	p := arrivals(t, n, arr)
	first, quiet, later := 0, 0, []int64{}
	for i, at := range p {
		if i > 0 && at < p[i-1] {
			t.Fatalf("arrival %d at %v before the previous one", i, time.Duration(at))
		}
		switch s := time.Duration(at); {
		case s < 1000*time.Second:
			first++
		case s < 1500*time.Second:
			quiet++
		default:
			later = append(later, at)
		}
	}
	if quiet != 0 || math.Abs(float64(first)-1000) > 5*math.Sqrt(1000) {
		t.Errorf("piecewise: %d arrivals in the first 1000s (want about 1000), %d in the quiet stretch", first, quiet)
	}
	m := float64(len(later) - 1)
	mean := float64(later[len(later)-1]-later[0]) / 1e9 / m
	if math.Abs(mean-0.25) > 5*0.25/math.Sqrt(m) {
		t.Errorf("piecewise: mean gap %.4fs in the last stretch, want 0.25s", mean)
	}
	if got := piecewiseNext(arr.Pieces, int64(999*time.Second), 2); got != int64(1500*time.Second)+int64(0.25*float64(time.Second)) {
		// From 999s, a unit draw of 2 spends 1 in the first stretch's last second, none in
		// the quiet one, and 1 at 4/s: 0.25s after 1500s.
		t.Errorf("piecewiseNext from 999s with e = 2: %v, want 1500.25s", time.Duration(got))
	}
	// A draw spent exactly at a stretch's end arrives then, not after the quiet stretch that
	// follows: the integrated rate reaches 1000 at 1000s.
	if got := piecewiseNext(arr.Pieces, 0, 1000); got != int64(1000*time.Second) {
		t.Errorf("piecewiseNext from 0 with e = 1000: %v, want 1000s", time.Duration(got))
	}
}
