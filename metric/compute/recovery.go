package compute

import (
	"cmp"
	"math"
	"slices"

	"github.com/mayday-sim/mayday/sim/record"
)

// episodes takes the disrupted steps of investigation e (views/06_recovery_episodes.sql):
// each from its first sign until a valid result of the step, else the investigation's end,
// else the run's end (Sink.censored, measured in Finish).
func (s *Sink) episodes(e *inv) {
	if len(e.signs) == 0 {
		return
	}
	byStep := func(a, b record.OpKey) int {
		return cmp.Or(cmp.Compare(a.Investigation, b.Investigation), cmp.Compare(a.Step, b.Step))
	}
	slices.SortFunc(e.signs, func(a, b sign) int { return byStep(a.key, b.key) })
	slices.SortFunc(e.valids, func(a, b valid) int { return byStep(a.key, b.key) })
	v := 0
	for i := 0; i < len(e.signs); {
		k := e.signs[i].key
		start := e.signs[i].at
		for i++; i < len(e.signs) && byStep(e.signs[i].key, k) == 0; i++ {
			start = min(start, e.signs[i].at)
		}
		for v < len(e.valids) && byStep(e.valids[v].key, k) < 0 {
			v++
		}
		recovered, validAt := false, int64(0)
		for w := v; w < len(e.valids) && byStep(e.valids[w].key, k) == 0; w++ {
			if end := e.valids[w].end; end >= start && (!recovered || end < validAt) {
				recovered, validAt = true, end
			}
		}
		switch {
		case recovered:
			s.episodesDone = append(s.episodesDone, (validAt-start)<<2)
		case e.seen && e.ended:
			s.episodesDone = append(s.episodesDone, (us(e.endedAt)-start)<<2|1)
		default:
			s.censored = append(s.censored, start)
		}
	}
}

// recovery sets median_recovery_time, p95_recovery_time and episode_recovery_rate.
func (s *Sink) recovery(r Row, end int64) {
	// every episode's length and outcome, grouped by length as recovery_curve does.
	type tally struct{ recovered, never, censored float64 }
	all := s.episodesDone
	for _, start := range s.censored {
		all = append(all, (end-start)<<2|2)
	}
	slices.Sort(all)
	var recovered float64
	var lengths []float64
	var tallies []tally
	for i, x := range all {
		secs := float64(x>>2) / 1e6
		if i == 0 || all[i-1]>>2 != x>>2 {
			lengths = append(lengths, secs)
			tallies = append(tallies, tally{})
		}
		t := &tallies[len(tallies)-1]
		switch x & 3 {
		case 0:
			t.recovered++
			recovered++
		case 1:
			t.never++
		default:
			t.censored++
		}
	}
	r.set("episode_recovery_rate", ratio(recovered, float64(len(all))))
	median, p95 := math.NaN(), math.NaN()
	atRisk := float64(len(all))
	open, share := 1.0, 0.0
	for i, secs := range lengths {
		t := tallies[i]
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
	if len(s.rootArrived) == 0 {
		return 0, 0, false
	}
	lo, hi := slices.Min(s.rootArrived), slices.Max(s.rootArrived)
	return lo / usPerMinute, hi / usPerMinute, true
}
