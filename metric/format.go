package metric

import (
	"fmt"
	"math"
	"time"
)

// Format prints a value of the metric called name for people, with its unit: seconds as a
// duration (17h34m48s, 4.25s), ratios and counts as numbers, tokens, compute and rates
// with their unit, and the worst value of a metric that can read "never" (±Inf) as never.
// Money prints as a bare number; FormatMoney adds the currency. JSON
// output never goes through here: it keeps the raw numbers.
func Format(name string, v float64) string { return FormatMoney(name, v, "") }

// FormatMoney is Format with the currency a money metric is in ("" when unknown).
func FormatMoney(name string, v float64, currency string) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	m, _ := Lookup(name)
	if math.IsInf(v, 0) && m.NeverUnless != "" {
		return "never"
	}
	switch m.Unit {
	case Seconds:
		return Duration(v)
	case Tokens:
		return number(v) + " tokens"
	case ComputeSeconds:
		return number(v) + " cu·s"
	case PerHour:
		return number(v) + "/h"
	case Money:
		if currency != "" {
			return number(v) + " " + currency
		}
	}
	return number(v)
}

// Duration prints seconds of simulated time the way Go prints a duration: whole seconds
// from a minute up (17h34m48s, the fraction dropped), milliseconds below (4.25s, 350ms).
func Duration(sec float64) string {
	if math.IsNaN(sec) {
		return "n/a"
	}
	if math.IsInf(sec, 0) || math.Abs(sec) > float64(math.MaxInt64/int64(time.Second)) {
		return number(sec) + "s"
	}
	d := time.Duration(sec * float64(time.Second))
	if d >= time.Minute || d <= -time.Minute {
		return d.Truncate(time.Second).String()
	}
	return d.Round(time.Millisecond).String()
}

// number prints counts as integers, large values with one decimal, the rest with four.
func number(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.4f", v)
	}
}
