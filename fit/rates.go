package fit

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Proportion is a share of trials with its 95% Wilson score interval.
type Proportion struct {
	K, N   int
	P      float64
	Lo, Hi float64
}

// Wilson is k successes of n trials with the 95% Wilson score interval
// (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n), which keeps its coverage near 95%
// for small counts and proportions near 0 or 1, where the normal (Wald) interval fails.
func Wilson(k, n int) Proportion {
	if n <= 0 {
		return Proportion{K: k, N: n, P: math.NaN(), Lo: 0, Hi: 1}
	}
	p := float64(k) / float64(n)
	z2 := z95 * z95
	nn := float64(n)
	den := 1 + z2/nn
	mid := (p + z2/(2*nn)) / den
	half := z95 * math.Sqrt(p*(1-p)/nn+z2/(4*nn*nn)) / den
	lo, hi := math.Max(0, mid-half), math.Min(1, mid+half)
	if k == 0 {
		lo = 0 // exactly, not a rounding error away from it
	}
	if k == n {
		hi = 1
	}
	return Proportion{K: k, N: n, P: p, Lo: lo, Hi: hi}
}

// Rate is events per second over an exposure, with its exact 95% Poisson interval.
type Rate struct {
	Events   int
	Seconds  float64
	PerSec   float64
	Lo, Hi   float64
	From, To float64 // the stretch it covers, seconds since time 0
}

// PoissonRate is k events over t seconds with the exact (Garwood) 95% interval: the
// chi-square quantiles χ²(0.025; 2k)/2t and χ²(0.975; 2k + 2)/2t, which follow from the
// duality of the Poisson count and the Gamma waiting time.
func PoissonRate(k int, t float64) Rate {
	r := Rate{Events: k, Seconds: t, PerSec: float64(k) / t}
	if k > 0 {
		r.Lo = distuv.ChiSquared{K: float64(2 * k)}.Quantile(0.025) / (2 * t)
	}
	r.Hi = distuv.ChiSquared{K: float64(2*k + 2)}.Quantile(0.975) / (2 * t)
	return r
}

// Arrivals fits the arrival process of sorted arrival times (seconds since time 0): all
// at one instant, or a Poisson process over [0, last arrival]. It also looks for a change
// in rate (Piecewise): at every split between arrivals the two-rate likelihood is
// compared with the one-rate one; the split of largest likelihood ratio is kept when
// 2·ΔlnL exceeds the χ²(1) quantile at 1 − 0.001/(n−1), a Bonferroni bound over the
// n − 1 splits tried, so a constant-rate process shows a false change with probability
// below about 0.001. The search recurses into both parts.
type ArrivalFit struct {
	AtOnce    bool
	Rate      Rate
	Piecewise []Rate // empty when one rate fits
}

// FitArrivals fits the arrivals at times ts (sorted ascending).
func FitArrivals(ts []float64) ArrivalFit {
	n := len(ts)
	if n == 0 {
		return ArrivalFit{}
	}
	if ts[n-1]-ts[0] <= 0 {
		return ArrivalFit{AtOnce: true, Rate: Rate{Events: n}}
	}
	end := ts[n-1]
	whole := PoissonRate(n, end)
	whole.To = end
	f := ArrivalFit{Rate: whole}
	var parts []Rate
	split(ts, 0, end, 0, &parts)
	if len(parts) > 1 {
		f.Piecewise = parts
	}
	return f
}

// split appends the rates of [from, to] holding ts, split recursively at significant
// changes of rate (at most 4 levels deep).
func split(ts []float64, from, to float64, depth int, out *[]Rate) {
	n := len(ts)
	ll := func(k int, t float64) float64 {
		if k == 0 || t <= 0 {
			return 0
		}
		return float64(k)*math.Log(float64(k)/t) - float64(k)
	}
	whole := ll(n, to-from)
	best, at := 0.0, -1
	// Splits keep at least 20 arrivals on either side: a rate of fewer is too rough to
	// put in a scenario.
	for i := 20; i <= n-20; i++ {
		c := ts[i-1]
		if g := ll(i, c-from) + ll(n-i, to-c) - whole; g > best {
			best, at = g, i
		}
	}
	crit := distuv.ChiSquared{K: 1}.Quantile(1 - 0.001/float64(max(n-1, 1)))
	if at < 0 || depth >= 4 || 2*best < crit {
		r := PoissonRate(n, to-from)
		r.From, r.To = from, to
		*out = append(*out, r)
		return
	}
	c := ts[at-1]
	split(ts[:at], from, c, depth+1, out)
	split(ts[at:], c, to, depth+1, out)
}
