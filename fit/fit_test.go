package fit

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/mayday-sim/mayday/scenarios"
	_ "github.com/mayday-sim/mayday/sim" // registers the fault kinds
)

// draws is n draws of d from a fixed seed.
func draws(d interface{ Rand() float64 }, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = d.Rand()
	}
	return x
}

// TestDurationsRecoverTheirFamily: 4000 draws of each family are fitted back to the same
// family (AIC), with the median within 10%. The sample median's relative standard error is
// at most about 1.25·σ/√n for a lognormal of σ = 1 (2%) and 1/(ln 2·√n) for an exponential
// (2.3%); 10% is over 4 standard errors, so a different seed would fail with probability
// below 10^-4. The seeds are fixed, so the test is deterministic.
func TestDurationsRecoverTheirFamily(t *testing.T) {
	src := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		d      interface{ Rand() float64 }
		family Family
		median float64
	}{
		{distuv.LogNormal{Mu: math.Log(2), Sigma: 1, Src: src}, Lognormal, 2},
		{distuv.Exponential{Rate: 1.0 / 30, Src: src}, Exponential, 30 * math.Ln2},
		{distuv.Pareto{Xm: 0.5, Alpha: 1.5, Src: src}, Pareto, 0.5 * math.Pow(2, 1/1.5)},
		{distuv.Uniform{Min: 3, Max: 10, Src: src}, Uniform, 6.5},
	}
	for _, c := range cases {
		d, err := Durations(draws(c.d, 4000), 0)
		if err != nil {
			t.Fatal(err)
		}
		if d.Family != c.family || math.Abs(d.MedianOf()/c.median-1) > 0.1 {
			t.Errorf("%s: fitted %v (median %.4g), want median %.4g", c.family, d, d.MedianOf(), c.median)
		}
		// The KS distance of n draws from their own law is about 0.87/√n at its median
		// (Kolmogorov's distribution); 1.95/√n is its 0.999 quantile.
		if d.KS > 1.95/math.Sqrt(4000) {
			t.Errorf("%s: KS %.4f too large for a right fit", c.family, d.KS)
		}
	}
}

// TestDurationsTruncated: latencies seen only below a timeout (successes) still give the
// untruncated law back. Lognormal median 10s, σ = 1, truncated at 20s (F(20) = 0.756):
// the naive median would be about 7.4s; the truncated likelihood finds about 10s.
func TestDurationsTruncated(t *testing.T) {
	src := rand.New(rand.NewPCG(3, 4))
	all := draws(distuv.LogNormal{Mu: math.Log(10), Sigma: 1, Src: src}, 8000)
	var seen []float64
	for _, x := range all {
		if x < 20 {
			seen = append(seen, x)
		}
	}
	d, err := Durations(seen, 20)
	if err != nil {
		t.Fatal(err)
	}
	if d.Family != Lognormal || math.Abs(d.Median/10-1) > 0.1 {
		t.Errorf("fitted %v, want lognormal median 10s", d)
	}
}

func TestCountsUniform(t *testing.T) {
	// U[2, 8) rounded: counts 2..8, the ends half as likely. 3000 draws: each end's count
	// (about 250) has a standard error of about 15, which moves an end by about 0.06.
	src := rand.New(rand.NewPCG(5, 6))
	x := draws(distuv.Uniform{Min: 2, Max: 8, Src: src}, 3000)
	for i := range x {
		x[i] = math.Max(1, math.Round(x[i]))
	}
	d, err := Counts(x, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.Family != Uniform || math.Abs(d.Min-2) > 0.25 || math.Abs(d.Max-8) > 0.25 {
		t.Errorf("fitted %v, want uniform [2, 8)", d)
	}
	if c, _ := Counts([]float64{3, 3, 3}, 1); c.Family != Constant || c.Value != 3 {
		t.Errorf("equal counts: %v, want constant 3", c)
	}
}

// TestWilson checks the interval against its formula at a worked value: 10 of 100 gives
// [0.0552, 0.1744] (z = 1.95996).
func TestWilson(t *testing.T) {
	p := Wilson(10, 100)
	if math.Abs(p.Lo-0.05523) > 1e-4 || math.Abs(p.Hi-0.17437) > 1e-4 {
		t.Errorf("Wilson(10, 100) = [%v, %v], want [0.0552, 0.1744]", p.Lo, p.Hi)
	}
	if z := Wilson(0, 50); z.Lo != 0 || z.Hi <= 0 {
		t.Errorf("Wilson(0, 50) = %+v, want [0, > 0]", z)
	}
}

// TestArrivalsPiecewise: 600 arrivals at 300/h for an hour then 1200 at 1200/h: the split
// is found near 1h; a constant 600/h gives one rate (the test's false-change probability
// is below 0.001 by its Bonferroni bound, and the seed is fixed).
func TestArrivalsPiecewise(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var ts []float64
	now := 0.0
	for now < 3600 {
		now += r.ExpFloat64() * 12
		ts = append(ts, now)
	}
	for now < 7200 {
		now += r.ExpFloat64() * 3
		ts = append(ts, now)
	}
	f := FitArrivals(ts)
	if len(f.Piecewise) != 2 || math.Abs(f.Piecewise[0].To-3600) > 300 {
		t.Fatalf("pieces %+v, want two split near 1h", f.Piecewise)
	}
	if math.Abs(f.Piecewise[1].PerSec*3600/1200-1) > 0.15 {
		t.Errorf("second rate %.1f/h, want 1200/h", f.Piecewise[1].PerSec*3600)
	}
	var flat []float64
	now = 0
	for i := 0; i < 1500; i++ {
		now += r.ExpFloat64() * 6
		flat = append(flat, now)
	}
	if f := FitArrivals(flat); len(f.Piecewise) != 0 || math.Abs(f.Rate.PerSec*3600/600-1) > 0.15 {
		t.Errorf("constant rate: %+v, want one rate near 600/h", f)
	}
}

// synthetic builds observations from known parameters without the simulator: 2000 roots
// at 500/h, a tool with lognormal latency (median 3s), 4% fast failures, a timeout of 1m,
// and an outage from 1h for 10m.
func synthetic() Observed {
	r := rand.New(rand.NewPCG(9, 10))
	lat := distuv.LogNormal{Mu: math.Log(3), Sigma: 0.6, Src: r}
	obs := Observed{Name: "synthetic"}
	now := 0.0
	tool := ToolObs{Name: "search"}
	for i := 0; i < 2000; i++ {
		now += r.ExpFloat64() * 7.2
		obs.Arrivals = append(obs.Arrivals, now)
		obs.Steps = append(obs.Steps, 3)
		obs.Turns = append(obs.Turns, Turn{Index: 0, Seconds: 1, Tokens: 1000})
		a := Attempt{Start: now, Attempt: 1, Op: string(rune('a' + i%26)), Status: StatusOK}
		switch {
		case now >= 3600 && now < 4200:
			a.Status, a.Class = StatusError, "transient"
		case r.Float64() < 0.04:
			a.Status, a.Class = StatusError, "transient"
		default:
			a.Seconds = lat.Rand()
			a.Wall = a.Seconds
		}
		tool.Attempts = append(tool.Attempts, a)
	}
	obs.Tools = []ToolObs{tool}
	obs.Incidents = []Incident{{Tool: "search", Start: 3600, End: 4260}}
	return obs
}

// TestFitWritesAScenarioThatLoads: the fitted file loads with the scenario decoder (which
// validates), and holds the parameters it was made from.
func TestFitWritesAScenarioThatLoads(t *testing.T) {
	s, err := Fit(synthetic())
	if err != nil {
		t.Fatal(err)
	}
	s.Name = "synthetic-fit"
	var b bytes.Buffer
	if err := s.WriteYAML(&b, Source{Run: "synthetic"}); err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse("fitted.yaml", b.Bytes(), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(sc.Faults) != 2 || sc.Faults[0].Kind != "outage" {
		t.Fatalf("faults %+v, want an outage and a transient fault\n%s", sc.Faults, b.String())
	}
	at, dur := sc.Faults[0].At.Seconds(), sc.Faults[0].For.Seconds()
	if math.Abs(at-3600) > 120 || math.Abs(dur-600) > 120 {
		t.Errorf("outage at %vs for %vs, want 3600s for 600s", at, dur)
	}
	tr := s.Tools[0].Transient
	if tr.Lo > 0.04 || tr.Hi < 0.04 {
		t.Errorf("transient %+v: its interval misses 0.04", tr)
	}
	if m := s.Tools[0].Latency.MedianOf(); math.Abs(m/3-1) > 0.15 {
		t.Errorf("latency median %.3g, want 3s", m)
	}
	if got := sc.Workload.Arrival.Rate.PerSecond * 3600; math.Abs(got/500-1) > 0.15 {
		t.Errorf("arrival %.1f/h, want 500/h", got)
	}
	if !slices.ContainsFunc(sc.Tools, func(t scenarios.Tool) bool { return t.Name == "search" }) {
		t.Errorf("no tool search: %+v", sc.Tools)
	}
}

// TestBackoff: full-jitter backoffs of initial 2s and multiplier 2: 400 first and 100
// second ones. The largest of k uniform draws on [0, D] falls below D(1 − ε) with
// probability (1 − ε)^k: for k = 100 and ε = 0.07 that is 7·10^-4, so D_2 is within 7% and
// the multiplier within about 0.15 (D_1 is within 2%: (0.98)^400 = 3·10^-4).
func TestBackoff(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var gaps []gap
	for i := 0; i < 400; i++ {
		gaps = append(gaps, gap{1, 2 * r.Float64()})
	}
	for i := 0; i < 100; i++ {
		gaps = append(gaps, gap{2, 4 * r.Float64()})
	}
	d, m, hi := backoff(gaps, "full")
	if math.Abs(d/2-1) > 0.02 || math.Abs(m-2) > 0.15 || hi < d {
		t.Errorf("backoff: initial %.4g (hi %.4g), multiplier %.3g; want 2 and 2", d, hi, m)
	}
	d, m, _ = backoff([]gap{{1, 1}, {1, 1}, {2, 3}}, "none")
	if d != 1 || m != 3 {
		t.Errorf("no jitter: initial %v multiplier %v, want 1 and 3", d, m)
	}
}

// TestFitWritesPiecewiseArrivals: arrivals at 300/h for an hour, then 1200/h, give a
// piecewise arrival in the file, which loads; each rate within 15% (the first stretch's
// 300 arrivals have a relative standard error of 5.8%, the second's 1200 of 2.9%).
func TestFitWritesPiecewiseArrivals(t *testing.T) {
	obs := synthetic()
	r := rand.New(rand.NewPCG(13, 14))
	obs.Arrivals = nil
	for now := 0.0; now < 7200; {
		gap := 12.0
		if now >= 3600 {
			gap = 3
		}
		now += r.ExpFloat64() * gap
		obs.Arrivals = append(obs.Arrivals, now)
	}
	s, err := Fit(obs)
	if err != nil {
		t.Fatal(err)
	}
	s.Name = "piecewise-fit"
	var b bytes.Buffer
	if err := s.WriteYAML(&b, Source{Run: "synthetic"}); err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse("fitted.yaml", b.Bytes(), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	a := sc.Workload.Arrival
	if a.Kind != scenarios.ArrivalPiecewise || len(a.Pieces) != 2 {
		t.Fatalf("arrival %+v, want two stretches\n%s", a, b.String())
	}
	if got := a.Pieces[0].Rate.PerSecond * 3600; math.Abs(got/300-1) > 0.15 {
		t.Errorf("first stretch %.1f/h, want 300/h", got)
	}
	if got := a.Pieces[1].Rate.PerSecond * 3600; math.Abs(got/1200-1) > 0.15 {
		t.Errorf("second stretch %.1f/h, want 1200/h", got)
	}
	if d := a.Pieces[0].For.Seconds() - 3600; math.Abs(d) > 600 {
		t.Errorf("first stretch lasts %v, want about 1h", a.Pieces[0].For)
	}
}
