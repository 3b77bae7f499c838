package compute

import (
	"math"
	"slices"
)

type stepKey struct {
	inv  int64
	step int32
}

// episode is a disrupted step (views/06_recovery_episodes.sql): from its first sign until a
// valid result of the step, else its investigation's end, else the run's end.
type episode struct {
	start     int64 // µs
	inv       int64 // the investigation of its signs
	recovered bool
	validAt   int64 // µs
}

// recovery sets median_recovery_time, p95_recovery_time and episode_recovery_rate.
func (s *Sink) recovery(r Row, end int64) {
	eps := map[stepKey]*episode{}
	var order []stepKey
	for _, sg := range s.signs {
		k := stepKey{sg.key.Investigation, sg.key.Step}
		e := eps[k]
		if e == nil {
			e = &episode{start: sg.at, inv: sg.inv}
			eps[k] = e
			order = append(order, k)
		}
		e.start = min(e.start, sg.at)
	}
	for _, v := range s.valids {
		if e := eps[stepKey{v.inv, v.step}]; e != nil && v.end >= e.start && (!e.recovered || v.end < e.validAt) {
			e.recovered, e.validAt = true, v.end
		}
	}
	// seconds and outcome of every episode, grouped by length as recovery_curve does.
	type tally struct{ recovered, never, censored float64 }
	byLength := map[float64]*tally{}
	var lengths []float64
	var recovered float64
	for _, k := range order {
		e := eps[k]
		stop, t := end, (*tally)(nil)
		var kind int
		switch inv := s.lookup(e.inv); {
		case e.recovered:
			stop, kind = e.validAt, 0
		case inv != nil && inv.seen && inv.ended:
			stop, kind = us(inv.endedAt), 1
		default:
			kind = 2
		}
		secs := float64(stop-e.start) / 1e6
		if t = byLength[secs]; t == nil {
			t = &tally{}
			byLength[secs] = t
			lengths = append(lengths, secs)
		}
		switch kind {
		case 0:
			t.recovered++
			recovered++
		case 1:
			t.never++
		default:
			t.censored++
		}
	}
	r.set("episode_recovery_rate", ratio(recovered, float64(len(order))))
	median, p95 := math.NaN(), math.NaN()
	slices.Sort(lengths)
	atRisk := float64(len(order))
	open, share := 1.0, 0.0
	for _, secs := range lengths {
		t := byLength[secs]
		share += open * t.recovered / atRisk
		if math.IsNaN(median) && share >= 0.5-1e-9 {
			median = secs
		}
		if math.IsNaN(p95) && share >= 0.95-1e-9 {
			p95 = secs
		}
		open *= 1 - (t.recovered+t.never)/atRisk
		atRisk -= t.recovered + t.never + t.censored
	}
	r.set("median_recovery_time", median)
	r.set("p95_recovery_time", p95)
}

// goodput sets goodput_recovery_time and goodput_recovered (views/10_goodput.sql and the gp
// columns of views/11_metrics.sql).
func (s *Sink) goodput(r Row, end int64) {
	r.set("goodput_recovery_time", math.NaN())
	r.set("goodput_recovered", math.NaN())
	firstArrival, lastArrival, ok := s.arrivalMinutes()
	if !s.hasWindow || !ok {
		return
	}
	minutes := end/usPerMinute + 1
	valid := func(m int64) int64 {
		if m < int64(len(s.validPerMinute)) {
			return s.validPerMinute[m]
		}
		return 0
	}
	// The steady state: the second half of [first arrival's minute, first window's minute).
	faultMinute := s.firstWindow / usPerMinute
	var n, sum int64
	var mean, d2 float64 // Welford's running mean and squared deviations, as stddev_samp
	for m := max(firstArrival+(faultMinute-firstArrival+1)/2, 0); m < faultMinute && m < minutes; m++ {
		x := float64(valid(m))
		n, sum = n+1, sum+valid(m)
		delta := x - mean
		mean += delta / float64(n)
		d2 += delta * (x - mean)
	}
	if n < 5 {
		return
	}
	base := float64(sum) / float64(n)
	sd := math.Sqrt(d2 / float64(n-1))
	if !(base > 0) {
		return
	}
	threshold := 4.5*base - 2.326*math.Sqrt(5)*sd
	tested := false
	for m := max(s.lastWindow/usPerMinute, 0); m+4 < minutes && m+4 <= lastArrival; m++ {
		tested = true
		var window int64
		for j := m; j <= m+4; j++ {
			window += valid(j)
		}
		if float64(window) >= threshold {
			r.set("goodput_recovery_time", max(0, float64(m*usPerMinute-s.lastWindow)/1e6))
			r.set("goodput_recovered", 1)
			return
		}
	}
	if tested {
		r.set("goodput_recovered", 0)
	}
}

// arrivalMinutes returns the minutes of the first and the last root arrival; ok false
// without a root.
func (s *Sink) arrivalMinutes() (first, last int64, ok bool) {
	s.each(func(_ int64, e *inv) {
		if !e.seen || e.parent != 0 {
			return
		}
		m := minuteOf(e.arrived)
		if !ok || m < first {
			first = m
		}
		if !ok || m > last {
			last = m
		}
		ok = true
	})
	return first, last, ok
}
