package compute

import (
	"math"
	"slices"
)

// quantileCont is DuckDB's quantile_cont of sorted integers: linear interpolation between
// the values around position (n-1)·p, for p in [0, 1]; NaN when there are none. Position
// n-1 (p = 1) is a whole number, so the last value never needs a neighbour.
func quantileCont(sorted []int64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := float64(len(sorted)-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if h == lo {
		return float64(sorted[i])
	}
	a, b := float64(sorted[i]), float64(sorted[i+1])
	return a + (b-a)*(h-lo)
}

// pendingTime notes how long investigation e, which has its row, waited to start: until
// the run's end when it never started (measured in capacity).
func (s *Sink) pendingTime(e *inv) {
	switch {
	case e.hasStart && e.parent != 0:
		s.subPendWait = append(s.subPendWait, us(e.started)-us(e.arrived))
	case e.hasStart:
		s.pendWait = append(s.pendWait, us(e.started)-us(e.arrived))
	case e.parent != 0:
		s.subPendArrived = append(s.subPendArrived, us(e.arrived))
	default:
		s.pendArrived = append(s.pendArrived, us(e.arrived))
	}
}

// capacity sets the pending times, backlog_growth and peak_backlog (the pend, backlog and
// peak columns of views/11_metrics.sql).
func (s *Sink) capacity(r Row, end int64) {
	pend, subPend := s.pendWait, s.subPendWait
	for _, a := range s.pendArrived {
		pend = append(pend, end-a)
	}
	for _, a := range s.subPendArrived {
		subPend = append(subPend, end-a)
	}
	slices.Sort(pend)
	slices.Sort(subPend)
	r.set("median_pending_time", quantileCont(pend, 0.5)/1e6)
	r.set("median_subagent_pending_time", quantileCont(subPend, 0.5)/1e6)
	r.set("backlog_growth", math.NaN())
	arrived := int64(len(s.rootArrived))
	if arrived > 0 {
		first, last := slices.Min(s.rootArrived), slices.Max(s.rootArrived)
		var ended int64
		for _, at := range s.rootEnded {
			if at <= last {
				ended++
			}
		}
		r.set("backlog_growth", ratio(float64(arrived-ended), float64(last-first)/3600e6))
	}
	// The backlog after each instant: arrivals less ends up to it (the ends of an instant
	// counted with its arrivals).
	ins, outs := s.rootArrived, s.rootEnded
	slices.Sort(ins)
	slices.Sort(outs)
	var open, peak int64
	for i, j := 0, 0; i < len(ins) || j < len(outs); {
		var at int64
		switch {
		case j == len(outs) || i < len(ins) && ins[i] <= outs[j]:
			at = ins[i]
		default:
			at = outs[j]
		}
		for ; i < len(ins) && ins[i] == at; i++ {
			open++
		}
		for ; j < len(outs) && outs[j] == at; j++ {
			open--
		}
		peak = max(peak, open)
	}
	r.set("peak_backlog", float64(peak))
}
