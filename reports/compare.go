//go:build duckdb_arrow

package reports

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/metric"
)

// FamilyConfidence is the confidence with which all intervals of one comparison hold
// together; CompareResamples is the bootstrap resample count of a comparison. Bonferroni
// intervals sit far in the tails (99.8% for two dozen metrics), so they need many more resamples
// than a single 95% interval to place their ends steadily.
const (
	FamilyConfidence = 0.95
	CompareResamples = 20000
)

// MeanCI returns the mean of values and a confidence interval of it at level conf: the
// percentile bootstrap interval of analysis.BootstrapCI, widened for small samples.
//
// Why widen: a percentile bootstrap of n values behaves like a z interval built on the
// plug-in variance (divided by n, not n−1), so with the 3 to 10 seeds people run it is too
// narrow, and a far-tail (Bonferroni) level makes that worse. Scaling both half-widths by
// sqrt(n/(n−1))·t(n−1)/z brings its width to that of Student's t interval while keeping the
// bootstrap's asymmetry (the idea of Hesterberg's "expanded percentile" interval).
//
// One value has no interval (lo and hi are NaN); values that are all equal give a zero-width
// interval; no values give NaNs.
func MeanCI(values []float64, conf float64, resamples int, seed uint64) (mean, lo, hi float64) {
	n := len(values)
	switch {
	case n == 0:
		return math.NaN(), math.NaN(), math.NaN()
	case n == 1:
		return values[0], math.NaN(), math.NaN()
	}
	mean, lo, hi = analysis.BootstrapCI(values, conf, resamples, seed)
	if stat.Variance(values, nil) == 0 {
		return mean, mean, mean
	}
	k := math.Sqrt(float64(n)/float64(n-1)) * tOverZ(conf, float64(n-1))
	return mean, mean - k*(mean-lo), mean + k*(hi-mean)
}

// DiffCI returns diff = mean(b) − mean(a) of two independent samples and a confidence
// interval of it at level conf: analysis.BootstrapDiff's percentile interval, widened like
// MeanCI's to the width of Welch's t interval (Welch–Satterthwaite degrees of freedom). With
// fewer than two values on a side there is no interval (NaN); when both sides are constant
// the interval has zero width.
func DiffCI(a, b []float64, conf float64, resamples int, seed uint64) (diff, lo, hi float64) {
	na, nb := float64(len(a)), float64(len(b))
	if na == 0 || nb == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	diff = stat.Mean(b, nil) - stat.Mean(a, nil)
	if na < 2 || nb < 2 {
		return diff, math.NaN(), math.NaN()
	}
	va, vb := stat.Variance(a, nil), stat.Variance(b, nil)
	if va == 0 && vb == 0 {
		return diff, diff, diff
	}
	diff, lo, hi = analysis.BootstrapDiff(a, b, conf, resamples, seed)
	ua, ub := va/na, vb/nb
	unbiased := ua + ub
	plugin := va*(na-1)/(na*na) + vb*(nb-1)/(nb*nb)
	df := unbiased * unbiased / (ua*ua/(na-1) + ub*ub/(nb-1))
	k := math.Sqrt(unbiased/plugin) * tOverZ(conf, df)
	return diff, diff - k*(diff-lo), diff + k*(hi-diff)
}

// MetricCI is the interval mayday prints for a metric across seeds (summaries, check,
// sweep): MeanCI at Confidence with Resamples, kept inside the metric's range by Clamp.
func MetricCI(metric string, values []float64, seed uint64) (mean, lo, hi float64) {
	mean, lo, hi = MeanCI(values, Confidence, Resamples, seed)
	lo, hi = Clamp(metric, lo, hi)
	return mean, lo, hi
}

// Clamp narrows an interval of a metric's mean to the values the metric can take (its
// range in the table of package metric).
func Clamp(name string, lo, hi float64) (float64, float64) { return metric.Clamp(name, lo, hi) }

// tOverZ is the ratio of Student's t quantile (df degrees of freedom) to the normal quantile
// at the two-sided level conf: how much wider a t interval is than a z interval.
func tOverZ(conf, df float64) float64 {
	p := (1 + conf) / 2
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
	return t / distuv.UnitNormal.Quantile(p)
}

// Sample is one side of a comparison: the runs of one configuration (a run folder's seeds,
// or one point of a sweep) and each metric's value per run.
type Sample struct {
	Label    string   `json:"label"` // what the user named: a folder, a file, a sweep point
	Scenario string   `json:"scenario"`
	RunIDs   []string `json:"run_ids"`
	Seeds    []uint64 `json:"seeds"`
	// Values holds, per metric, one value per run in RunIDs order; NaN where the metric is
	// undefined for that run (its denominator is zero).
	Values map[string][]float64 `json:"-"`
	// Currency is the currency of the money metrics ("" when unpriced), for text output.
	Currency string `json:"-"`
	// Unknown lists the metrics the side's trace cannot give, when its runs were imported
	// from traces (mayday import), with the reason; they read "not recorded".
	Unknown map[string]string `json:"unknown,omitempty"`
}

// CompareOptions tunes Compare; the zero value compares metric.Compared() at
// FamilyConfidence with CompareResamples resamples, paired by seed when possible.
type CompareOptions struct {
	Metrics   []string
	Family    float64 // family-wise confidence; 0 = FamilyConfidence
	Resamples int     // 0 = CompareResamples
	Seed      uint64  // bootstrap stream; results depend only on it and the data
	Unpaired  bool    // never pair runs by seed
}

// Verdicts of a metric in a comparison.
const (
	VerdictDiffers        = "differs"         // the interval excludes 0
	VerdictNotSignificant = "not significant" // the interval includes 0
	VerdictNoDifference   = "no difference"   // constant and equal in every run of both sides
	VerdictTooFewSeeds    = "too few seeds"   // fewer than two runs on a side: no interval
	VerdictNotMeasured    = "not measured"    // undefined on at least one side
	VerdictNotRecorded    = "not recorded"    // a side imported from traces that cannot give it
)

// MetricDiff is one metric of a comparison.
type MetricDiff struct {
	Metric  string  `json:"metric"`
	A       float64 `json:"a"` // mean over A's runs
	B       float64 `json:"b"`
	NA      int     `json:"n_a"`
	NB      int     `json:"n_b"`
	Diff    float64 `json:"diff"` // B − A
	Lo      float64 `json:"lo"`   // interval of Diff at Comparison.Each; NaN when none
	Hi      float64 `json:"hi"`
	Verdict string  `json:"verdict"`
	// Better is "a" or "b" when the metric differs and has a direction (metric.Better),
	// the side whose value is the improvement; "" otherwise, and "" when that side is
	// significantly worse on a metric of a higher rank (then TradedSide and TradedFor).
	Better string `json:"better,omitempty"`
	// NeverA and NeverB count the runs in which the metric reads "never" (a recovery that
	// never happened: metric.Metric.NeverUnless); such a run's value is ±Inf.
	NeverA int `json:"never_a,omitempty"`
	NeverB int `json:"never_b,omitempty"`
	// TradedSide improved on this metric only by being significantly worse on TradedFor,
	// a metric that ranks above it; Note says so in words ("B faster only because it
	// completes 22% less").
	TradedSide string `json:"traded_side,omitempty"`
	TradedFor  string `json:"traded_for,omitempty"`
	Note       string `json:"note,omitempty"`
}

// Significant reports whether the metric's interval excludes zero.
func (d MetricDiff) Significant() bool { return d.Verdict == VerdictDiffers }

// Comparison is the result of Compare.
type Comparison struct {
	A, B Sample
	// Paired is true when both sides ran the same seeds and differences were taken seed by
	// seed: both configurations then saw the same random draws (common random numbers), so
	// the comparison is far more sensitive.
	Paired    bool
	Family    float64 // all intervals hold together with this confidence
	Each      float64 // each interval's confidence: 1 − (1 − Family)/M (Bonferroni)
	M         int     // metrics measured on both sides: the family size
	Resamples int
	Metrics   []MetricDiff
	// Dominance is the verdict over the metrics with a direction (DominanceA, DominanceB,
	// DominanceTrade, DominanceNoDiff); Leader is the side better on the most important
	// metric that differs ("" when none does).
	Dominance string
	Leader    string
	// Held is a side better on no root outcome and worse on HeldOn (metric.Verdict.Held):
	// it never ranks ahead.
	Held   string
	HeldOn string
}

// Compare compares every metric of b against a: the difference of means B − A and its
// bootstrap interval. The intervals are Bonferroni-corrected, so the chance that any of the
// M intervals misses its true difference is at most 1 − Family.
func Compare(a, b Sample, opt CompareOptions) Comparison {
	if opt.Family == 0 {
		opt.Family = FamilyConfidence
	}
	if opt.Resamples == 0 {
		opt.Resamples = CompareResamples
	}
	if opt.Metrics == nil {
		opt.Metrics = metric.Compared()
	}
	c := Comparison{A: a, B: b, Family: opt.Family, Resamples: opt.Resamples}
	c.Paired = !opt.Unpaired && sameSeeds(a.Seeds, b.Seeds)
	for _, name := range opt.Metrics {
		// A metric that reads "never" on a side is measured there (its worst value).
		if len(definedValues(neverAware(name, a.Values[name], a.Values))) > 0 &&
			len(definedValues(neverAware(name, b.Values[name], b.Values))) > 0 {
			c.M++
		}
	}
	c.Each = opt.Family
	if c.M > 1 {
		c.Each = 1 - (1-opt.Family)/float64(c.M)
	}
	for i, name := range opt.Metrics {
		// Each metric gets its own stream so adding a metric does not move the others.
		av, bv := neverAware(name, a.Values[name], a.Values), neverAware(name, b.Values[name], b.Values)
		c.Metrics = append(c.Metrics, c.metric(name, av, bv, opt.Seed+uint64(i)))
	}
	c.applyTradeoffs()
	return c
}

func (c *Comparison) metric(name string, av, bv []float64, seed uint64) MetricDiff {
	xa, xb := definedValues(av), definedValues(bv)
	d := MetricDiff{Metric: name, A: math.NaN(), B: math.NaN(), NA: len(xa), NB: len(xb),
		Diff: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	if len(xa) > 0 {
		d.A = stat.Mean(xa, nil)
	}
	if len(xb) > 0 {
		d.B = stat.Mean(xb, nil)
	}
	switch {
	case len(xa) == 0 && c.A.unknown(name), len(xb) == 0 && c.B.unknown(name):
		d.Verdict = VerdictNotRecorded
		return d
	case len(xa) == 0 || len(xb) == 0:
		d.Verdict = VerdictNotMeasured
		return d
	case allEqual(xa) && allEqual(xb) && xa[0] == xb[0]:
		d.Diff, d.Lo, d.Hi = 0, 0, 0
		d.Verdict = VerdictNoDifference
		d.NeverA, d.NeverB = countInf(xa), countInf(xb)
		return d
	case countInf(xa)+countInf(xb) > 0:
		d.neverVerdict(xa, xb)
		return d
	}
	if c.Paired {
		diffs := pairedDiffs(c.A.Seeds, av, c.B.Seeds, bv)
		if len(diffs) > 0 && allEqual(diffs) && diffs[0] == 0 {
			// Every seed gave both sides the same value.
			d.Diff, d.Lo, d.Hi = 0, 0, 0
			d.Verdict = VerdictNoDifference
			return d
		}
		d.Diff, d.Lo, d.Hi = MeanCI(diffs, c.Each, c.Resamples, seed)
		if len(diffs) < 2 {
			d.Diff = d.B - d.A
		}
	} else {
		d.Diff, d.Lo, d.Hi = DiffCI(xa, xb, c.Each, c.Resamples, seed)
	}
	switch {
	case math.IsNaN(d.Lo):
		d.Verdict = VerdictTooFewSeeds
	case d.Lo > 0 || d.Hi < 0:
		d.Verdict = VerdictDiffers
		switch dir := metric.Better(name); {
		case dir == 0:
		case (d.Diff > 0) == (dir > 0):
			d.Better = "b"
		default:
			d.Better = "a"
		}
	default:
		d.Verdict = VerdictNotSignificant
	}
	return d
}

func definedValues(x []float64) []float64 {
	out := make([]float64, 0, len(x))
	for _, v := range x {
		if !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

func allEqual(x []float64) bool {
	for _, v := range x[1:] {
		if v != x[0] {
			return false
		}
	}
	return true
}

// sameSeeds reports whether both sides ran the same set of distinct seeds, at least two.
func sameSeeds(a, b []uint64) bool {
	if len(a) < 2 || len(a) != len(b) {
		return false
	}
	sa, sb := slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(sa, sb) && len(slices.Compact(sa)) == len(a)
}

// pairedDiffs returns b − a seed by seed, in a's order, skipping seeds undefined on a side.
func pairedDiffs(sa []uint64, a []float64, sb []uint64, b []float64) []float64 {
	var out []float64
	for i, s := range sa {
		j := slices.Index(sb, s)
		if j < 0 || i >= len(a) || j >= len(b) || math.IsNaN(a[i]) || math.IsNaN(b[j]) {
			continue
		}
		out = append(out, b[j]-a[i])
	}
	return out
}

// Method describes how the intervals were built, for the output's footnote and docs.
func (c Comparison) Method() string {
	pairing := "independent samples (Welch)"
	if c.Paired {
		pairing = "paired by seed (both sides ran the same seeds)"
	}
	return fmt.Sprintf("B − A with bootstrap intervals (%d resamples, widened for few seeds), %s; "+
		"Bonferroni over %d metrics: each interval at %s, so all hold together with %s confidence",
		c.Resamples, pairing, c.M, percent(c.Each), percent(c.Family))
}

// Differing returns the metrics whose interval excludes zero.
func (c Comparison) Differing() []MetricDiff {
	var out []MetricDiff
	for _, d := range c.Metrics {
		if d.Significant() {
			out = append(out, d)
		}
	}
	return out
}

// WriteText writes the comparison as a table for people; metrics whose interval excludes
// zero are marked with `*` and the side that is better.
func (c Comparison) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "A: %s\nB: %s\n", describeSample(c.A), describeSample(c.B))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "metric\tA\tB\tB − A\t%s interval\t\n", percent(c.Each))
	for _, d := range c.Metrics {
		iv := ""
		switch d.Verdict {
		case VerdictNotMeasured, VerdictNotRecorded, VerdictTooFewSeeds, VerdictNoDifference:
			iv = d.Verdict
		default:
			iv = fmt.Sprintf("[%s, %s]", c.signed(d.Metric, d.Lo), c.signed(d.Metric, d.Hi))
		}
		mark := ""
		if d.Significant() {
			mark = "*"
			switch {
			case d.Better != "":
				mark += " " + strings.ToUpper(d.Better) + " better"
			case d.Note != "":
				mark += " " + d.Note
			}
		}
		switch {
		case d.NeverA+d.NeverB == 0 || d.Verdict == VerdictNoDifference:
		case d.Verdict == VerdictNotSignificant:
			iv = fmt.Sprintf("never in %d of %d runs of A, %d of %d of B", d.NeverA, d.NA, d.NeverB, d.NB)
		case d.NeverB > 0:
			iv = "B never, A in every run"
		default:
			iv = "A never, B in every run"
		}
		diff := c.signed(d.Metric, d.Diff)
		if d.Verdict == VerdictNotMeasured || d.Verdict == VerdictNotRecorded || math.IsNaN(d.Diff) || math.IsInf(d.Diff, 0) {
			diff = "n/a"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.Metric, c.side(c.A, d.Metric, d.A), c.side(c.B, d.Metric, d.B), diff, iv, mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	n := len(c.Differing())
	fmt.Fprintf(w, "%s: * marks an interval that excludes 0.\n", nounCount(n, "metric differs", "metrics differ"))
	fmt.Fprintf(w, "Verdict: %s.\n", c.DominanceText())
	fmt.Fprintln(w, c.Method()+".")
	if c.A.Seeds != nil && (len(c.A.RunIDs) < 2 || len(c.B.RunIDs) < 2) {
		fmt.Fprintln(w, "Intervals need at least two seeds per side: run with --seeds 5 or more.")
	}
	return nil
}

func describeSample(s Sample) string {
	seeds := ""
	if len(s.Seeds) > 0 {
		seeds = fmt.Sprintf(", seeds %s", seedList(s.Seeds))
	}
	return fmt.Sprintf("%s (%s, %s%s)", s.Label, s.Scenario, nounCount(len(s.RunIDs), "run", "runs"), seeds)
}

func seedList(seeds []uint64) string {
	s := slices.Sorted(slices.Values(seeds))
	contiguous := true
	for i := 1; i < len(s); i++ {
		if s[i] != s[i-1]+1 {
			contiguous = false
		}
	}
	if contiguous && len(s) > 2 {
		return fmt.Sprintf("%d..%d", s[0], s[len(s)-1])
	}
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ",")
}

// WriteJSON writes the comparison for machines; undefined numbers are null.
func (c Comparison) WriteJSON(w io.Writer) error {
	type metric struct {
		Metric      string   `json:"metric"`
		A           *float64 `json:"a"`
		B           *float64 `json:"b"`
		NA          int      `json:"n_a"`
		NB          int      `json:"n_b"`
		Diff        *float64 `json:"diff"`
		Lo          *float64 `json:"lo"`
		Hi          *float64 `json:"hi"`
		Verdict     string   `json:"verdict"`
		Significant bool     `json:"significant"`
		Better      string   `json:"better,omitempty"`
		NeverA      int      `json:"never_a,omitempty"`
		NeverB      int      `json:"never_b,omitempty"`
		TradedSide  string   `json:"traded_side,omitempty"`
		TradedFor   string   `json:"traded_for,omitempty"`
		Note        string   `json:"note,omitempty"`
	}
	out := struct {
		A          Sample   `json:"a"`
		B          Sample   `json:"b"`
		Paired     bool     `json:"paired"`
		Family     float64  `json:"family_confidence"`
		Each       float64  `json:"interval_confidence"`
		M          int      `json:"metrics_compared"`
		Correction string   `json:"correction"`
		Resamples  int      `json:"resamples"`
		Method     string   `json:"method"`
		Dominance  string   `json:"dominance"`
		Leader     string   `json:"leader,omitempty"`
		Held       string   `json:"held,omitempty"`
		HeldOn     string   `json:"held_on,omitempty"`
		Verdict    string   `json:"verdict"`
		Metrics    []metric `json:"metrics"`
	}{A: c.A, B: c.B, Paired: c.Paired, Family: c.Family, Each: c.Each, M: c.M,
		Correction: "bonferroni", Resamples: c.Resamples, Method: c.Method(),
		Dominance: c.Dominance, Leader: c.Leader, Held: c.Held, HeldOn: c.HeldOn, Verdict: c.DominanceText()}
	for _, d := range c.Metrics {
		out.Metrics = append(out.Metrics, metric{
			Metric: d.Metric, A: jsonFloat(d.A), B: jsonFloat(d.B), NA: d.NA, NB: d.NB,
			Diff: jsonFloat(d.Diff), Lo: jsonFloat(d.Lo), Hi: jsonFloat(d.Hi), Verdict: d.Verdict,
			Significant: d.Significant(), Better: d.Better, NeverA: d.NeverA, NeverB: d.NeverB,
			TradedSide: d.TradedSide, TradedFor: d.TradedFor, Note: d.Note,
		})
	}
	return WriteJSON(w, out)
}

// num turns NaN and ±Inf into JSON null.
func jsonFloat(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// format prints a value with its unit, and money with the currency when both sides agree.
func (c Comparison) format(name string, v float64) string {
	cur := c.A.Currency
	if c.B.Currency != cur {
		cur = ""
	}
	return metric.FormatMoney(name, v, cur)
}

// side formats one side's value: "not recorded" when its trace cannot give the metric.
func (c Comparison) side(s Sample, name string, v float64) string {
	if math.IsNaN(v) && s.unknown(name) {
		return NotRecorded
	}
	return c.format(name, v)
}

// unknown says whether the sample's trace cannot give the metric.
func (s Sample) unknown(name string) bool {
	_, ok := s.Unknown[name]
	return ok
}

// signed formats a difference with its sign.
func (c Comparison) signed(name string, v float64) string {
	s := c.format(name, v)
	if v > 0 {
		return "+" + s
	}
	return s
}

// pct prints a confidence level as a percentage with the digits that matter (95%, 99.69%).
func percent(level float64) string {
	p := level * 100
	for prec := 0; prec < 6; prec++ {
		s := fmt.Sprintf("%.*f", prec, p)
		var back float64
		fmt.Sscan(s, &back)
		if math.Abs(back-p) < 0.005 {
			return s + "%"
		}
	}
	return fmt.Sprintf("%.4f%%", p)
}

func nounCount(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
