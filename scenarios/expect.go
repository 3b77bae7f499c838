package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mayday-sim/mayday/metric"
)

// Metrics are the keys `expect` and `tolerances` accept: the metrics of the table in
// package metric, without the counts behind the rates.
var Metrics = metric.Compared()

// IsMetric reports whether m is one of Metrics.
func IsMetric(m string) bool { return contains(Metrics, m) }

const expectSyntax = `">= 0.95", "<= 1.5", "== 0", "> x", "< x" or "between A and B"`

// ParseExpectation parses the text of an `expect` entry for metric m. It returns a message
// (saying what would be valid) instead of an error so the caller can place it.
func ParseExpectation(m, text string) (Expectation, string) {
	e := Expectation{Metric: m, Text: text}
	bad := fmt.Sprintf("%q is not an expectation; want %s", text, expectSyntax)
	s := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(s, "between "); ok {
		a, b, ok := strings.Cut(rest, " and ")
		if !ok {
			return e, bad
		}
		lo, ok1 := expectValue(m, strings.TrimSpace(a))
		hi, ok2 := expectValue(m, strings.TrimSpace(b))
		if !ok1 || !ok2 {
			return e, bad
		}
		if lo > hi {
			return e, fmt.Sprintf("%q has its bounds reversed; want between A and B with A <= B", text)
		}
		e.Op, e.Value, e.Upper = "between", lo, hi
		return e, ""
	}
	for _, op := range []string{">=", "<=", "==", ">", "<"} {
		if rest, ok := strings.CutPrefix(s, op); ok {
			v, ok := expectValue(m, strings.TrimSpace(rest))
			if !ok {
				return e, bad
			}
			e.Op, e.Value = op, v
			return e, ""
		}
	}
	return e, bad
}

// expectValue reads a bound: a number, or for time metrics also a duration (in seconds).
func expectValue(m, s string) (float64, bool) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false
		}
		return v, true
	}
	if metric.IsTime(m) {
		if d, err := parseDuration(s); err == nil {
			return d.Seconds(), true
		}
	}
	return 0, false
}

// Holds reports whether the measured value x satisfies the expectation. A NaN (a metric
// with nothing to measure, such as a rate over zero investigations) satisfies nothing.
func (e Expectation) Holds(x float64) bool {
	switch e.Op {
	case ">=":
		return x >= e.Value
	case "<=":
		return x <= e.Value
	case "==":
		return x == e.Value
	case ">":
		return x > e.Value
	case "<":
		return x < e.Value
	case "between":
		return x >= e.Value && x <= e.Upper
	}
	return false
}

// String is the expectation as the user wrote it, after the metric's name, e.g.
// `makespan <= 5m`; without that text (an Expectation built in code), Canonical.
func (e Expectation) String() string {
	if t := strings.Join(strings.Fields(e.Text), " "); t != "" {
		return e.Metric + " " + t
	}
	return e.Canonical()
}

// Canonical is the expectation as `metric op value` with the bound as a plain number
// (seconds for a duration), e.g. `makespan <= 300`: the stable form machine output uses.
func (e Expectation) Canonical() string {
	if e.Op == "between" {
		return fmt.Sprintf("%s between %s and %s", e.Metric, fmtNumber(e.Value), fmtNumber(e.Upper))
	}
	return fmt.Sprintf("%s %s %s", e.Metric, e.Op, fmtNumber(e.Value))
}
