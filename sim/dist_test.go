package sim

import (
	"math"
	"sort"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
)

// TestDistMoments checks each family against its defining quantity: the sample mean of
// n = 200,000 draws is within 5 standard errors of the true mean (a false failure has
// probability below 1e-6 by the normal approximation); for the lognormal, the sample
// median and 95th percentile are within 2% of the parameters they were built from (their
// sampling error at this n is far below 1%).
func TestDistMoments(t *testing.T) {
	const n = 200_000
	r := stream(1, nsTool, 99)
	cases := []struct {
		d        scenarios.Dist
		mean, sd float64
	}{
		{scenarios.Dist{Kind: scenarios.DistConstant, Value: 3}, 3, 0},
		{scenarios.Dist{Kind: scenarios.DistExponential, Mean: 2}, 2, 2},
		{scenarios.Dist{Kind: scenarios.DistUniform, Min: 1, Max: 3}, 2, 2 / math.Sqrt(12)},
		// Pareto xm=1, alpha=3: mean 1.5, variance xm^2 a/((a-1)^2 (a-2)) = 0.75.
		{scenarios.Dist{Kind: scenarios.DistPareto, Min: 1, Alpha: 3}, 1.5, math.Sqrt(0.75)},
	}
	for _, c := range cases {
		d := newDist(c.d)
		sum := 0.0
		for i := 0; i < n; i++ {
			sum += d.sample(r)
		}
		got := sum / n
		if tol := 5*c.sd/math.Sqrt(n) + 1e-12; math.Abs(got-c.mean) > tol {
			t.Errorf("%s: mean %.4f, want %.4f ± %.4f", c.d.Kind, got, c.mean, tol)
		}
		if math.Abs(d.mean-c.mean) > 1e-12 {
			t.Errorf("%s: dist.mean %.4f, want %.4f", c.d.Kind, d.mean, c.mean)
		}
	}
	d := newDist(scenarios.Dist{Kind: scenarios.DistLognormal, Median: 10, P95: 40})
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = d.sample(r)
	}
	sort.Float64s(xs)
	if med := xs[n/2]; math.Abs(med-10)/10 > 0.02 {
		t.Errorf("lognormal median %.3f, want 10", med)
	}
	if p95 := xs[n*95/100]; math.Abs(p95-40)/40 > 0.02 {
		t.Errorf("lognormal p95 %.3f, want 40", p95)
	}
	// Its mean is m·exp(σ²/2) with σ = ln(p/m)/z95 (about 14.27 here) and its standard
	// deviation the mean times sqrt(exp(σ²) - 1) (about 14.5): the sample mean is held to 5
	// standard errors as above, dist.mean to the formula.
	sigma := math.Log(4) / 1.6448536269514722
	mean := 10 * math.Exp(sigma*sigma/2)
	sd := mean * math.Sqrt(math.Expm1(sigma*sigma))
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	if got, tol := sum/n, 5*sd/math.Sqrt(n); math.Abs(got-mean) > tol {
		t.Errorf("lognormal: mean %.4f, want %.4f ± %.4f", got, mean, tol)
	}
	if math.Abs(d.mean-mean) > 1e-9 {
		t.Errorf("lognormal: dist.mean %.6f, want %.6f", d.mean, mean)
	}
}

// TestDistNoAlloc guards the hot path: drawing must not allocate.
func TestDistNoAlloc(t *testing.T) {
	r := stream(1, nsTool, 1)
	ds := []dist{
		newDist(scenarios.Dist{Kind: scenarios.DistExponential, Mean: 2}),
		newDist(scenarios.Dist{Kind: scenarios.DistLognormal, Median: 10, P95: 40}),
		newDist(scenarios.Dist{Kind: scenarios.DistPareto, Min: 1, Alpha: 2}),
		newDist(scenarios.Dist{Kind: scenarios.DistUniform, Min: 1, Max: 2}),
	}
	allocs := testing.AllocsPerRun(1000, func() {
		for i := range ds {
			ds[i].sample(r)
		}
	})
	if allocs != 0 {
		t.Fatalf("sampling allocates %.1f times per run", allocs)
	}
}

// TestDistDegenerate: the distributions that cannot vary. A lognormal without a 95th
// percentile above its median (sigma 0) is its median, exp(ln m), on every draw, and draws
// nothing from the stream; an exponential without a positive mean, a lognormal without a
// positive median and a distribution of no kind are the constant 0. Each is compared with
// the stream untouched: the next draw from it is the one a fresh stream gives first.
func TestDistDegenerate(t *testing.T) {
	for _, c := range []struct {
		d          scenarios.Dist
		kind       scenarios.DistKind
		draw, mean float64
	}{
		{scenarios.Dist{Kind: scenarios.DistLognormal, Median: 5}, scenarios.DistLognormal, 5, 5},
		{scenarios.Dist{Kind: scenarios.DistLognormal, Median: 5, P95: 5}, scenarios.DistLognormal, 5, 5},
		{scenarios.Dist{Kind: scenarios.DistExponential}, scenarios.DistConstant, 0, 0},
		{scenarios.Dist{Kind: scenarios.DistLognormal}, scenarios.DistConstant, 0, 0},
		{scenarios.Dist{}, scenarios.DistConstant, 0, 0},
	} {
		d := newDist(c.d)
		r, fresh := stream(1, nsTool, 7), stream(1, nsTool, 7)
		if d.kind != c.kind || d.mean != c.mean {
			t.Errorf("%+v: kind %q mean %v; want %q %v", c.d, d.kind, d.mean, c.kind, c.mean)
		}
		for range 3 {
			if v := d.sample(r); v != c.draw {
				t.Errorf("%+v: draw %v, want %v", c.d, v, c.draw)
			}
		}
		if r.Uint64() != fresh.Uint64() {
			t.Errorf("%+v: drawing it used the stream", c.d)
		}
	}
}

// TestNewDistFields pins what newDist keeps of each family, exactly, with parameters other
// than 1 (a product and a quotient by 1 look alike): the family, its two parameters and its
// mean, and the constant 0 it falls back to where the family has no shape.
func TestNewDistFields(t *testing.T) {
	sigma := (math.Log(40) - math.Log(10)) / z95
	for _, c := range []struct {
		d    scenarios.Dist
		want dist
	}{
		{scenarios.Dist{Kind: scenarios.DistConstant, Value: 3}, dist{kind: scenarios.DistConstant, a: 3, mean: 3}},
		{scenarios.Dist{Kind: scenarios.DistExponential, Mean: 4}, dist{kind: scenarios.DistExponential, a: 0.25, mean: 4}},
		{scenarios.Dist{Kind: scenarios.DistExponential}, dist{kind: scenarios.DistConstant}},
		{scenarios.Dist{Kind: scenarios.DistUniform, Min: 2, Max: 6}, dist{kind: scenarios.DistUniform, a: 2, b: 6, mean: 4}},
		{scenarios.Dist{Kind: scenarios.DistLognormal, Median: 10, P95: 40},
			dist{kind: scenarios.DistLognormal, a: math.Log(10), b: sigma, mean: math.Exp(math.Log(10) + sigma*sigma/2)}},
		{scenarios.Dist{Kind: scenarios.DistLognormal, Median: 10, P95: 10},
			dist{kind: scenarios.DistLognormal, a: math.Log(10), mean: math.Exp(math.Log(10))}},
		{scenarios.Dist{Kind: scenarios.DistLognormal, P95: 10}, dist{kind: scenarios.DistConstant}},
		// Pareto: mean alpha·min/(alpha-1), infinite for alpha <= 1 (a min of 0 too).
		{scenarios.Dist{Kind: scenarios.DistPareto, Min: 2, Alpha: 3}, dist{kind: scenarios.DistPareto, a: 2, b: 3, mean: 3}},
		{scenarios.Dist{Kind: scenarios.DistPareto, Min: 4, Alpha: 5}, dist{kind: scenarios.DistPareto, a: 4, b: 5, mean: 5}},
		{scenarios.Dist{Kind: scenarios.DistPareto, Min: 2, Alpha: 1}, dist{kind: scenarios.DistPareto, a: 2, b: 1, mean: math.Inf(1)}},
		{scenarios.Dist{Kind: scenarios.DistPareto, Alpha: 1}, dist{kind: scenarios.DistPareto, b: 1, mean: math.Inf(1)}},
		{scenarios.Dist{}, dist{kind: scenarios.DistConstant}},
	} {
		if got := newDist(c.d); got != c.want {
			t.Errorf("newDist(%+v) = %+v, want %+v", c.d, got, c.want)
		}
	}
}
