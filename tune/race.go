package tune

import (
	"context"
	"math"
)

// race runs the candidates cs on common seeds until one is left, the seeds reach MaxSeeds
// or the budget runs out, and returns the ones still in contention, the leader first. Each
// round it brings them to k seeds, drops the infeasible ones and those significantly worse
// than the leader (the best feasible candidate), folds candidates that measured exactly
// what the leader measured into it (a tie no seed will break), and with halve keeps the
// better half by mean (successive halving; the leader always stays); then k doubles.
func (s *search) race(ctx context.Context, cs []*Candidate, halve bool) ([]*Candidate, error) {
	alive := append([]*Candidate(nil), cs...)
	k := s.t.Seeds
	for len(alive) > 0 && !s.stopped {
		if c := cost(alive, k); c > s.remaining() {
			if alive = s.fit(alive, k); len(alive) == 0 || cost(alive, k) == 0 && len(alive) == 1 {
				break
			}
		}
		if err := s.ensure(ctx, alive, k); err != nil {
			return nil, err
		}
		if s.stopped {
			break
		}
		k = min(k, s.common(alive))
		alive = s.cut(alive, k)
		if len(alive) == 0 || len(alive) == 1 && alive[0].feas == holds || k >= s.t.MaxSeeds {
			break
		}
		if halve && len(alive) > 2 {
			alive = s.halve(alive, k)
		}
		k = min(2*k, s.t.MaxSeeds)
	}
	return alive, nil
}

// common is the seeds every candidate of cs has.
func (s *search) common(cs []*Candidate) int {
	k := math.MaxInt
	for _, c := range cs {
		k = min(k, len(c.Runs))
	}
	return k
}

// cut judges cs on k seeds and returns those still in contention, the leader first.
func (s *search) cut(cs []*Candidate, k int) []*Candidate {
	var in []*Candidate
	for _, c := range cs {
		s.assess(c, k)
		if c.feas == violated {
			c.Status = StatusInfeasible
			continue
		}
		in = append(in, c)
	}
	s.rank(in, k)
	lead, held := s.pick(in)
	if lead == nil {
		return in // none feasible yet: nothing to compare against
	}
	out := []*Candidate{lead}
	for _, c := range in {
		switch {
		case c == lead:
		case held[c.ID] != "":
			c.Status, c.Reason = StatusHeld, held[c.ID]
		case c.feas == holds && s.identical(lead, c, k):
			c.Status = StatusTied
			s.twins[lead.ID] = append(s.twins[lead.ID], c.ID)
		case s.diff(lead, c, k).Lo > 0:
			c.Status = statusWorse(c)
		default:
			out = append(out, c)
		}
	}
	return out
}

func statusWorse(c *Candidate) string {
	if c.feas == holds {
		return StatusFeasible
	}
	return StatusUnsure
}

// leader is the best feasible candidate of ranked cs that no other feasible one holds back
// on root outcomes (pick), or nil.
func (s *search) leader(cs []*Candidate) *Candidate {
	c, _ := s.pick(cs)
	return c
}

// halve keeps the better half of ranked cs (by mean) and the leader.
func (s *search) halve(cs []*Candidate, k int) []*Candidate {
	keep := (len(cs) + 1) / 2
	lead := s.leader(cs)
	var out []*Candidate
	for i, c := range cs {
		if i < keep || c == lead {
			out = append(out, c)
			continue
		}
		c.Status, c.Reason = StatusDropped, "successive halving"
	}
	return out
}

// fit keeps the best of cs (leader first, then by mean) that the remaining budget can bring
// to k seeds; the others are dropped.
func (s *search) fit(cs []*Candidate, k int) []*Candidate {
	k0 := s.common(cs)
	s.rank(cs, k0)
	if lead := s.leader(cs); lead != nil && lead != cs[0] {
		cs = append([]*Candidate{lead}, removeOne(cs, lead)...)
	}
	left := s.remaining()
	var out []*Candidate
	for _, c := range cs {
		if need := max(0, k-len(c.Runs)); need <= left {
			left -= need
			out = append(out, c)
			continue
		}
		c.Status, c.Reason = StatusDropped, "budget"
	}
	if len(out) < 2 && len(cs) > 1 {
		// One candidate alone cannot be raced: stop at the seeds they have.
		for _, c := range cs {
			c.Status, c.Reason = "", ""
		}
		return nil
	}
	return out
}

func removeOne(cs []*Candidate, x *Candidate) []*Candidate {
	var out []*Candidate
	for _, c := range cs {
		if c != x {
			out = append(out, c)
		}
	}
	return out
}
