//go:build duckdb_arrow

package reports

import (
	"fmt"
	"math"
	"strings"

	"github.com/mayday-sim/mayday/metric"
)

// Dominance verdicts of a comparison over the metrics with a direction: one side is better
// on some metric and worse on none, each side is better on something, or nothing differs.
const (
	DominanceA      = "a dominates"
	DominanceB      = "b dominates"
	DominanceTrade  = "trade-off"
	DominanceNoDiff = "no significant difference"
)

// never returns the worst value of a metric that reads "never" (metric.Metric.NeverUnless):
// +Inf where lower is better, −Inf where higher is better.
func never(name string) float64 {
	if metric.Better(name) == metric.Higher {
		return math.Inf(-1)
	}
	return math.Inf(1)
}

// neverAware replaces the undefined values of a metric that can read "never" by its worst
// value wherever the companion metric is defined for the run: the recovery times are NULL
// both without episodes (not measured) and when too few episodes ever recover (never).
func neverAware(name string, vals []float64, values map[string][]float64) []float64 {
	m, ok := metric.Lookup(name)
	if !ok || m.NeverUnless == "" {
		return vals
	}
	comp := values[m.NeverUnless]
	out := make([]float64, len(vals))
	for i, v := range vals {
		out[i] = v
		if math.IsNaN(v) && i < len(comp) && !math.IsNaN(comp[i]) {
			out[i] = never(name)
		}
	}
	return out
}

// neverValue is neverAware for one value with its companion's value.
func neverValue(name string, v, companion float64) float64 {
	m, ok := metric.Lookup(name)
	if ok && m.NeverUnless != "" && math.IsNaN(v) && !math.IsNaN(companion) {
		return never(name)
	}
	return v
}

func countInf(x []float64) int {
	n := 0
	for _, v := range x {
		if math.IsInf(v, 0) {
			n++
		}
	}
	return n
}

// neverVerdict decides a metric on which some run reads "never". Never is worse than any
// time, so a side that never recovers in any run against one that recovers in every run
// is worse, whatever the times; any other mix is not significant, and both never in every
// run is no difference.
func (d *MetricDiff) neverVerdict(xa, xb []float64) {
	d.NeverA, d.NeverB = countInf(xa), countInf(xb)
	switch {
	case d.NeverA == len(xa) && d.NeverB == len(xb):
		d.Verdict = VerdictNoDifference
	case d.NeverB == len(xb) && d.NeverA == 0:
		d.Verdict, d.Diff, d.Better = VerdictDiffers, never(d.Metric), "a"
	case d.NeverA == len(xa) && d.NeverB == 0:
		d.Verdict, d.Diff, d.Better = VerdictDiffers, -never(d.Metric), "b"
	default:
		d.Verdict = VerdictNotSignificant
	}
	if metric.Better(d.Metric) == metric.Neither {
		d.Better = ""
	}
}

// applyTradeoffs withdraws "better" from a metric on which a side improved while it is
// significantly worse on a metric that ranks above it (metric.Metric.Rank: completion,
// correctness, recovery, cost, capacity), names the metric it traded, and sets the
// dominance verdict.
func (c *Comparison) applyTradeoffs() {
	var betterA, betterB []string
	sides := make([]string, len(c.Metrics)) // before any is withdrawn
	for i, d := range c.Metrics {
		sides[i] = d.Better
		switch d.Better {
		case "a":
			betterA = append(betterA, d.Metric)
		case "b":
			betterB = append(betterB, d.Metric)
		}
	}
	for i := range c.Metrics {
		d := &c.Metrics[i]
		if d.Better == "" {
			continue
		}
		if lost := c.mostImportantLoss(sides, d.Better, rankOf(d.Metric)); lost != nil {
			d.TradedSide, d.TradedFor = d.Better, lost.Metric
			d.Note = tradeNote(d.Better, d.Metric, lost.Metric, lost.A, lost.B)
			d.Better = ""
		}
	}
	c.Dominance, c.Leader = dominance(betterA, betterB, c.Metrics)
}

// mostImportantLoss is the metric of the smallest rank below rank on which side is
// significantly worse (the other side is better by sides), or nil.
func (c *Comparison) mostImportantLoss(sides []string, side string, rank int) *MetricDiff {
	var best *MetricDiff
	for i := range c.Metrics {
		d := &c.Metrics[i]
		r := rankOf(d.Metric)
		if sides[i] == "" || sides[i] == side || r == 0 || r >= rank {
			continue
		}
		if best == nil || r < rankOf(best.Metric) {
			best = d
		}
	}
	return best
}

func rankOf(name string) int {
	m, _ := metric.Lookup(name)
	return m.Rank
}

// dominance is the verdict over the metrics that differ with a direction, and the side
// better on the most important of them ("" when nothing differs).
func dominance(betterA, betterB []string, diffs []MetricDiff) (verdict, leader string) {
	switch {
	case len(betterA) == 0 && len(betterB) == 0:
		return DominanceNoDiff, ""
	case len(betterB) == 0:
		return DominanceA, "a"
	case len(betterA) == 0:
		return DominanceB, "b"
	}
	top, side := math.MaxInt, ""
	for _, d := range diffs {
		r := rankOf(d.Metric)
		s := d.Better
		if s == "" {
			s = d.TradedSide
		}
		if s != "" && r > 0 && r < top {
			top, side = r, s
		}
	}
	return DominanceTrade, side
}

// DominanceText says the dominance verdict in a sentence.
func (c Comparison) DominanceText() string {
	var a, b []string
	for _, d := range c.Metrics {
		name := d.Metric
		if d.TradedFor != "" {
			name += " (traded for " + d.TradedFor + ")"
		}
		switch {
		case d.Better == "a" || d.TradedSide == "a":
			a = append(a, name)
		case d.Better == "b" || d.TradedSide == "b":
			b = append(b, name)
		}
	}
	switch c.Dominance {
	case DominanceA:
		return "A dominates: better on " + strings.Join(a, ", ") + ", worse on none"
	case DominanceB:
		return "B dominates: better on " + strings.Join(b, ", ") + ", worse on none"
	case DominanceTrade:
		lead := strings.ToUpper(c.Leader)
		return fmt.Sprintf("trade-off: A better on %s; B better on %s; %s ranks ahead (completion, then correctness, recovery, cost, capacity)",
			strings.Join(a, ", "), strings.Join(b, ", "), lead)
	}
	return "no significant difference on any metric with a direction"
}

// tradeNote says what a side's improvement on metric cost it, e.g. "B faster only because
// it completes 22% less".
func tradeNote(side, gained, lost string, a, b float64) string {
	return fmt.Sprintf("%s %s only because it %s", strings.ToUpper(side), gainWord(gained), lossPhrase(side, lost, a, b))
}

// gainWord names an improvement on a metric in a word: faster, cheaper, smaller, ...
func gainWord(name string) string {
	m, _ := metric.Lookup(name)
	switch {
	case m.Unit == metric.Seconds:
		return "faster"
	case m.Rank == metric.RankCost:
		return "cheaper"
	case m.Better == metric.Lower:
		return "lower"
	case m.Better == metric.Higher:
		return "higher"
	}
	return "better"
}

// lossPhrase says how much worse the trading side is on lost (values a and b of A and B).
func lossPhrase(side, lost string, a, b float64) string {
	mine, theirs := b, a
	if side == "a" {
		mine, theirs = a, b
	}
	if math.IsInf(mine, 0) {
		return "never recovers (" + lost + ")"
	}
	rel := ""
	if theirs != 0 && !math.IsInf(theirs, 0) {
		rel = fmt.Sprintf("%.0f%%", math.Abs(mine-theirs)/math.Abs(theirs)*100)
	}
	if rel == "" {
		return fmt.Sprintf("is worse on %s (%s against %s)", lost, metric.Format(lost, mine), metric.Format(lost, theirs))
	}
	switch lost {
	case "completion_rate", "completed":
		return "completes " + rel + " less"
	case "correct_completion_rate":
		return "completes " + rel + " less correctly"
	case "full_scope_completion_rate":
		return "completes " + rel + " less at full scope"
	case "terminated_rate", "terminated":
		return "terminates " + rel + " more"
	case "episode_recovery_rate":
		return "recovers " + rel + " fewer episodes"
	}
	return fmt.Sprintf("is %s worse on %s", rel, lost)
}
