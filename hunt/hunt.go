// Package hunt searches a scenario's hunt block for a mix of faults that breaks its recovery
// policy, and shrinks what it finds to a small scenario that fails `mayday check`
// (`mayday hunt`, docs/hunt.md).
//
// The search is swarm testing: each trial draws a random subset of the envelope's fault
// kinds, then up to max_faults faults from that subset with every ranged key drawn
// uniformly within its range, on a seed of its own. Half of the trials after the first
// round escalate instead: they perturb the trial that came closest to a violation without
// one (a near miss), and may add a fault. A violation is a failed expectation of the
// scenario, an invariant the simulator found broken, or a liveness failure (goodput not
// back within hunt.liveness of the last fault window's end). Every distinct violation the
// search found is shrunk, from the first trial that showed it, in the manner of delta
// debugging: faults dropped, windows shortened, parameters moved toward the mild end of
// their ranges, then fewer investigations and a shorter horizon, each step kept only when
// the same violation (the same expectation, the same invariant) still happens.
//
// Every decision is a function of the hunt seed and the results alone: trials run in
// rounds of fixed size and a round's results are read in trial order, so the same scenario,
// seed and run budget give the same trials and the same finding on any number of cores. A
// time budget only stops the search. The package simulates nothing: an Evaluator runs the
// trials (Simulate hands them to pipeline.Batch).
package hunt

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
)

// Kinds of violation.
const (
	Expect    = "expect"    // an expectation of the scenario failed
	Liveness  = "liveness"  // goodput was not back within hunt.liveness of the last window
	Invariant = "invariant" // the simulator found one of its invariants broken
)

// LivenessMetric is the metric a liveness failure is measured by, and the expectation the
// scenario hunt writes holds it to.
const LivenessMetric = "goodput_recovery_time"

// Violation is one way a run broke the scenario.
type Violation struct {
	Kind   string `json:"kind"`
	Metric string `json:"metric,omitempty"`
	// Check names the invariant an invariant violation broke: its message with the run's
	// own numbers (investigations, times, counts) masked, so that the same broken invariant
	// has the same Check in every run and another invariant has another.
	Check   string `json:"check,omitempty"`
	Message string `json:"message"`
}

// ID identifies a violation across runs: the same ID is the same violation (the same
// expectation breached, the same invariant broken, liveness).
func (v Violation) ID() string {
	id := v.Kind
	if v.Metric != "" {
		id += ":" + v.Metric
	}
	if v.Check != "" {
		id += ":" + v.Check
	}
	return id
}

// InvariantCheck is the Check of an invariant violation with message msg: what follows
// "invariant violated: " (the run's name and seed go), with every run of digits masked.
func InvariantCheck(msg string) string {
	if _, after, ok := strings.Cut(msg, "invariant violated: "); ok {
		msg = after
	}
	var b strings.Builder
	digits := false
	for _, r := range msg {
		if r >= '0' && r <= '9' {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(r)
	}
	return b.String()
}

// Run is one simulation a hunt asks for: the overrides of a trial on the scenario, and the
// seed. Name is unique within the hunt (it names the run).
type Run struct {
	Name      string
	Overrides []scenarios.Override
	Seed      uint64
}

// Outcome is what one run showed. Ran is false for a run that did not finish (the hunt was
// interrupted); Closeness in [0, 1] is how near the run came to a violation (1: at a bound).
type Outcome struct {
	Ran        bool
	Violations []Violation
	Closeness  float64
	Refused    string // the scenario refused the trial's values: why (it did not run)
	// NotMeasured lists the metrics of expectations the run could not measure (undefined
	// for it: goodput without a fault window): not a violation.
	NotMeasured []string
}

// Evaluator runs runs and returns their outcomes in order.
type Evaluator func(ctx context.Context, runs []Run) ([]Outcome, error)

// ErrBadHunt marks a hunt that cannot start: no hunt block, a bad budget.
var ErrBadHunt = errors.New("bad hunt")

// RoundSize is the trials of one round: a fixed number, so that the trials do not depend on
// the number of cores.
const RoundSize = 8

// Config is a hunt: the block (with flags applied), the scenario, and the hunt seed.
type Config struct {
	Hunt     scenarios.Hunt
	Scenario *scenarios.Scenario
	Seed     uint64
	// Progress, when set, is told the runs spent, the budget (0 under a time budget) and
	// what the hunt is doing.
	Progress func(spent, budget int, what string)
	// Now is the clock of a time budget; nil = time.Now.
	Now func() time.Time
}

// Trial is one run of the search or of the shrinking: the faults it injected (the entries
// of the scenario's faults list), its workload and seed, and what it showed.
type Trial struct {
	N              int         `json:"n"`
	Phase          string      `json:"phase"` // swarm, escalate, or a shrink step: drop, shorten, weaken, workload
	From           int         `json:"from,omitempty"`
	Change         string      `json:"change,omitempty"` // what it changed of the trial it came from
	Seed           uint64      `json:"seed"`
	Faults         []string    `json:"faults"`
	Kinds          []string    `json:"kinds,omitempty"` // the swarm's subset of kinds
	Investigations int         `json:"investigations"`
	Horizon        string      `json:"horizon"`
	Ran            bool        `json:"ran"`
	Violations     []Violation `json:"violations"`
	Closeness      float64     `json:"closeness"`
	Reproduced     bool        `json:"reproduced,omitempty"` // a shrink step that kept the violation
	Refused        string      `json:"refused,omitempty"`
	NotMeasured    []string    `json:"not_measured,omitempty"`
	state          *state
}

// Found is a violation and the scenario it was shrunk to.
type Found struct {
	Trial     int                  `json:"trial"` // the search trial that found it
	Violation Violation            `json:"violation"`
	Final     int                  `json:"final"` // the trial of the shrunk scenario
	Removed   []string             `json:"removed"`
	Overrides []scenarios.Override `json:"overrides"` // the shrunk scenario, on the original
	Name      string               `json:"name"`      // its scenario name
	Complete  bool                 `json:"complete"`  // false: shrinking was interrupted or ran out of runs
	Before    Size                 `json:"before"`
	After     Size                 `json:"after"`
}

// Size is what shrinking makes smaller.
type Size struct {
	Faults         int    `json:"faults"`
	Investigations int    `json:"investigations"`
	Horizon        string `json:"horizon"`
}

// Result is what a hunt did.
type Result struct {
	Seed       uint64  `json:"seed"`
	Budget     int     `json:"budget,omitempty"`
	BudgetTime string  `json:"budget_time,omitempty"`
	Runs       int     `json:"runs"`        // runs of the search
	Refused    int     `json:"refused"`     // search trials the scenario refused: not run
	ShrinkRuns int     `json:"shrink_runs"` // runs of the shrinking
	Complete   bool    `json:"complete"`    // false: interrupted
	Trials     []Trial `json:"trials"`      // the search's, then the shrinking's
	// Found is the first distinct violation the search found, shrunk; Others the other
	// distinct violations, in the order the search first showed them, each shrunk too.
	Found    *Found   `json:"found,omitempty"`
	Others   []*Found `json:"others,omitempty"`
	Coverage Coverage `json:"coverage"`
	// Uncovered says why the search could not cover the envelope (a kind never ran, or
	// most trials were refused): without a violation that is an error, not an all-clear.
	Uncovered string    `json:"uncovered,omitempty"`
	Liveness  string    `json:"liveness,omitempty"`
	Checks    []string  `json:"checks"` // what a violation is, in words
	started   time.Time // for the time budget
}

// All is every violation found, shrunk: Found, then Others.
func (r *Result) All() []*Found {
	if r.Found == nil {
		return nil
	}
	return append([]*Found{r.Found}, r.Others...)
}

// fmtDur writes a duration as a scenario file does.
func fmtDur(d time.Duration) string {
	p := scenarios.TuneParam{Kind: scenarios.TuneDuration, Min: d.Seconds(), Max: d.Seconds()}
	return p.Value(0)
}

// Overrides are the trial's changes to the scenario: its faults, workload, horizon and seed.
func (t *Trial) Overrides() []scenarios.Override {
	o := []scenarios.Override{
		{Path: "faults", Value: "[" + strings.Join(t.Faults, ", ") + "]", From: scenarios.FromHunt},
		{Path: "workload.investigations", Value: strconv.Itoa(t.Investigations), From: scenarios.FromHunt},
		{Path: "horizon", Value: t.Horizon, From: scenarios.FromHunt},
		{Path: "seed", Value: strconv.FormatUint(t.Seed, 10), From: scenarios.FromHunt},
	}
	return o
}

func (t *Trial) run() Run {
	return Run{Name: "t" + strconv.Itoa(t.N), Overrides: t.Overrides(), Seed: t.Seed}
}

// has reports whether the trial showed the violation id.
func (t *Trial) has(id string) bool {
	for _, v := range t.Violations {
		if v.ID() == id {
			return true
		}
	}
	return false
}

func (t *Trial) size() Size {
	return Size{Faults: len(t.Faults), Investigations: t.Investigations, Horizon: t.Horizon}
}

// Hunt runs the search and, when it finds a violation, the shrinking. It stops early,
// with Result.Complete false, when ctx is cancelled; what it found by then is kept.
func Hunt(ctx context.Context, cfg Config, eval Evaluator) (*Result, error) {
	h := cfg.Hunt
	if len(h.Faults) == 0 {
		return nil, fmt.Errorf("%w: the hunt block has no faults", ErrBadHunt)
	}
	if h.Budget <= 0 && h.BudgetTime <= 0 {
		h.Budget = scenarios.DefaultHuntBudget
	}
	cfg.Hunt = h
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := newSearch(cfg, eval)
	s.res.started = cfg.Now()
	if err := s.search(ctx); err != nil {
		return nil, err
	}
	for _, v := range s.distinctViolations() {
		if ctx.Err() != nil {
			break
		}
		f, err := s.shrink(ctx, s.res.Trials[v.trial], v.violation)
		if err != nil {
			return nil, err
		}
		if s.res.Found == nil {
			s.res.Found = f
		} else {
			s.res.Others = append(s.res.Others, f)
		}
	}
	s.res.Complete = ctx.Err() == nil
	s.res.Coverage = s.coverage()
	s.res.Uncovered = s.uncovered()
	return s.res, nil
}
