package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// coverageBounds returns the range of covering repetitions (out of reps) a correct interval
// procedure may show when its true coverage lies in [pLo, pHi]: the count of covering
// repetitions is Binomial(reps, p), so we allow 5 binomial standard deviations on each side
// (a two-sided normal tail of about 6e-7). The seeds are fixed, so the test is deterministic;
// the bound says why the fixed outcome is not a lucky one.
func coverageBounds(reps int, pLo, pHi float64) (lo, hi float64) {
	n := float64(reps)
	lo = n*pLo - 5*math.Sqrt(n*pLo*(1-pLo))
	hi = n*pHi + 5*math.Sqrt(n*pHi*(1-pHi))
	return lo, hi
}

// TestBootstrapCICoverage draws many samples from a known normal and counts how often the
// 95% percentile interval covers the true mean.
//
// For normal data the bootstrap distribution of the mean is close to normal with standard
// deviation s·√((n−1)/n)/√n (the plug-in variance divides by n), so the percentile interval
// is about x̄ ± z·s·√((n−1)/n)/√n with z = Φ⁻¹(0.975), and it covers μ exactly when
// |T| ≤ z·√((n−1)/n) with T = (x̄−μ)/(s/√n) ~ Student t(n−1). That gives the expected
// coverage p (≈ 0.94 for n = 40: the percentile bootstrap under-covers slightly). We allow
// ±0.01 around p for the normal approximation of the bootstrap distribution and the noise of
// its quantiles with 1000 resamples, then 5 binomial standard deviations. A 90% or 99%
// interval, or an interval of the wrong width, falls outside.
func TestBootstrapCICoverage(t *testing.T) {
	const (
		mu, sigma = 3.0, 2.0
		n         = 40
		reps      = 4000
		resamples = 1000
		conf      = 0.95
	)
	z := distuv.UnitNormal.Quantile(1 - (1-conf)/2)
	tdist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}
	c := z * math.Sqrt(float64(n-1)/n)
	p := tdist.CDF(c) - tdist.CDF(-c)
	lo, hi := coverageBounds(reps, p-0.01, p+0.01)

	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, n)
	covered := 0
	for rep := range reps {
		for i := range x {
			x[i] = mu + sigma*r.NormFloat64()
		}
		m, l, h := BootstrapCI(x, conf, resamples, uint64(rep))
		if m != stat.Mean(x, nil) {
			t.Fatalf("rep %d: mean %v, want the sample mean %v", rep, m, stat.Mean(x, nil))
		}
		if !(l <= m && m <= h) {
			t.Fatalf("rep %d: interval [%v, %v] excludes the sample mean %v", rep, l, h, m)
		}
		if l <= mu && mu <= h {
			covered++
		}
	}
	t.Logf("covered %d of %d (expected p = %.4f, accepted [%.0f, %.0f])", covered, reps, p, lo, hi)
	if float64(covered) < lo || float64(covered) > hi {
		t.Errorf("95%% interval covered the true mean in %d of %d repetitions; want %.0f..%.0f", covered, reps, lo, hi)
	}
}

// TestBootstrapDiffCoverage does the same for the difference of means of two groups of
// different sizes and spreads. The bootstrap interval is about d̂ ± z·√(s_a²(n_a−1)/n_a² +
// s_b²(n_b−1)/n_b²); with 30 and 40 values its coverage is a little under 0.95 (between the
// t and normal cases: about 0.94), so we accept true coverage in [0.925, 0.955] and add 5
// binomial standard deviations. A 90% interval (coverage ≈ 0.89) fails.
func TestBootstrapDiffCoverage(t *testing.T) {
	const (
		muA, sigmaA = 10.0, 1.0
		muB, sigmaB = 10.5, 2.0
		nA, nB      = 30, 40
		reps        = 4000
		resamples   = 500
		conf        = 0.95
	)
	lo, hi := coverageBounds(reps, 0.925, 0.955)
	r := rand.New(rand.NewPCG(3, 4))
	a, b := make([]float64, nA), make([]float64, nB)
	covered := 0
	for rep := range reps {
		for i := range a {
			a[i] = muA + sigmaA*r.NormFloat64()
		}
		for i := range b {
			b[i] = muB + sigmaB*r.NormFloat64()
		}
		d, l, h := BootstrapDiff(a, b, conf, resamples, uint64(rep))
		if want := stat.Mean(b, nil) - stat.Mean(a, nil); d != want {
			t.Fatalf("rep %d: diff %v, want mean(b)-mean(a) = %v", rep, d, want)
		}
		if l <= muB-muA && muB-muA <= h {
			covered++
		}
	}
	t.Logf("covered %d of %d (accepted [%.0f, %.0f])", covered, reps, lo, hi)
	if float64(covered) < lo || float64(covered) > hi {
		t.Errorf("95%% difference interval covered the true difference in %d of %d repetitions; want %.0f..%.0f", covered, reps, lo, hi)
	}
}

func TestBootstrapDeterministic(t *testing.T) {
	x := []float64{0.91, 0.95, 0.88, 0.97, 0.93, 0.90}
	y := []float64{0.97, 0.99, 0.96, 0.98}
	m1, l1, h1 := BootstrapCI(x, 0.95, 2000, 7)
	m2, l2, h2 := BootstrapCI(x, 0.95, 2000, 7)
	if m1 != m2 || l1 != l2 || h1 != h2 {
		t.Errorf("same seed, different intervals: (%v %v %v) vs (%v %v %v)", m1, l1, h1, m2, l2, h2)
	}
	_, l3, h3 := BootstrapCI(x, 0.95, 2000, 8)
	if l1 == l3 && h1 == h3 {
		t.Errorf("seeds 7 and 8 gave the same interval [%v, %v]; the seed does not reach the resampling", l1, h1)
	}
	d1, dl1, dh1 := BootstrapDiff(x, y, 0.95, 2000, 7)
	d2, dl2, dh2 := BootstrapDiff(x, y, 0.95, 2000, 7)
	if d1 != d2 || dl1 != dl2 || dh1 != dh2 {
		t.Errorf("same seed, different difference intervals: (%v %v %v) vs (%v %v %v)", d1, dl1, dh1, d2, dl2, dh2)
	}
	// A larger level gives a wider interval from the same resamples.
	_, l99, h99 := BootstrapCI(x, 0.99, 2000, 7)
	if !(l99 <= l1 && h99 >= h1) || l99 == h99 {
		t.Errorf("99%% interval [%v, %v] does not contain the 95%% one [%v, %v]", l99, h99, l1, h1)
	}
}

func TestBootstrapEdgeCases(t *testing.T) {
	if m, l, h := BootstrapCI(nil, 0.95, 100, 1); !math.IsNaN(m) || !math.IsNaN(l) || !math.IsNaN(h) {
		t.Errorf("empty: got (%v, %v, %v), want NaNs", m, l, h)
	}
	if m, l, h := BootstrapCI([]float64{0.7}, 0.95, 100, 1); m != 0.7 || l != 0.7 || h != 0.7 {
		t.Errorf("one value: got (%v, %v, %v), want 0.7 three times", m, l, h)
	}
	if m, l, h := BootstrapCI([]float64{2, 2, 2}, 0.95, 0, 1); m != 2 || l != 2 || h != 2 {
		t.Errorf("constant values, default resamples: got (%v, %v, %v), want 2 three times", m, l, h)
	}
	if d, l, h := BootstrapDiff([]float64{1}, nil, 0.95, 100, 1); !math.IsNaN(d) || !math.IsNaN(l) || !math.IsNaN(h) {
		t.Errorf("empty group: got (%v, %v, %v), want NaNs", d, l, h)
	}
	if d, l, h := BootstrapDiff([]float64{1, 1}, []float64{3, 3, 3}, 0.9, 100, 1); d != 2 || l != 2 || h != 2 {
		t.Errorf("constant groups: got (%v, %v, %v), want 2 three times", d, l, h)
	}
	if _, l, h := BootstrapCI([]float64{1, math.NaN()}, 0.95, 100, 1); !math.IsNaN(l) || !math.IsNaN(h) {
		t.Errorf("NaN value: interval [%v, %v], want NaNs", l, h)
	}
	for _, conf := range []float64{0, 1, -0.5, 95, math.NaN()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("confidence %v: no panic", conf)
				}
			}()
			BootstrapCI([]float64{1, 2}, conf, 10, 1)
		}()
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("negative resamples: no panic")
			}
		}()
		BootstrapDiff([]float64{1}, []float64{2}, 0.95, -1, 1)
	}()
}
