package fit

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Family is a distribution family of the scenario format.
type Family string

// The families a scenario's distributions take (docs/scenarios.md, Distributions).
const (
	Constant    Family = "constant"
	Exponential Family = "exponential"
	Uniform     Family = "uniform"
	Lognormal   Family = "lognormal"
	Pareto      Family = "pareto"
)

// z95 is the two-sided 95% standard normal quantile.
var z95 = distuv.UnitNormal.Quantile(0.975)

// lognormalP95 is the standard normal 0.95 quantile that links a lognormal's median and
// p95 in the scenario format (σ = (ln p95 − ln median) / 1.6449).
var lognormalP95 = distuv.UnitNormal.Quantile(0.95)

// Dist is one fitted distribution: its family and parameters in the scenario format's
// terms (for durations, seconds), with the criterion it was chosen by and its fit.
type Dist struct {
	Family Family
	Value  float64 // constant
	Mean   float64 // exponential
	Min    float64 // uniform, pareto
	Max    float64 // uniform
	Median float64 // lognormal
	P95    float64 // lognormal
	Alpha  float64 // pareto
	AIC    float64 // 2k − 2 ln L of the chosen fit (NaN for a constant)
	KS     float64 // one-sample Kolmogorov–Smirnov distance of the data from the fit
	N      int     // observations fitted
	// Others lists the AIC of each other family tried, for the comment.
	Others []Candidate
	// Refused says which families of lower AIC were passed over, and why (a pareto of
	// alpha <= 1, whose mean is infinite; a fit whose KS distance is not a number).
	Refused []string
}

// Candidate is a family that was tried and its AIC.
type Candidate struct {
	Family Family
	AIC    float64
}

// dist is the gonum distribution of d (nil for a constant).
func (d Dist) dist() interface {
	CDF(float64) float64
	LogProb(float64) float64
	Quantile(float64) float64
} {
	switch d.Family {
	case Exponential:
		return distuv.Exponential{Rate: 1 / d.Mean}
	case Uniform:
		return distuv.Uniform{Min: d.Min, Max: d.Max}
	case Lognormal:
		return distuv.LogNormal{Mu: math.Log(d.Median), Sigma: (math.Log(d.P95) - math.Log(d.Median)) / lognormalP95}
	case Pareto:
		return distuv.Pareto{Xm: d.Min, Alpha: d.Alpha}
	}
	return nil
}

// CDF is the fitted distribution function.
func (d Dist) CDF(x float64) float64 {
	if g := d.dist(); g != nil {
		return g.CDF(x)
	}
	if x < d.Value {
		return 0
	}
	return 1
}

// Quantile is the fitted quantile function.
func (d Dist) Quantile(p float64) float64 {
	if g := d.dist(); g != nil {
		return g.Quantile(p)
	}
	return d.Value
}

// MedianOf is the fitted distribution's median.
func (d Dist) MedianOf() float64 { return d.Quantile(0.5) }

// String is the family and its parameters, for messages.
func (d Dist) String() string {
	switch d.Family {
	case Exponential:
		return fmt.Sprintf("exponential mean %.4g", d.Mean)
	case Uniform:
		return fmt.Sprintf("uniform [%.4g, %.4g)", d.Min, d.Max)
	case Lognormal:
		return fmt.Sprintf("lognormal median %.4g p95 %.4g", d.Median, d.P95)
	case Pareto:
		return fmt.Sprintf("pareto min %.4g alpha %.4g", d.Min, d.Alpha)
	}
	return fmt.Sprintf("constant %.4g", d.Value)
}

// loglik is a log-likelihood of a family's parameter vector, -Inf where it is undefined.
type loglik func(p []float64) float64

// maximise maximises ll from start with gonum's Nelder–Mead simplex and returns the best
// parameters and log-likelihood. A start that is already undefined is returned as is.
func maximise(ll loglik, start []float64) ([]float64, float64) {
	best := ll(start)
	if math.IsInf(best, -1) || math.IsNaN(best) {
		return start, best
	}
	p := optimize.Problem{Func: func(x []float64) float64 {
		v := ll(x)
		if math.IsNaN(v) || math.IsInf(v, -1) {
			return math.Inf(1)
		}
		return -v
	}}
	res, err := optimize.Minimize(p, start, &optimize.Settings{FuncEvaluations: 4000}, &optimize.NelderMead{})
	if err != nil || res == nil || -res.F < best {
		return start, best
	}
	return res.X, -res.F
}

// Durations fits positive continuous observations (seconds) among the scenario's
// families. truncate > 0 says the observations are only those below it (a latency is seen
// as a success only when it beat the timeout): each density is then divided by its CDF at
// truncate, and the estimates are the truncated maximum-likelihood ones, found with
// Nelder–Mead from the closed-form untruncated estimates. Constant is chosen when every
// observation is equal to 1 part in 10^6. It needs at least one observation.
func Durations(xs []float64, truncate float64) (Dist, error) {
	x := positive(xs)
	if len(x) == 0 {
		return Dist{}, fmt.Errorf("no positive observations to fit")
	}
	slices.Sort(x)
	n := len(x)
	if x[n-1]-x[0] <= 1e-6*x[n-1] {
		return Dist{Family: Constant, Value: stat.Mean(x, nil), AIC: math.NaN(), N: n}, nil
	}
	cands := []Dist{fitExponential(x, truncate), fitLognormal(x, truncate), fitPareto(x, truncate), fitUniform(x)}
	return choose(cands, x, truncate), nil
}

// choose keeps the candidate of least AIC that a scenario can use, and records the others
// and the KS distance. Refused are a pareto of alpha <= 1 (its mean is infinite: a
// simulated run's mean latency, and every metric built on it, would not settle) and a fit
// whose KS distance is infinite or not a number (the fit does not describe the data); the
// next family by AIC is chosen, and Refused says which were passed over and why. When
// every family is refused the least AIC is kept, and Refused says so.
func choose(cands []Dist, x []float64, truncate float64) Dist {
	type refusal struct {
		i   int
		why string
	}
	best, fallback := -1, -1
	var refused []refusal
	for i, c := range cands {
		if math.IsNaN(c.AIC) || math.IsInf(c.AIC, 0) {
			continue
		}
		if fallback < 0 || c.AIC < cands[fallback].AIC {
			fallback = i
		}
		switch ks := ksOne(x, c, truncate); {
		case c.Family == Pareto && !(c.Alpha > 1):
			refused = append(refused, refusal{i, fmt.Sprintf("alpha %.3g <= 1, an infinite mean", c.Alpha)})
		case math.IsNaN(ks) || math.IsInf(ks, 0):
			refused = append(refused, refusal{i, "an undefined KS distance"})
		case best < 0 || c.AIC < cands[best].AIC:
			best = i
		}
	}
	var note []string
	switch {
	case best < 0 && fallback >= 0:
		best = fallback
		note = append(note, "no family was usable; the least AIC is kept")
	case best < 0:
		best = 0
	}
	d := cands[best]
	for i, c := range cands {
		if i != best {
			d.Others = append(d.Others, Candidate{c.Family, c.AIC})
		}
	}
	// Only a family that would have won is worth a word.
	for _, r := range refused {
		if c := cands[r.i]; r.i != best && c.AIC < d.AIC {
			d.Refused = append(d.Refused, fmt.Sprintf("%s (AIC %.1f) refused: %s", c.Family, c.AIC, r.why))
		}
	}
	d.Refused = append(d.Refused, note...)
	d.N = len(x)
	d.KS = ksOne(x, d, truncate)
	return d
}

// truncLL is the log-likelihood of sorted x under g, truncated at t when t > 0.
func truncLL(x []float64, g interface {
	LogProb(float64) float64
	CDF(float64) float64
}, t float64) float64 {
	ll := 0.0
	for _, v := range x {
		ll += g.LogProb(v)
	}
	if t > 0 {
		c := g.CDF(t)
		if c <= 0 {
			return math.Inf(-1)
		}
		ll -= float64(len(x)) * math.Log(c)
	}
	return ll
}

func aic(k int, ll float64) float64 { return 2*float64(k) - 2*ll }

func fitExponential(x []float64, t float64) Dist {
	var e distuv.Exponential
	e.Fit(x, nil)
	p, ll := maximise(func(p []float64) float64 {
		return truncLL(x, distuv.Exponential{Rate: math.Exp(p[0])}, t)
	}, []float64{math.Log(e.Rate)})
	return Dist{Family: Exponential, Mean: math.Exp(-p[0]), AIC: aic(1, ll)}
}

func fitLognormal(x []float64, t float64) Dist {
	logs := make([]float64, len(x))
	for i, v := range x {
		logs[i] = math.Log(v)
	}
	var nrm distuv.Normal
	nrm.Fit(logs, nil)
	p, ll := maximise(func(p []float64) float64 {
		return truncLL(x, distuv.LogNormal{Mu: p[0], Sigma: math.Exp(p[1])}, t)
	}, []float64{nrm.Mu, math.Log(math.Max(nrm.Sigma, 1e-9))})
	sigma := math.Exp(p[1])
	return Dist{Family: Lognormal, Median: math.Exp(p[0]), P95: math.Exp(p[0] + lognormalP95*sigma), AIC: aic(2, ll)}
}

// fitPareto: the scale's estimate is the least observation (the likelihood grows with the
// scale up to it); the shape is then maximised.
func fitPareto(x []float64, t float64) Dist {
	xm := x[0]
	s := 0.0
	for _, v := range x {
		s += math.Log(v / xm)
	}
	if s <= 0 {
		return Dist{Family: Pareto, AIC: math.NaN()}
	}
	p, ll := maximise(func(p []float64) float64 {
		return truncLL(x, distuv.Pareto{Xm: xm, Alpha: math.Exp(p[0])}, t)
	}, []float64{math.Log(float64(len(x)) / s)})
	return Dist{Family: Pareto, Min: xm, Alpha: math.Exp(p[0]), AIC: aic(2, ll)}
}

// fitUniform: the maximum-likelihood interval is the sample's range.
func fitUniform(x []float64) Dist {
	lo, hi := x[0], x[len(x)-1]
	ll := -float64(len(x)) * math.Log(hi-lo)
	return Dist{Family: Uniform, Min: lo, Max: hi, AIC: aic(2, ll)}
}

// ksOne is the one-sample Kolmogorov–Smirnov distance sup |F_n(x) − F(x)| of sorted x
// from d (truncated at t when t > 0): gonum's stat.KolmogorovSmirnov compares two samples,
// not a sample with a distribution function.
func ksOne(x []float64, d Dist, t float64) float64 {
	scale := 1.0
	if t > 0 {
		scale = d.CDF(t)
	}
	if scale <= 0 {
		return 1
	}
	n := float64(len(x))
	worst := 0.0
	for i, v := range x {
		f := d.CDF(v) / scale
		worst = max(worst, float64(i+1)/n-f, f-float64(i)/n)
	}
	return worst
}

func positive(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, v := range xs {
		if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// MedianInterval is a distribution-free 95% interval of the median of x: the order
// statistics of ranks n/2 ∓ z·√n/2 (the normal approximation of the binomial count of
// observations below the median, Binomial(n, ½)).
func MedianInterval(xs []float64) (med, lo, hi float64) {
	x := slices.Clone(xs)
	slices.Sort(x)
	n := len(x)
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	med = stat.Quantile(0.5, stat.Empirical, x, nil)
	h := z95 * math.Sqrt(float64(n)) / 2
	i := max(0, int(math.Floor(float64(n)/2-h)))
	j := min(n-1, int(math.Ceil(float64(n)/2+h)))
	return med, x[i], x[j]
}
