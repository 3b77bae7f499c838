package sim

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/mayday-sim/mayday/scenarios"
)

// z95 is the standard normal 95th percentile: a lognormal with median m and 95th
// percentile p has mu = ln m and sigma = (ln p - mu) / z95.
const z95 = 1.6448536269514722

// dist is a scenario distribution prepared for sampling. Sampling builds a distuv value on
// the stack with the caller's stream as its source, so draws come from the entity's own
// stream and allocate nothing.
type dist struct {
	kind scenarios.DistKind
	a, b float64 // constant: a; exponential: rate a; uniform: [a, b); lognormal: mu a, sigma b; pareto: xm a, alpha b
	mean float64 // the distribution's mean (+Inf when it has none)
}

func newDist(d scenarios.Dist) dist {
	switch d.Kind {
	case scenarios.DistConstant:
		return dist{kind: d.Kind, a: d.Value, mean: d.Value}
	case scenarios.DistExponential:
		if d.Mean <= 0 {
			return dist{kind: scenarios.DistConstant}
		}
		return dist{kind: d.Kind, a: 1 / d.Mean, mean: d.Mean}
	case scenarios.DistUniform:
		return dist{kind: d.Kind, a: d.Min, b: d.Max, mean: (d.Min + d.Max) / 2}
	case scenarios.DistLognormal:
		if d.Median <= 0 {
			return dist{kind: scenarios.DistConstant}
		}
		mu := math.Log(d.Median)
		// A p95 at or below the median (or none) leaves no spread.
		sigma := max((math.Log(d.P95)-mu)/z95, 0)
		return dist{kind: d.Kind, a: mu, b: sigma, mean: math.Exp(mu + sigma*sigma/2)}
	case scenarios.DistPareto:
		m := math.Inf(1)
		if d.Alpha > 1 {
			m = d.Alpha * d.Min / (d.Alpha - 1)
		}
		return dist{kind: d.Kind, a: d.Min, b: d.Alpha, mean: m}
	}
	return dist{kind: scenarios.DistConstant}
}

// sample draws one value from r.
func (d *dist) sample(r *rand.Rand) float64 {
	switch d.kind {
	case scenarios.DistExponential:
		return distuv.Exponential{Rate: d.a, Src: r}.Rand()
	case scenarios.DistUniform:
		if d.b <= d.a {
			return d.a
		}
		return distuv.Uniform{Min: d.a, Max: d.b, Src: r}.Rand()
	case scenarios.DistLognormal:
		if d.b == 0 {
			return math.Exp(d.a)
		}
		return distuv.LogNormal{Mu: d.a, Sigma: d.b, Src: r}.Rand()
	case scenarios.DistPareto:
		return distuv.Pareto{Xm: d.a, Alpha: d.b, Src: r}.Rand()
	}
	return d.a
}

// duration draws a duration in ns (never negative).
func (d *dist) duration(r *rand.Rand) int64 {
	v := d.sample(r)
	if !(v > 0) {
		return 0
	}
	// The ceiling 2^61-1 is 2^61 as a float64, whose conversion would be one above it.
	if v >= math.MaxInt64/4 {
		return math.MaxInt64 / 4
	}
	return int64(v)
}

// count draws a count rounded to the nearest integer, at least lo.
func (d *dist) count(r *rand.Rand, lo int64) int64 {
	v := math.Round(d.sample(r))
	if !(v >= float64(lo)) {
		return lo
	}
	return int64(min(v, 1<<40))
}
