package tune

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/scenarios"
)

// search is the state of one Search.
type search struct {
	cfg      Config
	t        scenarios.Tune
	goal     string
	higher   bool
	eval     Evaluator
	cands    []*Candidate
	byKey    map[string]*Candidate
	spent    int
	budget   int // runs; 0 under a time budget
	deadline time.Time
	stopped  bool // interrupted, or out of time: no more runs
	twins    map[int][]int
	// heldAhead holds, by id, why each feasible candidate that ranks ahead of the last
	// best() is held back on root outcomes (pick).
	heldAhead map[int]string
	rounds    int
}

// Search runs the search the config describes and returns what it found. It stops early,
// with Result.Complete false, when ctx is cancelled; what was measured is in the candidates'
// Runs, for a later Search to resume from (Config.Known).
func Search(ctx context.Context, cfg Config, eval Evaluator) (*Result, error) {
	if err := checkConfig(cfg.Tune); err != nil {
		return nil, err
	}
	s := &search{cfg: cfg, t: cfg.Tune, eval: eval, byKey: map[string]*Candidate{}, twins: map[int][]int{}}
	s.goal, s.higher = cfg.Tune.Objective()
	s.budget = cfg.Tune.Budget
	if s.budget == 0 && cfg.Tune.BudgetTime == 0 {
		s.budget = scenarios.DefaultTuneBudget
	}
	if cfg.Tune.BudgetTime > 0 {
		s.deadline = s.now().Add(cfg.Tune.BudgetTime)
	}
	first := s.propose(s.initialDesign(), 0)
	alive, err := s.race(ctx, first, true)
	if err != nil {
		return nil, err
	}
	for r := 1; !s.stopped && len(alive) > 0 && alive[0].feas != violated; r++ {
		next := s.propose(s.around(alive[0], r), r)
		if len(next) == 0 || s.remaining() < 2*(len(next)+1)*s.t.Seeds {
			break
		}
		if alive, err = s.race(ctx, append([]*Candidate{alive[0]}, next...), true); err != nil {
			return nil, err
		}
	}
	if err := s.confirm(ctx); err != nil {
		return nil, err
	}
	return s.result(ctx), nil
}

func (s *search) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}

// remaining is the runs the budget still allows (a large number under a time budget).
func (s *search) remaining() int {
	if s.budget == 0 {
		return math.MaxInt32
	}
	return s.budget - s.spent
}

// propose adds the candidates of the unit points that are new (their values not yet
// proposed) and returns them.
func (s *search) propose(points [][]float64, round int) []*Candidate {
	var out []*Candidate
	for _, u := range points {
		vals := make([]string, len(s.t.Vary))
		params := make(map[string]string, len(vals))
		for i, p := range s.t.Vary {
			vals[i] = p.Value(u[i])
			params[p.Path] = vals[i]
		}
		k := Key(vals)
		if s.byKey[k] != nil {
			continue
		}
		c := &Candidate{ID: len(s.cands), Params: params, Values: vals, Round: round, unit: u}
		for i, p := range s.t.Vary { // the centre of the value, so boxes around it are symmetric
			c.unit[i], _ = p.Unit(vals[i])
		}
		s.cands = append(s.cands, c)
		s.byKey[k] = c
		out = append(out, c)
	}
	if len(out) > 0 {
		s.rounds = max(s.rounds, round+1)
	}
	return out
}

// ensure measures every candidate of cs on its first k seeds, from Known when it can. It
// charges every run to the budget, measured or known, so a resumed search spends as the
// first one did. A run that did not happen (an interrupt) stops the search; each candidate
// keeps its runs up to the first missing one.
func (s *search) ensure(ctx context.Context, cs []*Candidate, k int) error {
	type slot struct {
		c *Candidate
		m map[string]float64
	}
	var slots []slot
	var jobs []Job
	var at []int // slot of each job
	for _, c := range cs {
		for j := len(c.Runs); j < k; j++ {
			seed := s.cfg.Seed0 + uint64(j)
			m := s.cfg.Known[Key(c.Values)][seed]
			if m == nil {
				jobs = append(jobs, Job{Candidate: c.ID, Values: c.Values, Seed: seed})
				at = append(at, len(slots))
			}
			slots = append(slots, slot{c, m})
		}
	}
	if len(jobs) > 0 {
		if !s.deadline.IsZero() && s.now().After(s.deadline) {
			s.stopped = true
			return nil
		}
		s.report("running candidates")
		out, err := s.eval(ctx, jobs)
		if err != nil {
			return err
		}
		for i, m := range out {
			slots[at[i]].m = m
		}
	}
	gap := map[*Candidate]bool{}
	for _, sl := range slots {
		if sl.m == nil || gap[sl.c] {
			gap[sl.c], s.stopped = true, true
			continue
		}
		sl.c.Runs = append(sl.c.Runs, sl.m)
		s.spent++
	}
	s.report("measured")
	if ctx.Err() != nil {
		s.stopped = true
	}
	return nil
}

func (s *search) report(what string) {
	if s.cfg.Progress != nil {
		s.cfg.Progress(s.spent, s.budget, what)
	}
}

// cost is the runs that bringing cs to k seeds takes.
func cost(cs []*Candidate, k int) int {
	n := 0
	for _, c := range cs {
		n += max(0, k-len(c.Runs))
	}
	return n
}

// values is metric m over the first k runs of c.
func values(c *Candidate, m string, k int) []float64 {
	k = min(k, len(c.Runs))
	out := make([]float64, k)
	for j := range k {
		v, ok := c.Runs[j][m]
		if !ok {
			v = math.NaN()
		}
		out[j] = v
	}
	return out
}

// assess sets c's feasibility from its constraints' intervals over its first k runs.
func (s *search) assess(c *Candidate, k int) {
	c.feas, c.likely = holds, true
	for _, e := range s.t.SubjectTo {
		v := values(c, e.Metric, k)
		if slices.ContainsFunc(v, math.IsNaN) {
			// Undefined in a run: as in mayday check, the expectation fails there.
			c.feas, c.likely = violated, false
			continue
		}
		iv := meanCI(v, s.t.Confidence)
		c.feas = min(c.feas, judge(e, iv))
		c.likely = c.likely && e.Holds(iv.Mean)
	}
	c.likely = c.likely || c.feas == holds
}

// mean is the mean of c's goal over its first k runs (NaN when undefined in all).
func (s *search) mean(c *Candidate, k int) float64 {
	return meanCI(values(c, s.goal, k), s.t.Confidence).Mean
}

// diff is the paired difference of the goal, a − b seed by seed over their first k common
// seeds, signed so that positive favours a.
func (s *search) diff(a, b *Candidate, k int) Interval {
	k = min(k, len(a.Runs), len(b.Runs))
	va, vb := values(a, s.goal, k), values(b, s.goal, k)
	d := make([]float64, k)
	for j := range k {
		d[j] = va[j] - vb[j]
		if !s.higher {
			d[j] = -d[j]
		}
	}
	return meanCI(d, s.t.Confidence)
}

// identical reports whether a and b measured the same value of every metric the search
// reads (the root outcomes included, see heldBy) on each of their first k seeds: no number
// of seeds will tell them apart.
func (s *search) identical(a, b *Candidate, k int) bool {
	for _, m := range append(Metrics(s.t), metric.Outcomes...) {
		va, vb := values(a, m, k), values(b, m, k)
		for j := range va {
			if va[j] != vb[j] && !(math.IsNaN(va[j]) && math.IsNaN(vb[j])) {
				return false
			}
		}
	}
	return true
}

// rank orders cs best first: the likely feasible (every constraint holds at its mean)
// before the others, then by the goal's mean over k runs, then by id.
func (s *search) rank(cs []*Candidate, k int) {
	slices.SortStableFunc(cs, func(a, b *Candidate) int {
		ma, mb := s.mean(a, k), s.mean(b, k)
		switch {
		case a.likely != b.likely:
			if a.likely {
				return -1
			}
			return 1
		case better(ma, mb, s.higher):
			return -1
		case better(mb, ma, s.higher):
			return 1
		}
		return a.ID - b.ID
	})
}
