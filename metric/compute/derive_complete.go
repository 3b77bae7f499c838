package compute

import (
	"math"

	"github.com/mayday-sim/mayday/sim/record"
)

// completion tells which investigations are complete: they completed and so did their root
// (`coalesce(i.final_state = 'completed' AND r.final_state = 'completed', false)` of
// views/07_execution_costs.sql and the oracle testdata/oracle/07b_money.sql of package analysis, i the investigation's row and r its
// root's). Work of an investigation whose completeness is not known yet is held by the
// caller; resolved is called once for each investigation when it becomes known, and the
// caller lets go of what it held. An investigation whose row, or whose root's row, never
// arrives never resolves: it is incomplete, as in the views' LEFT JOINs.
//
// Memory: a byte per investigation id (ids 1, 2, ... as the simulator numbers them; others
// in a map), and the completed investigations whose root has not ended (in flight).
type completion struct {
	idFlags[uint8]
	waiting  map[int64][]int64 // a root's id -> its completed members waiting for the root's row
	resolved func(id int64, complete bool)
}

const (
	cSeen      uint8 = 1 << iota // its row arrived
	cCompleted                   // its final state is completed
	cResolved                    // whether it is complete is known
	cComplete                    // it and its root completed
)

func newCompletion(resolved func(id int64, complete bool)) completion {
	return completion{idFlags: newIDFlags[uint8](0), waiting: map[int64][]int64{}, resolved: resolved}
}

// known reports whether investigation id's completeness is known, and if so whether it is
// complete.
func (c *completion) known(id int64) (known, complete bool) {
	st := c.get(id)
	return st&cResolved != 0, st&cComplete != 0
}

func (c *completion) resolve(id int64, complete bool) {
	bits := cResolved
	if complete {
		bits |= cComplete
	}
	c.set(id, bits)
	c.resolved(id, complete)
}

// row takes an investigation's row. A second row of the same investigation is ignored
// (the simulator writes one).
func (c *completion) row(r *record.Investigation) {
	id := r.InvestigationID
	if c.get(id)&cSeen != 0 {
		return
	}
	completed := r.FinalState == "completed"
	bits := cSeen
	if completed {
		bits |= cCompleted
	}
	c.set(id, bits)
	switch root := c.get(r.RootID); {
	case !completed:
		c.resolve(id, false)
	case r.RootID == id:
		c.resolve(id, true)
	case root&cSeen != 0:
		c.resolve(id, root&cCompleted != 0)
	default:
		c.waiting[r.RootID] = append(c.waiting[r.RootID], id)
	}
	if members, ok := c.waiting[id]; ok {
		delete(c.waiting, id)
		for _, m := range members {
			c.resolve(m, completed)
		}
	}
}

// quantileContF is DuckDB's quantile_cont of n sorted values, value(i) the i-th: linear
// interpolation between the values around position (n-1)·p (lo + (hi-lo)·d); NaN when n is 0.
func quantileContF(n int, value func(int) float64, p float64) float64 {
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if h == lo {
		return value(i)
	}
	a, b := value(i), value(i+1)
	return a + (b-a)*(h-lo)
}

// nullFloat is v as a NullFloat, NULL when NaN.
func nullFloat(v float64) NullFloat {
	if math.IsNaN(v) {
		return NullFloat{}
	}
	return Float(v)
}
