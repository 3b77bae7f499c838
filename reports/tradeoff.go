//go:build duckdb_arrow

package reports

import (
	"fmt"
	"math"
	"strings"

	"github.com/mayday-sim/mayday/metric"
)

// Dominance verdicts of a comparison over the metrics with a direction (metric.Judge).
const (
	DominanceA      = metric.DominanceA
	DominanceB      = metric.DominanceB
	DominanceTrade  = metric.DominanceTrade
	DominanceNoDiff = metric.DominanceNoDiff
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

// applyTradeoffs ranks the two sides with metric.Judge, the verdict compare, check
// --baseline and tune share: it withdraws "better" from a metric on which a side improved
// while it is significantly worse on a metric that ranks before it (metric.Priority: the
// outcome of each root, then correctness, recovery, cost, capacity), or while it is no
// better on any root outcome and worse on one (metric.Verdict.Held); names what was traded
// and sets the dominance verdict and the leader.
func (c *Comparison) applyTradeoffs() {
	effects := make([]metric.Effect, len(c.Metrics))
	for i, d := range c.Metrics {
		effects[i] = metric.Effect{Metric: d.Metric, Better: d.Better, A: d.A, B: d.B}
	}
	v := metric.Judge(effects)
	for i := range c.Metrics {
		d := &c.Metrics[i]
		j := v.TradedFor[i]
		if d.Better == "" || j < 0 {
			continue
		}
		lost := c.Metrics[j]
		d.TradedSide, d.TradedFor = d.Better, lost.Metric
		d.Note = tradeNote(d.Better, d.Metric, lost.Metric, lost.A, lost.B)
		d.Better = ""
	}
	c.Dominance, c.Leader, c.Held, c.HeldOn = v.Dominance, v.Leader, v.Held, v.HeldOn
}

func rankOf(name string) int {
	m, _ := metric.Lookup(name)
	return m.Rank
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
	held := ""
	if c.Held != "" {
		held = fmt.Sprintf("; %s is better on no root outcome and worse on %s, so none of its gains counts", strings.ToUpper(c.Held), c.HeldOn)
	}
	switch c.Dominance {
	case DominanceA:
		return "A dominates: better on " + strings.Join(a, ", ") + ", worse on none" + held
	case DominanceB:
		return "B dominates: better on " + strings.Join(b, ", ") + ", worse on none" + held
	case DominanceTrade:
		lead := strings.ToUpper(c.Leader)
		return fmt.Sprintf("trade-off: A better on %s; B better on %s; %s ranks ahead (%s)%s",
			orNone(a), orNone(b), lead, RankingOrder, held)
	}
	return "no significant difference on any metric with a direction" + held
}

// RankingOrder says in words what a verdict looks at first (metric.Priority).
const RankingOrder = "root outcomes first: correct complete work, complete work, any completion, then ended over unfinished; then correctness, recovery, cost, capacity"

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "nothing"
	}
	return strings.Join(xs, ", ")
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
	case "unfinished_rate":
		return "leaves " + rel + " more roots unfinished"
	case "episode_recovery_rate":
		return "recovers " + rel + " fewer episodes"
	}
	return fmt.Sprintf("is %s worse on %s", rel, lost)
}
