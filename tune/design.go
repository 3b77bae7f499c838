package tune

import (
	"math/rand/v2"

	"github.com/mayday-sim/mayday/scenarios"
)

// The stream of the search's own draws (the design), fixed so that it never shares a stream
// with a simulation: "tune-lhs".
const streamDesign uint64 = 0x74756e652d6c6873

// initialDesign is the space-filling start in the unit cube: every combination when the
// space is discrete and small enough to race whole, else a Latin hypercube of Initial points
// (or one sized from the space and the budget). A discrete key of L levels is cut into L
// strata, so a hypercube of L points (or a multiple) takes every level equally often.
func (s *search) initialDesign() [][]float64 {
	n := s.t.Initial
	grid, all := 1, true
	for _, p := range s.t.Vary {
		if l := p.Levels(); l > 0 && grid <= 1<<20 {
			grid *= l
		} else {
			all = false
		}
	}
	if n == 0 {
		n = max(10, 3*len(s.t.Vary))
		for _, p := range s.t.Vary {
			n = max(n, p.Levels())
		}
		if s.budget > 0 {
			n = max(2, min(n, s.budget/(2*s.t.Seeds)))
		}
		if all && grid <= max(n, s.budget/(3*s.t.Seeds)) {
			return gridPoints(s.t.Vary)
		}
	}
	return s.hypercube(n, nil, 0)
}

// hypercube draws n points of a Latin hypercube in the box of half-width w around centre
// (the whole cube when centre is nil), clipped to the cube; round r has its own stream.
// Each coordinate takes each of n equal strata exactly once (a random permutation of the
// strata, a uniform draw within each), as gonum's samplemv.LatinHypercube does.
func (s *search) hypercube(n int, centre []float64, r int) [][]float64 {
	d := len(s.t.Vary)
	rng := rand.New(rand.NewPCG(s.cfg.Seed0^uint64(r)*0x9e3779b97f4a7c15, streamDesign))
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, d)
	}
	for j := range d {
		perm := rng.Perm(n)
		lo, hi := 0.0, 1.0
		if centre != nil {
			lo, hi = max(0, centre[j]-s.width(j, r)), min(1, centre[j]+s.width(j, r))
		}
		for i := range n {
			u := (float64(perm[i]) + rng.Float64()) / float64(n)
			out[i][j] = lo + u*(hi-lo)
		}
	}
	return out
}

// width is the half-width of round r's box along key j: halved each round, but never
// narrower than one level of a discrete key (so its neighbours stay in reach).
func (s *search) width(j, r int) float64 {
	w := 0.5 / float64(int(1)<<min(r, 30))
	if l := s.t.Vary[j].Levels(); l > 0 {
		w = max(w, 1.0/float64(l))
	}
	return w
}

// around proposes round r's points around the leader c.
func (s *search) around(c *Candidate, r int) [][]float64 {
	n := max(4, (s.t.Initial+1)/2, len(s.t.Vary)+2)
	return s.hypercube(n, c.unit, r)
}

// gridPoints is every combination of the levels of discrete keys, at the centres of their
// strata, the last key varying fastest.
func gridPoints(vary []scenarios.TuneParam) [][]float64 {
	idx := make([]int, len(vary))
	var out [][]float64
	for {
		u := make([]float64, len(vary))
		for j, p := range vary {
			u[j] = (float64(idx[j]) + 0.5) / float64(p.Levels())
		}
		out = append(out, u)
		j := len(vary) - 1
		for ; j >= 0; j-- {
			if idx[j]++; idx[j] < vary[j].Levels() {
				break
			}
			idx[j] = 0
		}
		if j < 0 {
			return out
		}
	}
}
