package tune

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/mayday-sim/mayday/metric"
)

// best assesses every measured candidate on all its runs and returns the feasible one with
// the best mean, or nil.
func (s *search) best() *Candidate {
	var feasible []*Candidate
	for _, c := range s.cands {
		if len(c.Runs) == 0 {
			continue
		}
		s.assess(c, len(c.Runs))
		if c.feas == holds && !s.isTwin(c) {
			feasible = append(feasible, c)
		}
	}
	if len(feasible) == 0 {
		return nil
	}
	slices.SortStableFunc(feasible, func(a, b *Candidate) int {
		ma, mb := s.mean(a, len(a.Runs)), s.mean(b, len(b.Runs))
		switch {
		case better(ma, mb, s.higher):
			return -1
		case better(mb, ma, s.higher):
			return 1
		}
		return a.ID - b.ID
	})
	rec, held := s.pick(feasible)
	s.heldAhead = held
	return rec
}

// pick returns the first feasible candidate of cs (ranked best first) that no other
// feasible one of cs holds back on root outcomes (heldBy), and the reason each feasible
// candidate ranked ahead of it is held back, by id. metric.Judge lets a held side never
// rank ahead, whatever its other gains; a held candidate ranked behind the pick changes
// nothing (its goal is no better), so the race treats it as any other. When every one is
// held (a cycle only float noise within 1e-9 could make) the first is the pick.
func (s *search) pick(cs []*Candidate) (*Candidate, map[int]string) {
	var feasible []*Candidate
	for _, c := range cs {
		if c.feas == holds {
			feasible = append(feasible, c)
		}
	}
	if len(feasible) == 0 {
		return nil, nil
	}
	held := map[int]string{}
	for _, c := range feasible {
		reason := ""
		for _, d := range feasible {
			if d == c {
				continue
			}
			if on := s.heldBy(c, d); on != "" {
				reason = fmt.Sprintf("better than #%d on no root outcome and worse on %s", d.ID, on)
				break
			}
		}
		if reason == "" {
			return c, held
		}
		held[c.ID] = reason
	}
	return feasible[0], nil
}

// heldBy returns the root outcome (metric.Outcomes) on which metric.Judge holds a back
// against b, by their means over their common seeds: a is better than b on no outcome and
// worse on the one returned. "" when it is not held, or they share no seed.
//
// When the goal is itself a root outcome (terminated_rate, completion_rate, …) any such
// outcome holds a back, as in compare and check --baseline: a better terminated_rate bought
// by leaving roots unfinished is no improvement. For any other goal (cost, recovery,
// capacity) the constraints say which outcomes the user accepts to trade for it, so only
// unfinished_rate holds a back: a candidate that leaves more roots unanswered, with no
// better outcome to show for it, is never recommended, whatever it saves.
func (s *search) heldBy(a, b *Candidate) string {
	k := min(len(a.Runs), len(b.Runs))
	if k == 0 {
		return ""
	}
	effects := make([]metric.Effect, len(metric.Outcomes))
	for i, m := range metric.Outcomes {
		effects[i] = metric.Effect{Metric: m,
			A: meanCI(values(b, m, k), s.t.Confidence).Mean,
			B: meanCI(values(a, m, k), s.t.Confidence).Mean}
	}
	v := metric.Judge(effects)
	if v.Held != "b" {
		return ""
	}
	if g, _ := metric.Lookup(s.goal); g.Rank == metric.RankOutcome {
		return v.HeldOn
	}
	for _, e := range effects {
		noise := 1e-9 * math.Max(1, math.Max(math.Abs(e.A), math.Abs(e.B)))
		if e.Metric == "unfinished_rate" && e.B-e.A > noise {
			return e.Metric
		}
	}
	return ""
}

func (s *search) isTwin(c *Candidate) bool {
	for _, ids := range s.twins {
		if slices.Contains(ids, c.ID) {
			return true
		}
	}
	return false
}

// contenders are the candidates that the best one has not beaten significantly on their
// common seeds: feasible or unsure ones whose paired difference includes 0.
func (s *search) contenders(rec *Candidate) []*Candidate {
	var out []*Candidate
	for _, c := range s.cands {
		if c == rec || len(c.Runs) == 0 || c.feas == violated || s.isTwin(c) || s.heldAhead[c.ID] != "" {
			continue
		}
		if d := s.diff(rec, c, len(c.Runs)); !(d.Lo > 0) {
			out = append(out, c)
		}
	}
	return out
}

// confirm races the best candidate against every candidate it has not beaten
// significantly, with no halving, so that a candidate successive halving left early is
// either beaten on more seeds or reported as a tie.
func (s *search) confirm(ctx context.Context) error {
	rec := s.best()
	if rec == nil || s.stopped {
		return nil
	}
	others := s.contenders(rec)
	if len(others) == 0 {
		return nil
	}
	_, err := s.race(ctx, append([]*Candidate{rec}, others...), false)
	return err
}

// result sums the search up: the recommendation, its runner-up and ties, the front and
// every candidate's means and intervals.
func (s *search) result(ctx context.Context) *Result {
	r := &Result{Spent: s.spent, Complete: ctx.Err() == nil, Rounds: s.rounds}
	for _, c := range s.cands {
		s.summarise(c)
	}
	rec := s.best()
	r.Candidates = s.cands
	switch {
	case s.spent == 0:
		r.Verdict = VerdictNone
		return r
	case rec == nil:
		r.Verdict = VerdictInfeasible
		for _, c := range s.cands {
			if len(c.Runs) > 0 && c.feas == unsure {
				r.Verdict = VerdictUnsettled
			}
		}
		return r
	}
	r.Recommended = rec
	rec.Status, rec.Reason = StatusRecommended, ""
	s.comparisons(r, rec)
	r.Front = s.front()
	return r
}

// comparisons finds the runner-up (the feasible candidate whose paired difference from the
// recommendation is smallest) and the ties.
func (s *search) comparisons(r *Result, rec *Candidate) {
	r.Verdict = VerdictOnly
	for _, c := range s.cands {
		if c == rec || len(c.Runs) == 0 || c.feas != holds {
			continue
		}
		if why := s.heldAhead[c.ID]; why != "" {
			c.Status, c.Reason = StatusHeld, why
			continue
		}
		d := s.diff(rec, c, len(c.Runs))
		if s.isTwin(c) {
			d = Interval{N: min(len(rec.Runs), len(c.Runs))}
		}
		if r.RunnerUp == nil || d.Mean < r.RunnerUp.Diff.Mean || math.IsNaN(r.RunnerUp.Diff.Mean) {
			r.RunnerUp = &Comparison{Candidate: c.ID, Diff: d}
		}
		if !(d.Lo > 0) {
			c.Status, c.Reason = StatusTied, "not significantly worse than the recommendation"
			r.Tied = append(r.Tied, c.ID)
		}
	}
	switch {
	case len(r.Tied) > 0:
		r.Verdict = VerdictTie
	case r.RunnerUp != nil:
		r.Verdict = VerdictBest
	}
}

// summarise fills c's means over all its runs, the intervals of the metrics the search
// reads, and a status when the race gave it none.
func (s *search) summarise(c *Candidate) {
	c.Seeds = len(c.Runs)
	c.Metrics, c.Intervals = map[string]float64{}, map[string]Interval{}
	if len(c.Runs) == 0 {
		c.Status = StatusDropped
		if c.Reason == "" {
			c.Reason = "not run"
		}
		return
	}
	var names []string
	for m := range c.Runs[0] {
		names = append(names, m)
	}
	slices.Sort(names)
	for _, m := range names {
		if v := meanCI(values(c, m, len(c.Runs)), s.t.Confidence).Mean; !math.IsNaN(v) && !math.IsInf(v, 0) {
			c.Metrics[m] = v
		}
	}
	for _, m := range Metrics(s.t) {
		iv := meanCI(values(c, m, len(c.Runs)), s.t.Confidence)
		if !math.IsNaN(iv.Lo) {
			iv.Lo, iv.Hi = metric.Clamp(m, iv.Lo, iv.Hi) // within the values the metric takes
		}
		c.Intervals[m] = iv
	}
	s.assess(c, len(c.Runs))
	if c.Status == StatusHeld && c.feas != holds {
		c.Status, c.Reason = "", ""
	}
	if c.Status == "" || c.Status == StatusTied && !s.isTwin(c) {
		c.Status = map[int]string{holds: StatusFeasible, unsure: StatusUnsure, violated: StatusInfeasible}[c.feas]
	}
}

// front is the Pareto front of the feasible candidates over Tune.Objectives, by their
// means: those no other feasible candidate is at least as good as on every objective and
// better on one. Empty without objectives.
func (s *search) front() []int {
	if len(s.t.Objectives) < 2 {
		return nil
	}
	var feas []*Candidate
	for _, c := range s.cands {
		if len(c.Runs) > 0 && c.feas == holds {
			feas = append(feas, c)
		}
	}
	var out []int
	for _, a := range feas {
		dominated := false
		for _, b := range feas {
			if a != b && s.dominates(b, a) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, a.ID)
		}
	}
	return out
}

func (s *search) dominates(a, b *Candidate) bool {
	strict := false
	for _, m := range s.t.Objectives {
		higher := metricHigher(m)
		x, y := a.Metrics[m], b.Metrics[m]
		if better(y, x, higher) {
			return false
		}
		if better(x, y, higher) {
			strict = true
		}
	}
	return strict
}
