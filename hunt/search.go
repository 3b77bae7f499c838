package hunt

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
)

// draw is one fault a trial drew from the envelope: the entry, the text of each of its keys
// (in the order of the entry's Params) and the start of its window when the block's at
// range gives it; u holds where each value lies in its range, for escalation.
type draw struct {
	entry int
	vals  []string
	u     []float64
	at    string
	atU   float64
}

// state is what a trial runs: the scenario's own faults, the drawn ones, the workload.
type state struct {
	own     []string
	draws   []draw
	inv     int
	horizon time.Duration
	seed    uint64
}

func (st *state) clone() *state {
	c := *st
	c.own = slices.Clone(st.own)
	c.draws = make([]draw, len(st.draws))
	for i, d := range st.draws {
		c.draws[i] = draw{entry: d.entry, vals: slices.Clone(d.vals), u: slices.Clone(d.u), at: d.at, atU: d.atU}
	}
	return &c
}

// text is the fault entry of d, as the scenario's faults list holds it.
func (d draw) text(f *scenarios.HuntFault) string {
	parts := []string{"kind: " + string(f.Kind)}
	for i, p := range f.Params {
		parts = append(parts, p.Path+": "+d.vals[i])
	}
	if d.at != "" {
		parts = append(parts, "at: "+d.at)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

type search struct {
	cfg  Config
	h    scenarios.Hunt
	eval Evaluator
	rng  *rand.Rand
	res  *Result
	base state
	// trials of the search proper (not the shrinking), in order
	searched int
	// The shrinking under way: its violation, the shrink runs spent before it, and the
	// names of the scenarios written so far.
	target     Violation
	shrinkFrom int
	names      map[string]bool
}

func newSearch(cfg Config, eval Evaluator) *search {
	s := &search{cfg: cfg, h: cfg.Hunt, eval: eval,
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x68756e74)), // "hunt"
		res: &Result{Seed: cfg.Seed, Budget: cfg.Hunt.Budget}}
	if cfg.Hunt.BudgetTime > 0 {
		s.res.Budget, s.res.BudgetTime = 0, fmtDur(cfg.Hunt.BudgetTime)
	}
	if cfg.Hunt.Liveness > 0 {
		s.res.Liveness = fmtDur(cfg.Hunt.Liveness)
	}
	s.res.Checks = checksText(cfg)
	sc := cfg.Scenario
	s.base = state{inv: sc.Workload.Investigations, horizon: sc.Horizon, seed: cfg.Seed}
	if own, err := sc.FaultEntries(); err == nil {
		s.base.own = own
	}
	return s
}

// checksText says what counts as a violation of the scenario.
func checksText(cfg Config) []string {
	var out []string
	for _, e := range cfg.Scenario.Expect {
		out = append(out, "expect "+e.String())
	}
	if cfg.Hunt.Liveness > 0 {
		out = append(out, fmt.Sprintf("liveness: %s <= %s after the last fault window (goodput back within %s)", LivenessMetric, fmtDur(cfg.Hunt.Liveness), fmtDur(cfg.Hunt.Liveness)))
	}
	return append(out, "every invariant of the simulator")
}

// out reports whether the search budget is spent.
func (s *search) out() bool {
	if s.h.BudgetTime > 0 {
		return s.cfg.Now().Sub(s.res.started) >= s.h.BudgetTime
	}
	return s.res.Runs+s.res.Refused >= s.h.Budget
}

// search runs rounds of trials until a violation, the budget's end or an interrupt.
func (s *search) search(ctx context.Context) error {
	for !s.out() && ctx.Err() == nil && s.firstViolation() == nil {
		n := RoundSize
		if s.h.BudgetTime <= 0 {
			n = min(n, s.h.Budget-s.res.Runs-s.res.Refused)
		}
		round := make([]*state, n)
		trials := make([]Trial, n)
		for i := range round {
			trials[i] = s.propose(len(s.res.Trials) + i)
			round[i] = trials[i].state
		}
		if err := s.run(ctx, trials); err != nil {
			return err
		}
		s.searched = len(s.res.Trials)
		s.progress("search")
	}
	return nil
}

// run evaluates trials, appends them to the result and counts their runs.
func (s *search) run(ctx context.Context, trials []Trial) error {
	runs := make([]Run, len(trials))
	for i := range trials {
		runs[i] = trials[i].run()
	}
	outs, err := s.eval(ctx, runs)
	if err != nil {
		return err
	}
	for i := range trials {
		o := outs[i]
		trials[i].Ran, trials[i].Violations, trials[i].Closeness, trials[i].Refused = o.Ran, o.Violations, o.Closeness, o.Refused
		trials[i].NotMeasured = o.NotMeasured
		if trials[i].Violations == nil {
			trials[i].Violations = []Violation{}
		}
		if o.Refused != "" && (trials[i].Phase == "swarm" || trials[i].Phase == "escalate") {
			s.res.Refused++ // spends the budget, but did not run
		}
		if !o.Ran {
			continue
		}
		if trials[i].Phase == "swarm" || trials[i].Phase == "escalate" {
			s.res.Runs++
		} else {
			s.res.ShrinkRuns++
		}
	}
	s.res.Trials = append(s.res.Trials, trials...)
	return nil
}

func (s *search) progress(what string) {
	if s.cfg.Progress != nil {
		s.cfg.Progress(s.res.Runs+s.res.ShrinkRuns, s.res.Budget, what)
	}
}

// firstViolation is the first search trial, in order, with a violation.
func (s *search) firstViolation() *Trial {
	for i := range s.res.Trials[:s.searched] {
		if t := &s.res.Trials[i]; t.Ran && len(t.Violations) > 0 {
			return t
		}
	}
	return nil
}

// found is a violation to shrink and the first search trial that showed it.
type found struct {
	trial     int // its index in the result's trials
	violation Violation
}

// distinctViolations are the search trials' distinct violations (by ID), each with the
// first trial, in order, that showed it, in the order the trials showed them.
func (s *search) distinctViolations() []found {
	var out []found
	seen := map[string]bool{}
	for i := range s.res.Trials[:s.searched] {
		t := &s.res.Trials[i]
		if !t.Ran {
			continue
		}
		for _, v := range t.Violations {
			if !seen[v.ID()] {
				seen[v.ID()] = true
				out = append(out, found{i, v})
			}
		}
	}
	return out
}

// nearMiss is the search trial closest to a violation, or nil when none came near.
func (s *search) nearMiss() *Trial {
	var best *Trial
	for i := range s.res.Trials[:s.searched] {
		t := &s.res.Trials[i]
		if t.Ran && t.Closeness > 0 && len(t.state.draws) > 0 && (best == nil || t.Closeness > best.Closeness) {
			best = t
		}
	}
	return best
}

// propose draws trial n: after the first round, every other trial escalates the nearest
// miss when there is one; the others are swarm draws.
func (s *search) propose(n int) Trial {
	st := s.base.clone()
	st.seed = s.cfg.Seed + uint64(n)
	if near := s.nearMiss(); near != nil && n >= RoundSize && s.rng.IntN(2) == 0 {
		st.draws = s.escalate(near.state)
		return s.trial(n, "escalate", near.N, st, nil)
	}
	kinds := s.swarmKinds()
	k := 1 + s.rng.IntN(s.h.MaxFaults)
	for range k {
		e := kinds[s.rng.IntN(len(kinds))]
		st.draws = append(st.draws, s.drawEntry(e))
	}
	var names []string
	for _, e := range kinds {
		names = append(names, string(s.h.Faults[e].Kind))
	}
	return s.trial(n, "swarm", 0, st, names)
}

func (s *search) trial(n int, phase string, from int, st *state, kinds []string) Trial {
	t := Trial{N: n, Phase: phase, From: from, Seed: st.seed, Kinds: kinds,
		Investigations: st.inv, Horizon: fmtDur(st.horizon), state: st}
	t.Faults = slices.Clone(st.own)
	for _, d := range st.draws {
		t.Faults = append(t.Faults, d.text(&s.h.Faults[d.entry]))
	}
	return t
}

// swarmKinds is a random subset of the envelope's entries, each in with probability 1/2,
// never empty.
func (s *search) swarmKinds() []int {
	var in []int
	for i := range s.h.Faults {
		if s.rng.IntN(2) == 0 {
			in = append(in, i)
		}
	}
	if len(in) == 0 {
		in = []int{s.rng.IntN(len(s.h.Faults))}
	}
	return in
}

// drawEntry draws every ranged key of entry e uniformly within its range.
func (s *search) drawEntry(e int) draw {
	f := &s.h.Faults[e]
	u := make([]float64, len(f.Params))
	for i := range u {
		u[i] = s.rng.Float64()
	}
	return s.place(e, u, s.rng.Float64())
}

// place is the draw of entry e at the points u of its ranges and atU of its window's start.
func (s *search) place(e int, u []float64, atU float64) draw {
	f := &s.h.Faults[e]
	d := draw{entry: e, u: u, atU: atU, vals: make([]string, len(f.Params))}
	for i, p := range f.Params {
		d.vals[i] = p.Value(u[i])
	}
	if f.Window() && f.Param("at") == nil {
		d.at = s.h.AtParam(f).Value(atU)
	}
	return d
}

// escalate perturbs a near miss: each drawn value moves by a normal step (a tenth of its
// range), and with probability 1/3 one more fault of a drawn kind joins, below max_faults.
func (s *search) escalate(near *state) []draw {
	var out []draw
	for _, d := range near.draws {
		u := make([]float64, len(d.u))
		for i := range u {
			u[i] = clamp01(d.u[i] + 0.1*s.rng.NormFloat64())
		}
		out = append(out, s.place(d.entry, u, clamp01(d.atU+0.1*s.rng.NormFloat64())))
	}
	if len(out) < s.h.MaxFaults && len(near.draws) > 0 && s.rng.IntN(3) == 0 {
		out = append(out, s.drawEntry(near.draws[s.rng.IntN(len(near.draws))].entry))
	}
	return out
}

func clamp01(x float64) float64 { return math.Min(math.Max(x, 0), 1) }
