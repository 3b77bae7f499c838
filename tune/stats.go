package tune

import (
	"encoding/json"
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/mayday-sim/mayday/scenarios"
)

// Interval is a two-sided confidence interval of a mean.
type Interval struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	N    int     `json:"n"` // values it is built on
}

// meanCI is Student's t interval of the mean of values at level conf: mean ± t(n−1)·s/√n.
// It is the width `mayday compare` widens its bootstrap intervals to (reports.MeanCI), here
// without resampling, so a search decides the same way on every machine and fast. NaN values
// (a metric undefined in a run) are left out; fewer than two values give NaN bounds (no
// interval), values that are all equal a zero-width one.
func meanCI(values []float64, conf float64) Interval {
	x := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) {
			x = append(x, v)
		}
	}
	iv := Interval{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), N: len(x)}
	switch len(x) {
	case 0:
		return iv
	case 1:
		iv.Mean = x[0]
		return iv
	}
	mean, sd := stat.MeanStdDev(x, nil)
	iv.Mean = mean
	if sd == 0 || math.IsNaN(sd) {
		iv.Lo, iv.Hi = mean, mean
		return iv
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(x) - 1)}.Quantile((1 + conf) / 2)
	h := t * sd / math.Sqrt(float64(len(x)))
	iv.Lo, iv.Hi = mean-h, mean+h
	return iv
}

// Verdicts of a constraint on a candidate.
const (
	holds    = 1
	unsure   = 0
	violated = -1
)

// judge says whether the expectation e holds for a candidate whose metric has interval iv:
// holds when the whole interval satisfies it, violated when the whole interval breaks it
// (or the metric was never measured), unsure otherwise.
func judge(e scenarios.Expectation, iv Interval) int {
	if iv.N == 0 {
		return violated // undefined in every run: the check can never hold
	}
	if math.IsNaN(iv.Lo) {
		return unsure
	}
	lo, hi := iv.Lo, iv.Hi
	switch e.Op {
	case ">=", ">":
		switch {
		case e.Holds(lo):
			return holds
		case !e.Holds(hi):
			return violated
		}
	case "<=", "<":
		switch {
		case e.Holds(hi):
			return holds
		case !e.Holds(lo):
			return violated
		}
	case "==":
		switch {
		case lo == hi && lo == e.Value:
			return holds
		case e.Value < lo || e.Value > hi:
			return violated
		}
	case "between":
		switch {
		case lo >= e.Value && hi <= e.Upper:
			return holds
		case hi < e.Value || lo > e.Upper:
			return violated
		}
	}
	return unsure
}

// MarshalJSON writes an undefined mean or bound as null.
func (iv Interval) MarshalJSON() ([]byte, error) {
	f := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return json.Marshal(struct {
		Mean *float64 `json:"mean"`
		Lo   *float64 `json:"lo"`
		Hi   *float64 `json:"hi"`
		N    int      `json:"n"`
	}{f(iv.Mean), f(iv.Lo), f(iv.Hi), iv.N})
}
