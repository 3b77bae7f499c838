// Package tune searches a scenario's tune block for the recovery policy that optimises one
// metric under constraints (`mayday tune`, docs/scenarios.md#tune).
//
// The search is a race with common random numbers. A space-filling start (a Latin
// hypercube over the varied keys) proposes candidates; every candidate runs the same seeds,
// so two candidates differ only by their parameters and are compared seed by seed (paired
// differences). A candidate whose constraint interval lies on the wrong side of its bound
// is infeasible and leaves the race; one whose paired difference from the best feasible
// candidate is significantly negative leaves it too; of the rest, the better half by mean
// go on (successive halving), and the seeds double. Later rounds propose candidates in a
// shrinking box around the leader and race them against it. Every decision is a function of
// the results alone, so the same scenario, seed and budget give the same recommendation on
// any number of workers, and a search resumed from stored results retraces its steps.
//
// The package simulates nothing: an Evaluator runs candidates (cmd/mayday hands it to
// pipeline.Batch).
package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/scenarios"
)

// Job is one run of a search: a candidate's values (one per varied key, in the tune block's
// order) on one seed.
type Job struct {
	Candidate int
	Values    []string
	Seed      uint64
}

// Evaluator runs jobs and returns each one's metrics, by name, in job order. A run that
// did not happen (the context was cancelled) is nil; the search stops there, keeping what
// was measured.
type Evaluator func(ctx context.Context, jobs []Job) ([]map[string]float64, error)

// Config is a search: the tune block (with flags applied), the scenario's first seed and
// the measurements a previous search stored.
type Config struct {
	Tune  scenarios.Tune
	Seed0 uint64
	// Known holds the metrics of runs already measured, by Key(values) and seed: they are
	// used instead of running again (resume).
	Known map[string]map[uint64]map[string]float64
	// Progress, when set, is told the runs spent so far and the budget (0 = a time budget).
	Progress func(spent, budget int, what string)
	// Now is the clock of a time budget; nil = time.Now.
	Now func() time.Time
}

// Key identifies a candidate by its values.
func Key(values []string) string { return strings.Join(values, "\x1f") }

// Candidate is one evaluated setting of the varied keys.
type Candidate struct {
	ID        int                 `json:"id"`
	Params    map[string]string   `json:"params"`
	Values    []string            `json:"-"`
	Round     int                 `json:"round"` // the round that proposed it
	Status    string              `json:"status"`
	Reason    string              `json:"reason,omitempty"`
	Metrics   map[string]float64  `json:"metrics"`   // means over its runs
	Intervals map[string]Interval `json:"intervals"` // of the goal, constraints and objectives
	// Runs holds each measured seed's metrics, in seed order.
	Runs  []map[string]float64 `json:"-"`
	Seeds int                  `json:"seeds"` // runs measured
	feas  int                  // holds, unsure or violated: all constraints together
	// likely: every constraint holds at its mean (a feasible candidate is always likely);
	// ranking puts these first, so halving keeps a candidate near a constraint's bound
	// over better-scoring ones whose means already break it.
	likely bool
	unit   []float64 // its place in the unit cube
}

// Statuses of a candidate.
const (
	StatusRecommended = "recommended"
	StatusTied        = "tied"       // not significantly worse than the recommendation
	StatusFeasible    = "feasible"   // significantly worse than a feasible candidate
	StatusInfeasible  = "infeasible" // a constraint is violated at the confidence level
	StatusDropped     = "dropped"    // left by successive halving, or for want of budget
	StatusUnsure      = "unsure"     // its constraints could not be settled
	// StatusHeld: feasible, but no better than another feasible candidate on any root
	// outcome and worse on one (metric.Judge holds it back), so however good its goal it is
	// never recommended: a policy that moves terminated roots into limbo does not win a
	// minimize: terminated_rate search.
	StatusHeld = "held"
)

// Verdicts of a search.
const (
	VerdictBest       = "best"         // significantly better than every other feasible candidate raced
	VerdictTie        = "tie"          // others are not significantly worse: Result.Tied
	VerdictOnly       = "only"         // the only feasible candidate
	VerdictInfeasible = "no_feasible"  // no candidate meets the constraints
	VerdictUnsettled  = "unsettled"    // the budget ran out before a candidate was feasible
	VerdictNone       = "not_measured" // nothing was measured
)

// Comparison is the paired difference of the goal between the recommendation and another
// candidate, signed so that positive favours the recommendation.
type Comparison struct {
	Candidate int      `json:"candidate"`
	Diff      Interval `json:"diff"`
}

// Result is what a search found.
type Result struct {
	Verdict     string       `json:"verdict"`
	Recommended *Candidate   `json:"-"`
	RunnerUp    *Comparison  `json:"runner_up,omitempty"`
	Tied        []int        `json:"tied,omitempty"`
	Front       []int        `json:"front,omitempty"` // Pareto front over Tune.Objectives
	Candidates  []*Candidate `json:"-"`
	Spent       int          `json:"runs"`
	Complete    bool         `json:"complete"` // false: stopped by an interrupt
	Rounds      int          `json:"rounds"`
}

// ErrBadTune is returned for a tune block that cannot be searched.
var ErrBadTune = errors.New("tune")

// Metrics lists the metrics a search reads: the goal, the constraints' and the objectives'.
func Metrics(t scenarios.Tune) []string {
	goal, _ := t.Objective()
	out := []string{goal}
	add := func(m string) {
		for _, x := range out {
			if x == m {
				return
			}
		}
		out = append(out, m)
	}
	for _, e := range t.SubjectTo {
		add(e.Metric)
	}
	for _, m := range t.Objectives {
		add(m)
	}
	return out
}

// checkConfig refuses a tune block the search cannot use.
func checkConfig(t scenarios.Tune) error {
	goal, _ := t.Objective()
	switch {
	case len(t.Vary) == 0:
		return fmt.Errorf("%w: nothing to vary", ErrBadTune)
	case goal == "":
		return fmt.Errorf("%w: no goal (maximize or minimize)", ErrBadTune)
	case t.Seeds < 2 || t.MaxSeeds < t.Seeds:
		return fmt.Errorf("%w: seeds %d, max_seeds %d: want 2 <= seeds <= max_seeds", ErrBadTune, t.Seeds, t.MaxSeeds)
	case !(t.Confidence > 0 && t.Confidence < 1):
		return fmt.Errorf("%w: confidence %v: want a level in (0, 1)", ErrBadTune, t.Confidence)
	}
	return nil
}

// better reports whether goal value a is better than b (NaN is worst).
func better(a, b float64, higher bool) bool {
	switch {
	case math.IsNaN(a):
		return false
	case math.IsNaN(b):
		return true
	case higher:
		return a > b
	}
	return a < b
}

func metricHigher(m string) bool { return metric.Better(m) > 0 }
