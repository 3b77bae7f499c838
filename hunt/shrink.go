package hunt

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
)

// candidate is one shrink step to try: the smaller state and what it changed.
type candidate struct {
	st     *state
	phase  string
	change string
}

// The shrink phases, in order: drop faults, shorten windows, weaken parameters, cut the
// workload. Within a phase the candidates of one step run together (on every core); the
// first, in order, that still shows the violation is kept and the phase goes on from it,
// until no candidate of a step keeps the violation.
func (s *search) phases() []func(*state) []candidate {
	return []func(*state) []candidate{s.drops, s.shortens, s.weakens, s.workloads}
}

// shrink minimises the trial first while the violation target still happens: a step is
// kept only when its trial shows the same violation (the same ID), never another one.
// Unless the violation happens without any fault (a control run: the trial's workload and
// seed, no faults), a step that changes the workload is kept only when its own control
// still does not show the violation, so that shrinking never keeps a violation the faults
// no longer cause (too short a horizon fails completion_rate by itself). Each violation's
// shrinking spends at most hunt.shrink runs.
func (s *search) shrink(ctx context.Context, first Trial, target Violation) (*Found, error) {
	cur := first
	f := &Found{Trial: first.N, Violation: target, Before: first.size(), Removed: []string{}}
	s.target, s.shrinkFrom = target, s.res.ShrinkRuns
	control := false
	if s.h.Shrink > 0 {
		ctl, err := s.controls(ctx, []*state{cur.state}, cur.N)
		if err != nil {
			return nil, err
		}
		control = len(ctl) == 1 && ctl[0].Ran && !ctl[0].has(target.ID())
	}
	complete := ctx.Err() == nil
	for _, phase := range s.phases() {
		for complete {
			cands := phase(cur.state)
			if len(cands) == 0 {
				break
			}
			next, err := s.step(ctx, &cur, cands, target.ID(), control && cands[0].phase == "workload")
			if err != nil {
				return nil, err
			}
			if next == nil {
				complete = ctx.Err() == nil && s.shrinkSpent() < s.h.Shrink
				break
			}
			cur = *next
			f.Removed = append(f.Removed, cur.Change)
		}
	}
	f.Complete = complete
	f.Final, f.After = cur.N, cur.size()
	f.Name = s.foundName(target)
	f.Overrides = append(cur.Overrides(), scenarios.Override{Path: "name", Value: f.Name, From: scenarios.FromHunt})
	if target.Kind == Liveness {
		f.Overrides = append(f.Overrides, scenarios.Override{Path: "expect." + LivenessMetric,
			Value: strconv.Quote("<= " + fmtDur(s.h.Liveness)), From: scenarios.FromHunt})
	}
	return f, nil
}

// shrinkSpent is the runs the shrinking under way has spent.
func (s *search) shrinkSpent() int { return s.res.ShrinkRuns - s.shrinkFrom }

// step runs the candidates of one shrink step (with their controls when control is set) and
// returns the first that keeps the violation id, or nil.
func (s *search) step(ctx context.Context, cur *Trial, cands []candidate, id string, control bool) (*Trial, error) {
	per := 1
	if control {
		per = 2
	}
	left := (s.h.Shrink - s.shrinkSpent()) / per
	if ctx.Err() != nil || left <= 0 {
		return nil, nil
	}
	cands = cands[:min(len(cands), left)]
	trials := make([]Trial, len(cands))
	for i, c := range cands {
		trials[i] = s.trial(len(s.res.Trials)+i, c.phase, cur.N, c.st, nil)
		trials[i].Change = c.change
	}
	if err := s.run(ctx, trials); err != nil {
		return nil, err
	}
	first := len(s.res.Trials) - len(trials)
	var ctl []Trial
	if control {
		sts := make([]*state, len(cands))
		for i, c := range cands {
			sts[i] = c.st
		}
		var err error
		if ctl, err = s.controls(ctx, sts, cur.N); err != nil {
			return nil, err
		}
	}
	s.progress("shrink: " + cands[0].phase)
	kept := -1
	for i := range trials {
		t := &s.res.Trials[first+i]
		t.Reproduced = t.Ran && t.has(id) && (!control || ctl[i].Ran && !ctl[i].has(id))
		if t.Reproduced && kept < 0 {
			kept = first + i
		}
	}
	if kept < 0 {
		return nil, nil
	}
	return &s.res.Trials[kept], nil
}

// controls runs each state without any fault: its workload and seed alone.
func (s *search) controls(ctx context.Context, sts []*state, from int) ([]Trial, error) {
	trials := make([]Trial, len(sts))
	for i, st := range sts {
		c := st.clone()
		c.own, c.draws = nil, nil
		trials[i] = s.trial(len(s.res.Trials)+i, "control", from, c, nil)
		trials[i].Change = "no faults"
	}
	if err := s.run(ctx, trials); err != nil {
		return nil, err
	}
	return s.res.Trials[len(s.res.Trials)-len(trials):], nil
}

// foundName names the shrunk scenario after the scenario and the violation; a second
// violation of the same kind and metric (another invariant) gets a number after it.
func (s *search) foundName(v Violation) string {
	name := s.cfg.Scenario.Name + "-" + v.Kind
	if v.Metric != "" {
		name += "-" + v.Metric
	}
	name = strings.ReplaceAll(name, "_", "-")
	if s.names == nil {
		s.names = map[string]bool{}
	}
	out := name
	for k := 2; s.names[out]; k++ {
		out = name + "-" + strconv.Itoa(k)
	}
	s.names[out] = true
	return out
}

// faultLabel names fault i of a state for a change's text.
func (s *search) faultLabel(st *state, i int) string {
	if i < len(st.own) {
		return "the scenario's fault " + st.own[i]
	}
	d := st.draws[i-len(st.own)]
	return d.text(&s.h.Faults[d.entry])
}

// drops are the state without each one of its faults.
func (s *search) drops(st *state) []candidate {
	var out []candidate
	for i := range len(st.own) + len(st.draws) {
		c := st.clone()
		if i < len(st.own) {
			c.own = slices.Delete(c.own, i, i+1)
		} else {
			c.draws = slices.Delete(c.draws, i-len(st.own), i-len(st.own)+1)
		}
		out = append(out, candidate{c, "drop", "dropped " + s.faultLabel(st, i)})
	}
	return out
}

// shortens cut the window (for) of each drawn fault by a half, a quarter or an eighth,
// down to a second.
func (s *search) shortens(st *state) []candidate {
	var out []candidate
	tp := scenarios.TuneParam{Kind: scenarios.TuneDuration}
	for i, d := range st.draws {
		f := &s.h.Faults[d.entry]
		for k, p := range f.Params {
			sec, ok := tp.Number(d.vals[k])
			if p.Path != "for" || !ok || sec < 2 {
				continue
			}
			for _, u := range []float64{0.5, 0.75, 0.875} {
				v := scenarios.TuneParam{Kind: scenarios.TuneDuration, Max: sec}.Value(u)
				if v == d.vals[k] {
					continue
				}
				c := st.clone()
				c.draws[i].vals[k] = v
				out = append(out, candidate{c, "shorten", fmt.Sprintf("shortened the window of %s from %s to %s", d.text(f), d.vals[k], v)})
			}
		}
	}
	return out
}

// weakens move each ranged value of each drawn fault (but its window's start and length)
// toward the min of its range, the mild end as the envelope is written: by half, a
// quarter or an eighth of the way, so that repeated steps end within an eighth of the
// value that still shows the violation.
func (s *search) weakens(st *state) []candidate {
	var out []candidate
	for i, d := range st.draws {
		f := &s.h.Faults[d.entry]
		for k, p := range f.Params {
			if p.Kind == scenarios.TuneChoice || p.Path == "for" || p.Path == "at" {
				continue
			}
			x, ok := p.Number(d.vals[k])
			if !ok || x <= p.Min || (x-p.Min) < 0.02*(p.Max-p.Min) {
				continue
			}
			q := p
			q.Max = x
			for _, u := range []float64{0.5, 0.75, 0.875} {
				v := q.Value(u)
				if v == d.vals[k] {
					continue
				}
				c := st.clone()
				c.draws[i].vals[k] = v
				out = append(out, candidate{c, "weaken", fmt.Sprintf("weakened %s of %s from %s to %s", p.Path, d.text(f), d.vals[k], v)})
			}
		}
	}
	return out
}

// workloads halve the investigations and the horizon. For a liveness violation neither
// goes below what testing it needs: the horizon and (under Poisson arrivals) the arrivals
// reach past the end of the last fault window by hunt.liveness and the 5 minutes of a
// goodput test, so that a shorter run cannot fail liveness only for want of time to recover.
func (s *search) workloads(st *state) []candidate {
	var out []candidate
	need := time.Duration(0)
	if s.target.Kind == Liveness {
		need = s.windowEnd(st) + s.h.Liveness + 5*time.Minute
	}
	inv := st.inv / 2
	if a := s.cfg.Scenario.Workload.Arrival; a.Kind == scenarios.ArrivalPoisson && need > 0 {
		inv = max(inv, int(math.Ceil(a.Rate.PerSecond*need.Seconds())))
	}
	if inv >= 1 && inv < st.inv {
		c := st.clone()
		c.inv = inv
		out = append(out, candidate{c, "workload", fmt.Sprintf("cut the investigations from %d to %d", st.inv, c.inv)})
	}
	half := scenarios.TuneParam{Kind: scenarios.TuneDuration, Max: st.horizon.Seconds()}.Value(0.5)
	secs, _ := (scenarios.TuneParam{Kind: scenarios.TuneDuration}).Number(half)
	h := max(time.Duration(secs*float64(time.Second)), need)
	if st.horizon >= 2*time.Minute && h < st.horizon {
		c := st.clone()
		c.horizon = h
		out = append(out, candidate{c, "workload", fmt.Sprintf("cut the horizon from %s to %s", fmtDur(st.horizon), fmtDur(h))})
	}
	return out
}

// windowEnd is the latest end of a fault window of the state: its drawn windows', and the
// scenario's own (all of them, dropped or not).
func (s *search) windowEnd(st *state) time.Duration {
	end := time.Duration(0)
	for _, f := range s.cfg.Scenario.Faults {
		if r, ok := f.Kind.Rule(); ok && r.Window {
			end = max(end, f.At+f.For)
		}
	}
	for _, d := range st.draws {
		hf := &s.h.Faults[d.entry]
		var at, dur float64
		tp := scenarios.TuneParam{Kind: scenarios.TuneDuration}
		for k, p := range hf.Params {
			switch p.Path {
			case "at":
				at, _ = tp.Number(d.vals[k])
			case "for":
				dur, _ = tp.Number(d.vals[k])
			}
		}
		if d.at != "" {
			at, _ = tp.Number(d.at)
		}
		end = max(end, time.Duration((at+dur)*float64(time.Second)))
	}
	return end
}
