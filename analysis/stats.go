package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// DefaultResamples is the number of bootstrap resamples used when a caller passes 0.
const DefaultResamples = 10000

// Fixed second words of the PCG streams, so the two bootstrap functions never share a stream
// even when called with the same seed.
const (
	streamCI   uint64 = 0x6d61796461792d31 // "mayday-1"
	streamDiff uint64 = 0x6d61796461792d32 // "mayday-2"
)

// BootstrapCI returns the mean of values and a percentile bootstrap confidence interval of
// that mean at level conf (e.g. 0.95): values are resampled with replacement `resamples`
// times (0 = DefaultResamples), and lo and hi are the (1−conf)/2 and (1+conf)/2 quantiles of
// the resampled means. The result depends only on its arguments: the resampling stream is
// a PCG source seeded with seed. An empty values gives NaNs; a single value gives a
// zero-width interval. It panics if conf is not in (0, 1) or resamples is negative.
//
// Typical use: values are one metric's values over the seeds of a scenario.
func BootstrapCI(values []float64, conf float64, resamples int, seed uint64) (mean, lo, hi float64) {
	resamples = checkBootstrap(conf, resamples)
	if len(values) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	mean = stat.Mean(values, nil)
	r := rand.New(rand.NewPCG(seed, streamCI))
	means := make([]float64, resamples)
	for i := range means {
		means[i] = resampleMean(r, values)
	}
	lo, hi = percentiles(means, conf)
	return mean, lo, hi
}

// BootstrapDiff returns diff = mean(b) − mean(a), the change from group a (e.g. a baseline's
// seeds) to group b (a candidate's seeds), with a percentile bootstrap confidence interval
// at level conf: each group is resampled independently with replacement, `resamples` times
// (0 = DefaultResamples). An interval that excludes 0 says the groups differ at that level.
// Deterministic for a given seed; NaNs if either group is empty; panics like BootstrapCI.
func BootstrapDiff(a, b []float64, conf float64, resamples int, seed uint64) (diff, lo, hi float64) {
	resamples = checkBootstrap(conf, resamples)
	if len(a) == 0 || len(b) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	diff = stat.Mean(b, nil) - stat.Mean(a, nil)
	r := rand.New(rand.NewPCG(seed, streamDiff))
	diffs := make([]float64, resamples)
	for i := range diffs {
		ma := resampleMean(r, a)
		diffs[i] = resampleMean(r, b) - ma
	}
	lo, hi = percentiles(diffs, conf)
	return diff, lo, hi
}

func checkBootstrap(conf float64, resamples int) int {
	if !(conf > 0 && conf < 1) {
		panic(fmt.Sprintf("analysis: bootstrap confidence %v: want a level in (0, 1), e.g. 0.95", conf))
	}
	if resamples < 0 {
		panic(fmt.Sprintf("analysis: bootstrap resamples %d: want 0 (default %d) or more", resamples, DefaultResamples))
	}
	if resamples == 0 {
		return DefaultResamples
	}
	return resamples
}

// resampleMean draws len(x) values of x with replacement and returns their mean.
func resampleMean(r *rand.Rand, x []float64) float64 {
	n := len(x)
	var s float64
	for range n {
		s += x[r.IntN(n)]
	}
	return s / float64(n)
}

// percentiles sorts x in place and returns its equal-tailed conf interval, linearly
// interpolated between order statistics.
func percentiles(x []float64, conf float64) (lo, hi float64) {
	if slices.ContainsFunc(x, math.IsNaN) {
		return math.NaN(), math.NaN()
	}
	slices.Sort(x)
	tail := (1 - conf) / 2
	return stat.Quantile(tail, stat.LinInterp, x, nil), stat.Quantile(1-tail, stat.LinInterp, x, nil)
}
