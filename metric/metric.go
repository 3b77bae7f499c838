package metric

import (
	"math"
	"strings"
)

// Unit is what a metric's value measures; it decides how text output prints it.
type Unit int

const (
	Ratio          Unit = iota // a rate, ratio or share of two counts; printed as is
	Count                      // a whole number of things
	Factor                     // a ratio that can exceed 1 (attempts per operation)
	Seconds                    // seconds of simulated time; printed as a duration
	Tokens                     // tokens per completion
	ComputeSeconds             // compute-unit seconds
	PerHour                    // root investigations per hour
	Money                      // an amount in the scenario's currency
)

// Direction says which way a metric improves under a better recovery policy.
type Direction int

const (
	// Neither: the metric describes the scenario rather than the policy.
	Neither Direction = 0
	Higher  Direction = +1
	Lower   Direction = -1
)

// Metric is one row of the table.
type Metric struct {
	Name   string // column of the metrics view, key in JSON, expect and tolerances
	Unit   Unit
	Better Direction
	// Min and Max bound the values the metric can take (Max is +Inf when unbounded); an
	// interval of its mean is clamped to them.
	Min, Max float64
	// Count marks the counts behind the rates (started, completed, terminated): reported
	// everywhere but not compared or gated by default.
	Count bool
	// Rank orders what a policy must get right first, for verdicts that see trade-offs:
	// the outcome of each root (1: correct complete work first, see Outcomes), correctness
	// (2), recovery (3), cost (4), capacity (5); 0 for a metric without a direction. A
	// policy is not called better on a metric when it is significantly worse on one that
	// ranks before it (Priority, Judge).
	Rank int
	// NeverUnless names a companion metric: when the companion is defined for a run and this
	// metric is not, this one reads "never" (the worst value), not "not measured". The
	// recovery times are NULL both without episodes and when too few episodes ever recover;
	// episode_recovery_rate is defined only in the second case.
	NeverUnless string
	Help        string
}

var inf = math.Inf(1)

// All is the table, in the order every output lists the metrics: the metrics of
// docs/metrics.md, then the counts behind the rates.
var All = []Metric{
	{Name: "completion_rate", Unit: Ratio, Better: Higher, Max: 1, Rank: RankOutcome, Help: "completed root investigations / started"},
	{Name: "correct_completion_rate", Unit: Ratio, Better: Higher, Max: 1, Rank: RankOutcome, Help: "completed in full with a truly valid result, the whole tree too / started (a reduced-scope finish is not a correct one)"},
	{Name: "validation_pass_rate", Unit: Ratio, Better: Higher, Max: 1, Rank: RankCorrectness, Help: "completed results that pass independent validation / completed"},
	{Name: "retry_amplification", Unit: Factor, Better: Lower, Min: 1, Max: inf, Rank: RankCost, Help: "tool attempts sent / logical tool operations"},
	{Name: "duplicate_side_effects", Unit: Count, Better: Lower, Max: inf, Rank: RankCorrectness, Help: "executions beyond the first of one operation at tools with side effects"},
	{Name: "discarded_results", Unit: Count, Better: Lower, Max: inf, Rank: RankCost, Help: "successful executions whose result never reached the investigation"},
	{Name: "median_recovery_time", Unit: Seconds, Better: Lower, Max: inf, Rank: RankRecovery, NeverUnless: "episode_recovery_rate", Help: "time by which half of the recovery episodes had recovered (never-recovered ones never do); never when fewer than half recover"},
	{Name: "p95_recovery_time", Unit: Seconds, Better: Lower, Max: inf, Rank: RankRecovery, NeverUnless: "episode_recovery_rate", Help: "time by which 95% of the recovery episodes had recovered; never when fewer than 95% recover"},
	{Name: "episode_recovery_rate", Unit: Ratio, Better: Higher, Max: 1, Rank: RankRecovery, Help: "recovery episodes that recovered (a valid result for the step) / episodes"},
	{Name: "goodput_recovery_time", Unit: Seconds, Better: Lower, Max: inf, Rank: RankRecovery, NeverUnless: "goodput_recovered", Help: "time from the last fault window's end until valid results per minute are back to 90% of their pre-fault level for 5 minutes; never when they did not come back, n/a without a fault window"},
	{Name: "goodput_recovered", Unit: Ratio, Better: Higher, Max: 1, Rank: RankRecovery, Help: "1 when goodput came back after the last fault window, 0 when it never did while arrivals continued; n/a without a fault window (over seeds: the share of seeds it came back in)"},
	{Name: "full_scope_completion_rate", Unit: Ratio, Better: Higher, Max: 1, Rank: RankOutcome, Help: "completed at full scope / started (a reduced-scope finish is not a full completion)"},
	{Name: "human_intervention_rate", Unit: Ratio, Better: Lower, Max: 1, Rank: RankCost, Help: "root investigations with an escalation / started"},
	{Name: "terminated_rate", Unit: Ratio, Better: Lower, Max: 1, Rank: RankOutcome, Help: "terminated / started"},
	{Name: "unfinished_rate", Unit: Ratio, Better: Lower, Max: 1, Rank: RankOutcome, Help: "root investigations neither completed nor terminated at the horizon (running, parked, waiting for a human) / started"},
	{Name: "tokens_per_completion", Unit: Tokens, Better: Lower, Max: inf, Rank: RankCost, Help: "tokens of every investigation / completed"},
	{Name: "compute_per_completion", Unit: ComputeSeconds, Better: Lower, Max: inf, Rank: RankCost, Help: "compute-unit seconds of every execution / completed"},
	{Name: "wasted_compute_ratio", Unit: Ratio, Better: Lower, Max: 1, Rank: RankCost, Help: "compute on duplicates, discarded results and incomplete investigations / all compute"},
	{Name: "wasted_token_ratio", Unit: Ratio, Better: Lower, Max: 1, Rank: RankCost, Help: "tokens of discarded or repeated model turns and incomplete investigations / all tokens"},
	{Name: "correlated_failure_share", Unit: Ratio, Better: Neither, Max: 1, Help: "failed attempts sent during a tool's incidents / failed attempts"},
	{Name: "makespan", Unit: Seconds, Better: Lower, Max: inf, Rank: RankCapacity, Help: "simulated time from the first arrival to the last event"},
	{Name: "events", Unit: Count, Better: Neither, Max: inf, Help: "simulation events processed"},
	{Name: "median_pending_time", Unit: Seconds, Better: Lower, Max: inf, Rank: RankCapacity, Help: "median wait of a root investigation for a worker"},
	{Name: "median_subagent_pending_time", Unit: Seconds, Better: Lower, Max: inf, Rank: RankCapacity, Help: "median wait of a subagent for a worker"},
	{Name: "backlog_growth", Unit: PerHour, Better: Lower, Max: inf, Rank: RankCapacity, Help: "root arrivals minus resolutions per hour of the arrival window"},
	{Name: "peak_backlog", Unit: Count, Better: Lower, Max: inf, Rank: RankCapacity, Help: "most root investigations open at once"},
	{Name: "cost_per_completion", Unit: Money, Better: Lower, Max: inf, Rank: RankCost, Help: "money spent (prices) / completed, in the scenario's currency"},
	{Name: "wasted_cost_ratio", Unit: Ratio, Better: Lower, Max: 1, Rank: RankCost, Help: "money spent on wasted work (failed paid attempts included) / all money spent"},
	{Name: "started", Unit: Count, Better: Neither, Max: inf, Count: true, Help: "root investigations that arrived"},
	{Name: "completed", Unit: Count, Better: Higher, Max: inf, Count: true, Rank: RankOutcome, Help: "root investigations completed"},
	{Name: "terminated", Unit: Count, Better: Lower, Max: inf, Count: true, Rank: RankOutcome, Help: "root investigations terminated"},
}

// The ranks of Metric.Rank, most important first.
const (
	RankOutcome     = 1
	RankCorrectness = 2
	RankRecovery    = 3
	RankCost        = 4
	RankCapacity    = 5
)

// RankName names a rank for people ("completion", "correctness", ...).
func RankName(rank int) string {
	switch rank {
	case RankOutcome:
		return "outcome"
	case RankCorrectness:
		return "correctness"
	case RankRecovery:
		return "recovery"
	case RankCost:
		return "cost"
	case RankCapacity:
		return "capacity"
	}
	return ""
}

// ReasonPrefix names a per-reason termination count: "terminated_policy_violation" counts
// the root investigations terminated for policy_violation. These are not rows of All.
const ReasonPrefix = "terminated_"

var byName = func() map[string]int {
	idx := make(map[string]int, len(All))
	for i, m := range All {
		if _, dup := idx[m.Name]; dup {
			panic("metric: " + m.Name + " appears twice in All")
		}
		idx[m.Name] = i
	}
	return idx
}()

// Index returns the position of a metric of All, or -1.
func Index(name string) int {
	if i, ok := byName[name]; ok {
		return i
	}
	return -1
}

// Lookup returns the row of a metric: one of All, or a per-reason termination count
// (terminated_<reason>), which is a Count where lower is better.
func Lookup(name string) (Metric, bool) {
	if i, ok := byName[name]; ok {
		return All[i], true
	}
	if reason, ok := strings.CutPrefix(name, ReasonPrefix); ok && reason != "" {
		return Metric{Name: name, Unit: Count, Better: Lower, Max: inf, Count: true, Rank: RankOutcome,
			Help: "root investigations terminated for " + reason}, true
	}
	return Metric{}, false
}

// Known reports whether Lookup knows name.
func Known(name string) bool {
	_, ok := Lookup(name)
	return ok
}

// Names lists every metric of All in table order.
func Names() []string {
	out := make([]string, len(All))
	for i, m := range All {
		out[i] = m.Name
	}
	return out
}

// Compared lists the metrics a comparison or a baseline check covers by default: All
// without the counts behind the rates.
func Compared() []string {
	var out []string
	for _, m := range All {
		if !m.Count {
			out = append(out, m.Name)
		}
	}
	return out
}

// Better returns the direction of the metric called name; Neither for an unknown name.
func Better(name string) Direction {
	m, _ := Lookup(name)
	return m.Better
}

// IsTime reports whether a metric is measured in seconds of simulated time, so that an
// expectation on it may be written with a duration (`<= 5m`).
func IsTime(name string) bool {
	m, ok := Lookup(name)
	return ok && m.Unit == Seconds
}

// Clamp narrows an interval of a metric's mean to [Min, Max]. The true mean lies in that
// range, so cutting the interval there loses no coverage; it only removes the part that
// widening a symmetric interval pushed past a bound (a negative rate). An unknown metric is
// taken to be >= 0.
func Clamp(name string, lo, hi float64) (float64, float64) {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return lo, hi
	}
	m, ok := Lookup(name)
	if !ok {
		m = Metric{Max: inf}
	}
	lo = min(max(lo, m.Min), m.Max)
	hi = min(max(hi, m.Min), m.Max)
	return lo, hi
}
