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
