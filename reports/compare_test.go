//go:build duckdb_arrow

package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/metric"
)

func normals(r *rand.Rand, n int, mean, sd float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = mean + sd*r.NormFloat64()
	}
	return x
}

// With few values the widened interval must still cover the true mean about as often as
// its level says. For n=5 normal values the plain percentile bootstrap behaves at best like
// a z interval on the plug-in variance, coverage P(|t4| < 1.96·sqrt(5/4)) ≈ 0.91, and in
// practice (the resampled means of 5 values are lumpy) about 0.86; the widened one matches
// Student's t and covers 95%. Over 400 trials the observed coverage has standard deviation
// sqrt(.95·.05/400) ≈ 0.011, so 0.92 sits three deviations below 0.95 and above what the
// plain interval reaches: the test fails if the widening is lost, and does not flake.
func TestMeanCICoverageWithFewSeeds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const trials, n = 400, 5
	covered := 0
	for i := range trials {
		x := normals(r, n, 10, 2)
		_, lo, hi := MeanCI(x, 0.95, 2000, uint64(i))
		if lo <= 10 && 10 <= hi {
			covered++
		}
	}
	if got := float64(covered) / trials; got < 0.92 {
		t.Fatalf("coverage %.3f of the 95%% interval with n=%d, want about 0.95 (>= 0.92)", got, n)
	}
}

func TestMeanCISpecialCases(t *testing.T) {
	m, lo, hi := MeanCI(nil, 0.95, 100, 1)
	if !math.IsNaN(m) || !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("no values: got %v [%v, %v], want NaNs", m, lo, hi)
	}
	m, lo, hi = MeanCI([]float64{3}, 0.95, 100, 1)
	if m != 3 || !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("one value: got %v [%v, %v], want 3 and no interval", m, lo, hi)
	}
	m, lo, hi = MeanCI([]float64{2, 2, 2}, 0.95, 100, 1)
	if m != 2 || lo != 2 || hi != 2 {
		t.Errorf("constant values: got %v [%v, %v], want 2 [2, 2]", m, lo, hi)
	}
}

// Under the null hypothesis (both sides drawn from one distribution) the Bonferroni family of
// the table's metrics (24 today) must mark some metric in at most about 5% of comparisons. 200 comparisons give
// a standard deviation of sqrt(.05·.95/200) ≈ 0.015 around 0.05, so 0.11 is four deviations
// above. Without the correction (24 intervals at 95%) about 1 − 0.95^24 ≈ 71% of comparisons
// would mark something, and with the correction but the plain percentile bootstrap (whose far
// tails are much too short with 5 values) about half: either loss fails the test.
func TestCompareFamilyWiseErrorUnderNull(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	metrics := metric.Compared()
	// The family is the metric table without its counts; with 20 or more metrics an
	// uncorrected 95% interval would mark something in most trials (1 − 0.95^20 ≈ 0.64).
	fam := len(metrics)
	if fam < 20 {
		t.Fatalf("metric.Compared has %d names, want the table's 20 or more: %v", fam, metrics)
	}
	const trials, n = 200, 5
	marked := 0
	for i := range trials {
		a := Sample{Label: "a", Values: map[string][]float64{}}
		b := Sample{Label: "b", Values: map[string][]float64{}}
		for _, m := range metrics {
			a.Values[m] = normals(r, n, 1, 0.1)
			b.Values[m] = normals(r, n, 1, 0.1)
		}
		c := Compare(a, b, CompareOptions{Resamples: 4000, Seed: uint64(i)})
		if c.M != fam || math.Abs(c.Each-(1-0.05/float64(fam))) > 1e-12 {
			t.Fatalf("family of %d at %v, want %d at %v", c.M, c.Each, fam, 1-0.05/float64(fam))
		}
		if len(c.Differing()) > 0 {
			marked++
		}
	}
	if got := float64(marked) / trials; got > 0.11 {
		t.Fatalf("%.3f of null comparisons marked a metric, want at most about 0.05 (<= 0.11)", got)
	}
}

// A true difference of 5 standard deviations between sides of 5 values each is far beyond
// the Bonferroni interval's half-width (about t(8, 0.9984)·sqrt(2/5) ≈ 2.6 deviations), so
// it is marked, and the side whose value is better per metric.Better is named (unless that
// side is worse on a metric that ranks above).
func TestCompareMarksARealDifference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	a := Sample{Label: "a", Values: map[string][]float64{
		"completion_rate":     normals(r, 5, 0.5, 0.02),
		"retry_amplification": normals(r, 5, 1.5, 0.05),
	}}
	b := Sample{Label: "b", Values: map[string][]float64{
		"completion_rate":     normals(r, 5, 0.6, 0.02),
		"retry_amplification": normals(r, 5, 1.75, 0.05),
	}}
	c := Compare(a, b, CompareOptions{Metrics: []string{"completion_rate", "retry_amplification"}})
	got := map[string]MetricDiff{}
	for _, d := range c.Metrics {
		got[d.Metric] = d
	}
	if d := got["completion_rate"]; !d.Significant() || d.Better != "b" || d.Lo <= 0 {
		t.Errorf("completion_rate: %+v, want marked with B better", d)
	}
	// A sends fewer attempts per operation, but completes less: its gain on a cost metric
	// is traded for completion, which ranks above it, and not called better.
	if d := got["retry_amplification"]; !d.Significant() || d.Better != "" || d.TradedSide != "a" || d.TradedFor != "completion_rate" || d.Lo <= 0 {
		t.Errorf("retry_amplification: %+v, want marked, A's gain traded for completion_rate (lower is better)", d)
	}
}

func TestCompareVerdicts(t *testing.T) {
	nan := math.NaN()
	a := Sample{Label: "a", Values: map[string][]float64{
		"duplicate_side_effects": {0, 0, 0},
		"p95_recovery_time":      {nan, nan, nan},
		"completion_rate":        {0.9},
		"events":                 {7, 7, 7},
	}}
	b := Sample{Label: "b", Values: map[string][]float64{
		"duplicate_side_effects": {0, 0, 0, 0},
		"p95_recovery_time":      {3, 4, 5},
		"completion_rate":        {0.8, 0.85},
		"events":                 {9, 9, 9},
	}}
	c := Compare(a, b, CompareOptions{Metrics: []string{"duplicate_side_effects", "p95_recovery_time", "completion_rate", "events"}})
	want := map[string]string{
		"duplicate_side_effects": VerdictNoDifference,
		"p95_recovery_time":      VerdictNotMeasured,
		"completion_rate":        VerdictTooFewSeeds,
		"events":                 VerdictDiffers, // constant on each side, but not equal
	}
	for _, d := range c.Metrics {
		if d.Verdict != want[d.Metric] {
			t.Errorf("%s: verdict %q, want %q", d.Metric, d.Verdict, want[d.Metric])
		}
	}
	if c.M != 3 {
		t.Errorf("family size %d, want 3 (metrics measured on both sides)", c.M)
	}
	var text, js bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Bonferroni over 3 metrics") || !strings.Contains(text.String(), "98.33%") {
		t.Errorf("text output does not state the correction:\n%s", text.String())
	}
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Correction string `json:"correction"`
		Metrics    []struct {
			Metric string   `json:"metric"`
			Lo     *float64 `json:"lo"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(js.Bytes(), &parsed); err != nil {
		t.Fatalf("JSON output does not parse: %v\n%s", err, js.String())
	}
	if parsed.Correction != "bonferroni" || parsed.Metrics[1].Lo != nil {
		t.Errorf("JSON: correction %q, undefined lo %v; want bonferroni and null", parsed.Correction, parsed.Metrics[1].Lo)
	}
}

// Same seeds on both sides: differences are taken seed by seed. A shift that is small next to
// the spread between seeds but identical for every seed is found when paired, and not when
// the sides are treated as independent.
func TestComparePairsBySeed(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6}
	base := []float64{0.50, 0.70, 0.55, 0.65, 0.60, 0.45}
	shifted := make([]float64, len(base))
	r := rand.New(rand.NewPCG(7, 8))
	for i, v := range base {
		shifted[i] = v + 0.02 + 0.002*r.NormFloat64()
	}
	a := Sample{Label: "a", Seeds: seeds, RunIDs: make([]string, 6), Values: map[string][]float64{"completion_rate": base}}
	// b lists the same seeds in another order; pairing must follow the seeds.
	bSeeds := []uint64{6, 5, 4, 3, 2, 1}
	bVals := make([]float64, 6)
	for i := range bVals {
		bVals[i] = shifted[5-i]
	}
	b := Sample{Label: "b", Seeds: bSeeds, RunIDs: make([]string, 6), Values: map[string][]float64{"completion_rate": bVals}}
	opt := CompareOptions{Metrics: []string{"completion_rate"}}
	paired := Compare(a, b, opt)
	if !paired.Paired || !paired.Metrics[0].Significant() {
		t.Errorf("paired: %+v (paired=%v), want a marked difference", paired.Metrics[0], paired.Paired)
	}
	opt.Unpaired = true
	indep := Compare(a, b, opt)
	if indep.Paired || indep.Metrics[0].Significant() {
		t.Errorf("unpaired: %+v, want no mark (the shift is small next to the seeds' spread)", indep.Metrics[0])
	}
	if math.Abs(paired.Metrics[0].Diff-indep.Metrics[0].Diff) > 1e-12 {
		t.Errorf("paired diff %v != unpaired diff %v: the mean difference must not depend on pairing", paired.Metrics[0].Diff, indep.Metrics[0].Diff)
	}
}

func TestPercent(t *testing.T) {
	for level, want := range map[float64]string{0.95: "95%", 1 - 0.05/16: "99.69%", 0.99: "99%", 1 - 0.05/3: "98.33%"} {
		if got := percent(level); got != want {
			t.Errorf("percent(%v) = %q, want %q", level, got, want)
		}
	}
}

func TestClamp(t *testing.T) {
	for _, tc := range []struct {
		metric         string
		lo, hi, wl, wh float64
	}{
		{"wasted_compute_ratio", -0.01, 0.2, 0, 0.2},
		{"completion_rate", 0.97, 1.02, 0.97, 1},
		{"retry_amplification", 0.98, 1.3, 1, 1.3},
		{"p95_recovery_time", -3, 40, 0, 40},
		{"makespan", 100, 5000, 100, 5000},
	} {
		lo, hi := Clamp(tc.metric, tc.lo, tc.hi)
		if lo != tc.wl || hi != tc.wh {
			t.Errorf("Clamp(%s, %v, %v) = %v, %v; want %v, %v", tc.metric, tc.lo, tc.hi, lo, hi, tc.wl, tc.wh)
		}
	}
}

// The Bonferroni figures the docs quote are the ones the code computes: every "(P% for N
// ...)" and "Bonferroni over N metrics: each interval at P%" in docs/ must have P =
// percent(1 − 0.05/N), and N no more than the default metrics.
func TestDocsQuoteTheBonferroniLevelsTheCodeComputes(t *testing.T) {
	quote := regexp.MustCompile(`(\d+\.\d+)% for (?:the |all )?(\d+)\b|Bonferroni over (\d+) metrics: each interval at (\d+\.\d+)%`)
	files, _ := filepath.Glob("../docs/*.md")
	found := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(b)), " ")
		for _, m := range quote.FindAllStringSubmatch(text, -1) {
			p, n := m[1], m[2]
			if m[3] != "" {
				p, n = m[4], m[3]
			}
			var count int
			fmt.Sscan(n, &count)
			found++
			if count > len(metric.Compared()) {
				t.Errorf("%s: %q: %d metrics, but only %d are compared by default", f, m[0], count, len(metric.Compared()))
			}
			if want := percent(1 - 0.05/float64(count)); want != p+"%" {
				t.Errorf("%s: %q: for %d metrics the code gives %s", f, m[0], count, want)
			}
		}
	}
	if found < 3 {
		t.Errorf("found %d Bonferroni figures in the docs; the pattern no longer matches them", found)
	}
}
