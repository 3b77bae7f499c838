package fit

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Counts fits whole-number observations (steps per investigation, subagents per spawn)
// the way the simulator makes them: a draw X of the family is rounded to the nearest
// whole number and raised to floor (1 for steps and subagent counts), so a count k > floor
// has probability F(k + ½) − F(k − ½) and the count floor has F(floor + ½). The likelihood
// is that discretised one, maximised with Nelder–Mead from the moment estimates; uniform
// has a closed form (below). All observations equal gives a constant.
func Counts(xs []float64, floor float64) (Dist, error) {
	if len(xs) == 0 {
		return Dist{}, fmt.Errorf("no observations to fit")
	}
	x := slices.Clone(xs)
	slices.Sort(x)
	n := len(x)
	if x[0] == x[n-1] {
		return Dist{Family: Constant, Value: x[0], AIC: math.NaN(), N: n}, nil
	}
	cands := []Dist{countExponential(x, floor), countLognormal(x, floor), countUniform(x, floor)}
	d := choose(cands, x, 0)
	d.KS = ksCount(x, d, floor)
	return d, nil
}

// countLL is the discretised log-likelihood of sorted whole numbers x under cdf.
func countLL(x []float64, floor float64, cdf func(float64) float64) float64 {
	ll := 0.0
	for _, k := range x {
		p := cdf(k + 0.5)
		if k > floor {
			p -= cdf(k - 0.5)
		}
		if p <= 0 {
			return math.Inf(-1)
		}
		ll += math.Log(p)
	}
	return ll
}

func countExponential(x []float64, floor float64) Dist {
	p, ll := maximise(func(p []float64) float64 {
		return countLL(x, floor, distuv.Exponential{Rate: math.Exp(p[0])}.CDF)
	}, []float64{-math.Log(stat.Mean(x, nil))})
	return Dist{Family: Exponential, Mean: math.Exp(-p[0]), AIC: aic(1, ll)}
}

func countLognormal(x []float64, floor float64) Dist {
	logs := make([]float64, len(x))
	for i, v := range x {
		logs[i] = math.Log(math.Max(v, 0.5))
	}
	var nrm distuv.Normal
	nrm.Fit(logs, nil)
	p, ll := maximise(func(p []float64) float64 {
		return countLL(x, floor, distuv.LogNormal{Mu: p[0], Sigma: math.Exp(p[1])}.CDF)
	}, []float64{nrm.Mu, math.Log(math.Max(nrm.Sigma, 0.05))})
	sigma := math.Exp(p[1])
	return Dist{Family: Lognormal, Median: math.Exp(p[0]), P95: math.Exp(p[0] + lognormalP95*sigma), AIC: aic(2, ll)}
}

// countUniform: a continuous uniform [a, b) rounded. With lo and hi the least and largest
// counts, the inner counts have probability 1/(b − a) each and the end counts the parts
// u = lo + ½ − a and v = b − (hi − ½) of their unit cells, both in (0, 1]. The
// log-likelihood c_lo·ln u + c_hi·ln v − n·ln W, W = hi − lo − 1 + u + v, is maximal at
// u = c_lo·W/n and v = c_hi·W/n, so W = (hi − lo − 1)/(1 − (c_lo + c_hi)/n), each part
// clamped to 1, except at floor: a count at floor gathers every draw below floor + ½, so
// its part may be longer than one cell.
func countUniform(x []float64, floor float64) Dist {
	n := float64(len(x))
	lo, hi := x[0], x[len(x)-1]
	var cLo, cHi float64
	for _, k := range x {
		if k == lo {
			cLo++
		}
		if k == hi {
			cHi++
		}
	}
	inner := hi - lo - 1
	u, v := 1.0, 1.0
	if frac := (cLo + cHi) / n; frac < 1 && inner > 0 {
		w := inner / (1 - frac)
		u, v = cLo*w/n, min(1, cHi*w/n)
		if lo > floor {
			u = min(1, u)
		}
	}
	d := Dist{Family: Uniform, Min: lo + 0.5 - u, Max: hi - 0.5 + v}
	ll := countLL(x, floor, distuv.Uniform{Min: d.Min, Max: d.Max}.CDF)
	d.AIC = aic(2, ll)
	return d
}

// ksCount is the largest gap between the empirical and the fitted distribution functions
// of the rounded counts, over the observed counts.
func ksCount(x []float64, d Dist, floor float64) float64 {
	n := float64(len(x))
	worst := 0.0
	for i := 0; i < len(x); {
		j := i
		for j < len(x) && x[j] == x[i] {
			j++
		}
		worst = max(worst, math.Abs(float64(j)/n-d.CDF(x[i]+0.5)))
		i = j
	}
	return worst
}
