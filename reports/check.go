//go:build duckdb_arrow

package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/scenarios"
)

// DefaultTolerance is the relative change of a metric, in its worse direction, that a
// baseline comparison accepts unless the scenario's `tolerances` say otherwise.
const DefaultTolerance = 0.05

// CheckReport is the outcome of `mayday check`: per scenario, each expectation of its
// `expect` block and, against a baseline, each metric with a direction.
type CheckReport struct {
	Scenarios []ScenarioCheck `json:"scenarios"`
}

// ScenarioCheck is one scenario's part of a check.
type ScenarioCheck struct {
	Scenario     string              `json:"scenario"`
	Source       string              `json:"source"` // the file, or embedded:NAME
	Seed         uint64              `json:"seed"`   // the first seed
	Seeds        int                 `json:"seeds"`
	Digest       string              `json:"digest,omitempty"`
	Status       string              `json:"status,omitempty"`
	RunFolder    string              `json:"run_folder,omitempty"` // kept with --out
	WallSeconds  float64             `json:"wall_seconds"`
	Expectations []ExpectationResult `json:"expectations"`
	Baseline     *BaselineCheck      `json:"baseline,omitempty"`
	// Error is why the scenario could not be run; its expectations then count as errors.
	Error string `json:"error,omitempty"`
}

// ExpectationResult is one expectation evaluated on a run. With several seeds Value is the
// mean over seeds (the number compared) and Lo, Hi its confidence interval, which tells a
// regression (the whole interval fails) from seed noise (the interval reaches the passing
// side).
type ExpectationResult struct {
	Expectation scenarios.Expectation
	Value       float64 // NaN when the metric is undefined for the run
	N           int     // seeds the value is measured over
	Lo, Hi      float64 // Confidence interval of Value; NaN with a single seed
	Pass        bool
	Currency    string // of a money metric, from the summary; "" when unpriced
}

func (r ExpectationResult) format(v float64) string {
	return metric.FormatMoney(r.Expectation.Metric, v, r.Currency)
}

// Regression says, for a failed expectation with an interval, whether the whole interval is
// on the failing side (true: a regression rather than noise). False without an interval.
func (r ExpectationResult) Regression() bool {
	if r.Pass || math.IsNaN(r.Lo) {
		return false
	}
	e := r.Expectation
	// The interval misses the passing region entirely.
	switch e.Op {
	case ">=":
		return r.Hi < e.Value
	case ">":
		return r.Hi <= e.Value
	case "<=":
		return r.Lo > e.Value
	case "<":
		return r.Lo >= e.Value
	case "==":
		return r.Lo > e.Value || r.Hi < e.Value
	case "between":
		return r.Hi < e.Value || r.Lo > e.Upper
	}
	return false
}

// Message explains the result in one line: the expectation, the measured value, and with
// an interval whether a failure looks like a regression or like seed noise.
func (r ExpectationResult) Message() string {
	e := r.Expectation
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", e.String())
	if math.IsInf(r.Value, 0) {
		b.WriteString("never (" + neverWhy(e.Metric) + ")")
		return b.String()
	}
	if math.IsNaN(r.Value) {
		b.WriteString("not measured (" + undefinedWhy(e.Metric) + ")")
		return b.String()
	}
	fmt.Fprintf(&b, "measured %s", r.format(r.Value))
	if r.N > 1 {
		fmt.Fprintf(&b, " (mean of %d seeds", r.N)
		if !math.IsNaN(r.Lo) {
			fmt.Fprintf(&b, ", %s interval [%s, %s]", percent(Confidence), r.format(r.Lo), r.format(r.Hi))
		}
		b.WriteString(")")
	}
	switch {
	case r.Pass:
	case math.IsNaN(r.Lo):
		if r.N <= 1 {
			b.WriteString("; one seed: rerun with --seeds 5 to tell a regression from noise")
		}
	case r.Regression():
		b.WriteString("; the whole interval fails: a regression, not seed noise")
	default:
		b.WriteString("; the interval reaches the passing side: this may be seed noise, more seeds would tell")
	}
	return b.String()
}

// MarshalJSON writes the result with undefined numbers as null.
func (r ExpectationResult) MarshalJSON() ([]byte, error) {
	e := r.Expectation
	expect := strings.TrimPrefix(e.Canonical(), e.Metric+" ")
	return json.Marshal(struct {
		Metric     string   `json:"metric"`
		Expect     string   `json:"expect"`
		Line       int      `json:"line,omitempty"`
		Value      *float64 `json:"value"`
		N          int      `json:"n"`
		Lo         *float64 `json:"lo,omitempty"`
		Hi         *float64 `json:"hi,omitempty"`
		Pass       bool     `json:"pass"`
		Regression bool     `json:"regression,omitempty"`
		Message    string   `json:"message"`
	}{e.Metric, expect, e.Line, jsonFloat(r.Value), r.N, jsonFloat(r.Lo), jsonFloat(r.Hi), r.Pass, r.Regression(), r.Message()})
}

// CheckExpectations evaluates each expectation on the summary of a run: on the metric's
// value, or with several seeds its mean over the seeds, with an interval from MeanCI.
func CheckExpectations(sum Summary, exps []scenarios.Expectation) []ExpectationResult {
	out := make([]ExpectationResult, 0, len(exps))
	for _, e := range exps {
		r := ExpectationResult{Expectation: e, Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Currency: sum.Currency}
		vals := seedValues(sum, e.Metric)
		r.N = len(vals)
		switch {
		case countInf(vals) > 0:
			r.Value = never(e.Metric) // a seed that never recovered: so does the mean
		case len(vals) > 1:
			r.Value, r.Lo, r.Hi = MetricCI(e.Metric, vals, sum.Seed)
		case len(sum.Seeds) == 0:
			if v := summaryValue(sum, e.Metric); !math.IsNaN(v) {
				r.Value, r.N = v, 1
			}
		case len(vals) == 1:
			r.Value = vals[0]
		}
		r.Pass = e.Holds(r.Value)
		out = append(out, r)
	}
	return out
}

// seedValues is a metric's defined values over the seeds of a multi-seed summary, ±Inf for
// a seed in which it reads "never".
func seedValues(sum Summary, metric string) []float64 {
	var vals []float64
	for _, s := range sum.Seeds {
		if v := summaryValue(Summary{Metrics: s.Metrics}, metric); !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	return vals
}

// BaselineCheck compares a run with a stored summary.
type BaselineCheck struct {
	File          string   `json:"file"`
	Seed          uint64   `json:"seed"`
	Seeds         int      `json:"seeds"`
	ConfigChanged bool     `json:"config_changed,omitempty"`
	Missing       bool     `json:"missing,omitempty"` // no baseline recorded for this scenario
	Notes         []string `json:"notes,omitempty"`
	// Dominance compares the run (B) with its baseline (A) over the metrics, a change beyond
	// the tolerance counting as significant: "b dominates" (better on some, worse on none),
	// "a dominates", "trade-off" or "no significant difference".
	Dominance string `json:"dominance,omitempty"`
	// Leader is the side that ranks ahead ("b" the run, "a" the baseline, "" neither); Held
	// a side better on no root outcome and worse on HeldOn, which never ranks ahead
	// (metric.Verdict).
	Leader  string           `json:"leader,omitempty"`
	Held    string           `json:"held,omitempty"`
	HeldOn  string           `json:"held_on,omitempty"`
	Metrics []BaselineResult `json:"metrics,omitempty"`
}

// BaselineResult is one metric against its baseline value.
type BaselineResult struct {
	Metric    string
	Baseline  float64 // NaN when the baseline has no value
	Value     float64 // NaN when undefined now
	Direction int     // metric.Better
	// Allowed is how far the metric may move in its worse direction: an absolute tolerance
	// from the scenario's `tolerances`, else Relative × |Baseline|.
	Allowed  float64
	Absolute bool // Allowed came from the scenario's tolerances
	Relative float64
	Pass     bool
	Currency string // of a money metric, from the summary; "" when unpriced
	// TradedFor names a metric of a higher rank (metric.Metric.Rank) that got worse beyond
	// its tolerance while this one improved beyond it: the improvement is not called
	// better, Note says what it was traded for.
	TradedFor string
	Note      string
}

func (r BaselineResult) format(v float64) string {
	return metric.FormatMoney(r.Metric, v, r.Currency)
}

// Worse is how far the metric moved in its worse direction (negative when it improved);
// +Inf when it reads "never" now and did not in the baseline, 0 when it does in both.
func (r BaselineResult) Worse() float64 {
	if math.IsInf(r.Value, 0) && r.Value == r.Baseline {
		return 0
	}
	return float64(-r.Direction) * (r.Value - r.Baseline)
}

// Improved reports an improvement beyond the tolerance: significant in the sense of the
// baseline check, as a worsening beyond it is a failure.
func (r BaselineResult) Improved() bool {
	slack := 0.0
	if !math.IsInf(r.Baseline, 0) {
		slack = 1e-12 * math.Abs(r.Baseline)
	}
	return !math.IsNaN(r.Worse()) && -r.Worse() > r.Allowed+slack
}

// Message explains the result in one line.
func (r BaselineResult) Message() string {
	if math.IsNaN(r.Baseline) || math.IsNaN(r.Value) {
		return fmt.Sprintf("%s: %s now, %s in the baseline: not compared", r.Metric,
			r.format(r.Value), r.format(r.Baseline))
	}
	better := "higher is better"
	if r.Direction < 0 {
		better = "lower is better"
	}
	change := ""
	if r.Baseline != 0 {
		change = fmt.Sprintf(" (%+.1f%%)", (r.Value-r.Baseline)/math.Abs(r.Baseline)*100)
	}
	tol := fmt.Sprintf("tolerance %s", r.format(r.Allowed))
	if !r.Absolute {
		tol = fmt.Sprintf("tolerance %s = %g%% of the baseline", r.format(r.Allowed), r.Relative*100)
	}
	verdict := "within tolerance"
	switch {
	case !r.Pass:
		verdict = "worse beyond the tolerance"
	case r.Note != "":
		verdict = "not better: " + r.Note
	case r.Worse() < 0:
		verdict = "better"
	case r.Worse() == 0:
		verdict = "unchanged"
	}
	if math.IsInf(r.Value, 0) || math.IsInf(r.Baseline, 0) {
		change = ""
	}
	return fmt.Sprintf("%s: %s, baseline %s%s; %s, %s: %s", r.Metric, r.format(r.Value),
		r.format(r.Baseline), change, better, tol, verdict)
}

// MarshalJSON writes the result with undefined numbers as null.
func (r BaselineResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Metric    string   `json:"metric"`
		Baseline  *float64 `json:"baseline"`
		Value     *float64 `json:"value"`
		Direction int      `json:"direction"`
		Allowed   float64  `json:"allowed"`
		Absolute  bool     `json:"absolute_tolerance,omitempty"`
		Never     string   `json:"never,omitempty"`
		Pass      bool     `json:"pass"`
		Improved  bool     `json:"improved,omitempty"`
		TradedFor string   `json:"traded_for,omitempty"`
		Message   string   `json:"message"`
	}{r.Metric, jsonFloat(r.Baseline), jsonFloat(r.Value), r.Direction, r.Allowed, r.Absolute, r.never(),
		r.Pass, r.Improved() && r.TradedFor == "", r.TradedFor, r.Message()})
}

// never says which side reads "never" (the value is ±Inf): "value", "baseline", "both" or "".
func (r BaselineResult) never() string {
	v, b := math.IsInf(r.Value, 0), math.IsInf(r.Baseline, 0)
	switch {
	case v && b:
		return "both"
	case v:
		return "value"
	case b:
		return "baseline"
	}
	return ""
}

// CheckBaseline compares each metric with a direction (metric.Better) against the
// baseline summary: it fails when the metric moved in its worse direction by more than the
// tolerance, an absolute one from tols (the scenario's `tolerances`, in the metric's unit)
// or else relative × |baseline|. A baseline of zero with no absolute tolerance therefore
// allows no worsening at all, which is what a zero such as duplicate_side_effects means.
// Metrics undefined on either side are reported and pass.
func CheckBaseline(cur, base Summary, relative float64, tols []scenarios.Tolerance) []BaselineResult {
	var out []BaselineResult
	for _, name := range metric.Compared() {
		dir := int(metric.Better(name))
		if dir == 0 {
			continue
		}
		r := BaselineResult{Metric: name, Direction: dir, Relative: relative, Baseline: math.NaN(), Value: math.NaN(), Pass: true, Currency: cur.Currency}
		r.Baseline, r.Value = summaryValue(base, name), summaryValue(cur, name)
		if math.IsNaN(r.Baseline) && math.IsNaN(r.Value) {
			continue
		}
		r.Allowed = relative * math.Abs(r.Baseline)
		for _, t := range tols {
			if t.Metric == name {
				r.Allowed, r.Absolute = t.Value, true
			}
		}
		if math.IsInf(r.Baseline, 0) {
			r.Allowed = 0
		}
		if !math.IsNaN(r.Baseline) && !math.IsNaN(r.Value) {
			// A relative slack of 1e-12 absorbs float noise in means of identical runs.
			r.Pass = r.Worse() <= r.Allowed+1e-12*math.Abs(r.Baseline)
		}
		out = append(out, r)
	}
	baselineVerdict(out)
	return out
}

// summaryValue is a metric's value in a summary: NaN when undefined, and its worst value
// (±Inf) when it reads "never" (its companion metric is defined: metric.Metric.NeverUnless).
func summaryValue(s Summary, name string) float64 {
	v, ok := s.Metrics[name]
	if !ok {
		v = math.NaN()
	}
	m, _ := metric.Lookup(name)
	comp, ok := s.Metrics[m.NeverUnless]
	if !ok {
		comp = math.NaN()
	}
	return neverValue(name, v, comp)
}

// baselineVerdict ranks the run (B) against its baseline (A) with metric.Judge, the
// verdict compare and tune use: a change beyond the tolerance counts as significant either
// way. It withdraws "better" from a metric that improved while the run is worse beyond the
// tolerance on a metric that ranks before it, or while the run is better on no root outcome
// and worse on one, and names what was traded.
func baselineVerdict(rs []BaselineResult) metric.Verdict {
	v := metric.Judge(baselineEffects(rs))
	for i := range rs {
		r := &rs[i]
		j := v.TradedFor[i]
		if j < 0 || !r.Improved() {
			continue
		}
		lost := rs[j]
		r.TradedFor = lost.Metric
		r.Note = fmt.Sprintf("%s only because it %s", gainWord(r.Metric), lossPhrase("b", lost.Metric, lost.Baseline, lost.Value))
	}
	return v
}

// BaselineDominance is the dominance verdict of a baseline check: the run against its
// baseline ("b" is the run, "a" the baseline), by metric.Judge.
func BaselineDominance(rs []BaselineResult) string {
	return metric.Judge(baselineEffects(rs)).Dominance
}

func baselineEffects(rs []BaselineResult) []metric.Effect {
	effects := make([]metric.Effect, len(rs))
	for i, r := range rs {
		e := metric.Effect{Metric: r.Metric, A: r.Baseline, B: r.Value}
		switch {
		case !r.Pass:
			e.Better = "a"
		case r.Improved():
			e.Better = "b"
		}
		effects[i] = e
	}
	return effects
}

// NewBaselineCheck compares cur with base and notes what makes the comparison weaker: a
// scenario changed since the baseline, other seeds, another version.
func NewBaselineCheck(file string, cur, base Summary, relative float64, tols []scenarios.Tolerance) *BaselineCheck {
	bc := &BaselineCheck{File: file, Seed: base.Seed, Seeds: max(1, len(base.Seeds))}
	if base.Scenario != cur.Scenario {
		bc.Notes = append(bc.Notes, fmt.Sprintf("the baseline is of scenario %q, not %q", base.Scenario, cur.Scenario))
	}
	if base.ConfigHash != "" && base.ConfigHash != cur.ConfigHash {
		bc.ConfigChanged = true
		bc.Notes = append(bc.Notes, "the scenario changed since the baseline was recorded (config hash differs)")
	}
	curSeeds := max(1, len(cur.Seeds))
	if base.Seed != cur.Seed || bc.Seeds != curSeeds {
		bc.Notes = append(bc.Notes, fmt.Sprintf("the baseline ran %s from %d, this check %s from %d: differences include seed noise",
			nounCount(bc.Seeds, "seed", "seeds"), base.Seed, nounCount(curSeeds, "seed", "seeds"), cur.Seed))
	}
	bc.Metrics = CheckBaseline(cur, base, relative, tols)
	v := metric.Judge(baselineEffects(bc.Metrics))
	bc.Dominance, bc.Leader, bc.Held, bc.HeldOn = v.Dominance, v.Leader, v.Held, v.HeldOn
	return bc
}

// Counts returns the number of test cases, failures and errors (scenarios that could not
// run), as the JUnit file and the final line count them.
func (r CheckReport) Counts() (tests, failures, errors int) {
	for _, s := range r.Scenarios {
		cases := s.cases()
		tests += len(cases)
		for _, c := range cases {
			switch {
			case c.err != "":
				errors++
			case c.failure != "":
				failures++
			}
		}
	}
	return tests, failures, errors
}

// Failed reports whether any expectation or baseline metric failed, or a scenario did not run.
func (r CheckReport) Failed() bool {
	_, f, e := r.Counts()
	return f+e > 0
}

// checkCase is one JUnit test case: an expectation, a baseline metric or a bare run.
type checkCase struct {
	name, failure, err, detail string
	line                       int
	skipped                    string
}

func (s ScenarioCheck) cases() []checkCase {
	var cases []checkCase
	if s.Error != "" {
		msg := "the scenario did not run: " + s.Error
		if len(s.Expectations) == 0 {
			return []checkCase{{name: "run", err: msg}}
		}
		for _, e := range s.Expectations {
			cases = append(cases, checkCase{name: e.Expectation.String(), err: msg, line: e.Expectation.Line})
		}
		return cases
	}
	for _, e := range s.Expectations {
		c := checkCase{name: e.Expectation.String(), detail: e.Message(), line: e.Expectation.Line}
		if !e.Pass {
			c.failure = e.Message()
		}
		cases = append(cases, c)
	}
	if b := s.Baseline; b != nil {
		if b.Missing {
			cases = append(cases, checkCase{name: "baseline", skipped: "no baseline recorded for " + s.Scenario + "; run with --update-baseline"})
		}
		for _, m := range b.Metrics {
			c := checkCase{name: "baseline " + m.Metric, detail: m.Message()}
			if !m.Pass {
				c.failure = m.Message()
			}
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		cases = append(cases, checkCase{name: "run", detail: "the scenario ran; it has no expectations"})
	}
	return cases
}

// WriteText writes one line per expectation and baseline failure, and a closing count. With
// failuresOnly (--quiet), only what failed.
func (r CheckReport) WriteText(w io.Writer, failuresOnly bool) error {
	for _, s := range r.Scenarios {
		if s.Error != "" {
			fmt.Fprintf(w, "ERROR %s (%s): %s\n", s.Scenario, s.Source, s.Error)
			continue
		}
		if !failuresOnly {
			seeds := fmt.Sprintf("seed %d", s.Seed)
			if s.Seeds > 1 {
				seeds = fmt.Sprintf("seeds %d..%d", s.Seed, s.Seed+uint64(s.Seeds)-1)
			}
			fmt.Fprintf(w, "%s  (%s, %s, %.1fs)\n", s.Scenario, s.Source, seeds, s.WallSeconds)
		}
		for _, e := range s.Expectations {
			if e.Pass && failuresOnly {
				continue
			}
			where := ""
			if !e.Pass {
				where = "  " + fileLine(s.Source, e.Expectation.Line)
			}
			fmt.Fprintf(w, "  %s %s  %s%s\n", passFail(e.Pass), s.Scenario, e.Message(), where)
		}
		if b := s.Baseline; b != nil {
			switch {
			case b.Missing:
				if !failuresOnly {
					fmt.Fprintf(w, "  SKIP %s  no baseline in %s; record one with --update-baseline\n", s.Scenario, b.File)
				}
			default:
				bad := 0
				for _, m := range b.Metrics {
					if !m.Pass {
						bad++
						fmt.Fprintf(w, "  FAIL %s  baseline %s\n", s.Scenario, m.Message())
					}
				}
				if !failuresOnly {
					for _, m := range b.Metrics {
						if m.Pass && m.TradedFor != "" {
							fmt.Fprintf(w, "  note: baseline %s\n", m.Message())
						}
					}
				}
				if !failuresOnly || bad > 0 {
					for _, n := range b.Notes {
						fmt.Fprintf(w, "  note: %s\n", n)
					}
					fmt.Fprintf(w, "  verdict against the baseline: %s\n", b.VerdictText())
				}
				if !failuresOnly && bad == 0 {
					fmt.Fprintf(w, "  PASS %s  baseline: %s within tolerance of %s\n", s.Scenario,
						nounCount(len(b.Metrics), "metric", "metrics"), b.File)
				}
			}
		}
	}
	tests, failures, errors := r.Counts()
	if failuresOnly && failures+errors == 0 {
		return nil
	}
	status := "ok"
	if failures+errors > 0 {
		status = "FAILED"
	}
	_, err := fmt.Fprintf(w, "check %s: %s, %s, %d failed, %d errors\n", status,
		nounCount(len(r.Scenarios), "scenario", "scenarios"), nounCount(tests, "check", "checks"), failures, errors)
	return err
}

func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func fileLine(source string, line int) string {
	if line > 0 {
		return fmt.Sprintf("(%s:%d)", source, line)
	}
	return "(" + source + ")"
}

// WriteJSON writes the report for machines, with the counts.
func (r CheckReport) WriteJSON(w io.Writer) error {
	tests, failures, errors := r.Counts()
	return WriteJSON(w, struct {
		Pass      bool            `json:"pass"`
		Tests     int             `json:"tests"`
		Failures  int             `json:"failures"`
		Errors    int             `json:"errors"`
		Scenarios []ScenarioCheck `json:"scenarios"`
	}{failures+errors == 0, tests, failures, errors, r.Scenarios})
}

// VerdictText says a baseline check's verdict with the run as B: its dominance, which side
// ranks ahead, and a side held back by its root outcomes (metric.Verdict.Held).
func (b *BaselineCheck) VerdictText() string {
	var out string
	switch b.Dominance {
	case DominanceB:
		out = "this run dominates its baseline (better beyond the tolerance on some metric, worse on none)"
	case DominanceA:
		out = "the baseline dominates this run (worse beyond the tolerance on some metric, better on none)"
	case DominanceTrade:
		who := "the baseline ranks ahead"
		if b.Leader == "b" {
			who = "this run ranks ahead"
		}
		out = "trade-off (better beyond the tolerance on some metrics, worse on others); " + who + " (" + RankingOrder + ")"
	default:
		out = "no change beyond the tolerance"
	}
	switch b.Held {
	case "b":
		out += fmt.Sprintf("; this run is better than its baseline on no root outcome and worse on %s, so none of its gains counts", b.HeldOn)
	case "a":
		out += fmt.Sprintf("; the baseline is better on no root outcome and worse on %s", b.HeldOn)
	}
	return out
}

// neverWhy says why a metric reads "never".
func neverWhy(name string) string {
	switch name {
	case "goodput_recovery_time":
		return "goodput did not come back to its pre-fault level while arrivals continued"
	case "p95_recovery_time":
		return "fewer than 95% of the recovery episodes ever recovered"
	}
	return "fewer than half of the recovery episodes ever recovered"
}

// undefinedWhy says why a metric is undefined for a run.
func undefinedWhy(name string) string {
	switch name {
	case "goodput_recovery_time", "goodput_recovered":
		return "no fault window to recover from, or no steady state before it: not a collapse"
	case "median_recovery_time", "p95_recovery_time", "episode_recovery_rate":
		return "the run has no recovery episode"
	}
	return "the metric is undefined for this run: its denominator is zero"
}
