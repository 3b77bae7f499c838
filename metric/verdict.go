package metric

import (
	"math"
	"slices"
)

// Dominance verdicts of a comparison of two sides, A and B, over the metrics with a
// direction: one side is better on some metric and worse on none, each side is better on
// something, or nothing differs.
const (
	DominanceA      = "a dominates"
	DominanceB      = "b dominates"
	DominanceTrade  = "trade-off"
	DominanceNoDiff = "no significant difference"
)

// Outcomes is the ladder of what a root investigation can come to, read as cumulative
// shares of the roots, best first: completed in full and correct; completed in full;
// completed (reduced scope included); ended (completed or terminated, so 1 − unfinished).
// Each root has one outcome, from best to worst: complete and correct, complete, reduced
// scope, terminated, unfinished at the horizon. A side whose every root is no better off
// than on the other side has each of these shares no better, whatever it did with the
// failures: moving a terminated root into limbo lowers terminated_rate but raises
// unfinished_rate, which comes first.
var Outcomes = []string{"correct_completion_rate", "full_scope_completion_rate", "completion_rate", "unfinished_rate"}

// Priority orders the metrics with a direction for a verdict, smallest first: the outcome
// ladder (Outcomes, then the terminated share and counts, which follow from it), then
// correctness, recovery, cost and capacity (Metric.Rank). Metrics of one rank other than
// the outcomes share a priority. 0 for a metric that does not count in a verdict.
func Priority(name string) int {
	m, ok := Lookup(name)
	if !ok || m.Better == Neither || m.Rank == 0 {
		return 0
	}
	if m.Rank != RankOutcome {
		return 10 * m.Rank
	}
	switch name {
	case "correct_completion_rate":
		return 10
	case "full_scope_completion_rate":
		return 11
	case "completion_rate", "completed":
		return 12
	case "unfinished_rate":
		return 13
	}
	return 14 // terminated_rate, terminated, terminated_<reason>
}

// Effect is what a comparison found on one metric: the side significantly better on it
// ("a", "b", or "" when the difference is not significant or the metric has no direction),
// and each side's value (means, or a baseline and a run; NaN when undefined).
type Effect struct {
	Metric string
	Better string
	A, B   float64
}

// Verdict is the one ranking of two sides that compare, check --baseline and tune share.
type Verdict struct {
	Dominance string // DominanceA, DominanceB, DominanceTrade or DominanceNoDiff
	// Leader is the side that ranks ahead ("" when none does): the side better on the metric
	// of smallest Priority that differs, unless Held names it.
	Leader string
	// TradedFor holds, per effect, the index of the effect its better side paid for it with
	// (a metric of smaller Priority on which that side is significantly worse, or the
	// outcome of Held), -1 for none. A traded effect is not an improvement.
	TradedFor []int
	// Held is a side no better than the other on any outcome of Outcomes and worse (in its
	// values, significant or not) on HeldOn: it never ranks ahead and none of its effects
	// counts as an improvement, so moving failures into limbo or trading whole work for
	// cheaper work never reads as one. "" when neither side is held.
	Held   string
	HeldOn string
}

// Judge ranks two sides from their effects.
func Judge(effects []Effect) Verdict {
	v := Verdict{TradedFor: make([]int, len(effects))}
	var betterA, betterB int
	for i, e := range effects {
		v.TradedFor[i] = -1
		switch side(e) {
		case "a":
			betterA++
		case "b":
			betterB++
		}
	}
	// A side held back by its root outcomes trades every gain for the outcome it is worse
	// on; then, in priority order, a gain made while the side is significantly worse on a
	// metric of smaller priority is traded for the first such metric, whose own loss must
	// not be traded itself (a loss on terminated_rate paid for by fewer unfinished roots is
	// no loss).
	for _, s := range []string{"a", "b"} {
		if on := outcomesWorse(effects, s); on >= 0 {
			v.Held, v.HeldOn = s, effects[on].Metric
			for i, e := range effects {
				if side(e) == s {
					v.TradedFor[i] = on
				}
			}
			break // both sides cannot be held at once
		}
	}
	order := make([]int, len(effects))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return Priority(effects[i].Metric) - Priority(effects[j].Metric) })
	for _, i := range order {
		e := effects[i]
		s := side(e)
		if s == "" || v.TradedFor[i] >= 0 {
			continue
		}
		p := Priority(e.Metric)
		for _, j := range order {
			l := effects[j]
			if Priority(l.Metric) >= p {
				break
			}
			if side(l) == other(s) && v.TradedFor[j] < 0 {
				v.TradedFor[i] = j
				break
			}
		}
	}
	switch {
	case betterA == 0 && betterB == 0:
		v.Dominance = DominanceNoDiff
	case betterB == 0:
		v.Dominance, v.Leader = DominanceA, "a"
	case betterA == 0:
		v.Dominance, v.Leader = DominanceB, "b"
	default:
		v.Dominance = DominanceTrade
		top := math.MaxInt
		for _, e := range effects {
			if s := side(e); s != "" && Priority(e.Metric) < top {
				top, v.Leader = Priority(e.Metric), s
			}
		}
	}
	if v.Held != "" && v.Leader == v.Held {
		v.Dominance, v.Leader = DominanceTrade, other(v.Held)
	}
	return v
}

// side is the side an effect favours, "" for a metric that does not count in a verdict.
func side(e Effect) string {
	if Priority(e.Metric) == 0 || (e.Better != "a" && e.Better != "b") {
		return ""
	}
	return e.Better
}

func other(s string) string {
	if s == "a" {
		return "b"
	}
	return "a"
}

// outcomesWorse returns the index of the first outcome (in Outcomes order) on which side s
// is worse, when it is better on none; -1 otherwise. A difference within float noise of
// the values (a relative 1e-9) is none.
func outcomesWorse(effects []Effect, s string) int {
	worse := -1
	for _, name := range Outcomes {
		for i, e := range effects {
			if e.Metric != name || math.IsNaN(e.A) || math.IsNaN(e.B) {
				continue
			}
			gain := float64(Better(name)) * (e.B - e.A) // > 0: B better
			if s == "a" {
				gain = -gain
			}
			noise := 1e-9 * math.Max(1, math.Max(math.Abs(e.A), math.Abs(e.B)))
			switch {
			case gain > noise:
				return -1
			case gain < -noise && worse < 0:
				worse = i
			}
		}
	}
	return worse
}
