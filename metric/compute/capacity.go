package compute

import (
	"cmp"
	"math"
	"slices"
)

// quantileCont is DuckDB's quantile_cont of sorted integers: linear interpolation between
// the values around position (n-1)·p; NaN when there are none.
func quantileCont(sorted []int64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := float64(len(sorted)-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if h == lo || i+1 >= len(sorted) {
		return float64(sorted[i])
	}
	a, b := float64(sorted[i]), float64(sorted[i+1])
	return a + (b-a)*(h-lo)
}

// capacity sets the pending times, backlog_growth and peak_backlog (the pend, backlog and
// peak columns of views/11_metrics.sql).
func (s *Sink) capacity(r Row, end int64) {
	var seen int
	s.each(func(_ int64, e *inv) {
		if e.seen {
			seen++
		}
	})
	pend, subPend := make([]int64, 0, seen), []int64(nil)
	var first, last, arrived int64
	type move struct{ at, delta int64 }
	moves := make([]move, 0, 2*seen)
	s.each(func(_ int64, e *inv) {
		if !e.seen {
			return
		}
		at := end
		if e.hasStart {
			at = us(e.started)
		}
		wait := at - us(e.arrived)
		if e.parent != 0 {
			subPend = append(subPend, wait)
			return
		}
		pend = append(pend, wait)
		a := us(e.arrived)
		if arrived == 0 || a < first {
			first = a
		}
		if arrived == 0 || a > last {
			last = a
		}
		arrived++
		moves = append(moves, move{a, 1})
		if e.ended {
			moves = append(moves, move{us(e.endedAt), -1})
		}
	})
	slices.Sort(pend)
	slices.Sort(subPend)
	r.set("median_pending_time", quantileCont(pend, 0.5)/1e6)
	r.set("median_subagent_pending_time", quantileCont(subPend, 0.5)/1e6)
	r.set("backlog_growth", math.NaN())
	if arrived > 0 {
		var ended int64
		for _, m := range moves {
			if m.delta < 0 && m.at <= last {
				ended++
			}
		}
		r.set("backlog_growth", ratio(float64(arrived-ended), float64(last-first)/3600e6))
	}
	slices.SortFunc(moves, func(a, b move) int { return cmp.Compare(a.at, b.at) })
	var open, peak int64
	for i, m := range moves {
		open += m.delta
		if i+1 == len(moves) || moves[i+1].at != m.at {
			peak = max(peak, open)
		}
	}
	r.set("peak_backlog", float64(peak))
}
