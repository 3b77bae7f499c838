package compute

import (
	"cmp"
	"maps"
	"math"
	"slices"
)

// placeMarks finds the operation of every park and throttle of investigation e
// (views/03_disruptions.sql): its keyed span at the same instant (the last by span id),
// else its first one after, else its last one before. A placed mark is a sign of its
// operation's step, and guards its tool's minute.
func (s *Sink) placeMarks(e *inv) {
	if len(e.marks) == 0 {
		return
	}
	ks := e.keyed
	slices.SortFunc(ks, func(a, b keyed) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.id, b.id))
	})
	for _, m := range e.marks {
		// next: the first span starting at or after the mark; prev: the last starting at or before.
		next, _ := slices.BinarySearchFunc(ks, m.at, func(k keyed, at int64) int { return cmp.Compare(k.start, at) })
		prev, _ := slices.BinarySearchFunc(ks, m.at+1, func(k keyed, at int64) int { return cmp.Compare(k.start, at) })
		prev--
		var k *keyed
		switch {
		case prev >= 0 && ks[prev].start == m.at:
			k = &ks[prev]
		case next < len(ks):
			k = &ks[next]
		case prev >= 0:
			k = &ks[prev]
		default:
			continue
		}
		tool := k.tool
		if tool == noTool {
			tool = e.ops[s.ops[k.key]].tool
		}
		e.signs = append(e.signs, sign{k.key, m.at, m.at, tool, m.kind})
		if tool != noTool {
			s.minute(tool, m.at/usPerMinute).guarded = true
		}
	}
}

// incidentFailures is the failed calls sent during incidents (views/04_tool_minutes.sql,
// views/05_incidents.sql).
func (s *Sink) incidentFailures() int64 {
	byTool := map[int32][]int64{}
	for k := range s.minutes {
		// A call without a tool has tool NULL, which joins nothing in tool_minutes.
		if k.tool != noTool {
			byTool[k.tool] = append(byTool[k.tool], k.minute)
		}
	}
	var inside int64
	for _, tool := range slices.Sorted(maps.Keys(byTool)) {
		ms := byTool[tool]
		slices.Sort(ms)
		inside += s.toolIncidents(tool, ms)
	}
	return inside
}

// hot is the incident test of a minute with f failed calls of n against the ratio p
// (defined: p is not NULL), in the view's arithmetic.
func hot(f, n int64, p float64, defined bool) bool {
	if f < 5 || !defined || float64(f) <= float64(n)*p {
		return false
	}
	if p <= 0 {
		return true
	}
	if p >= 1 {
		return false
	}
	v := float64(f) * math.Log(float64(f)/(float64(n)*p))
	if n > f {
		v += float64(n-f) * math.Log(float64(n-f)/(float64(n)*(1-p)))
	}
	return v >= math.Log(10000)
}

// toolIncidents returns the failed calls inside the incidents of one tool, whose minutes
// (with a call or guarded) are ms, sorted.
func (s *Sink) toolIncidents(tool int32, ms []int64) int64 {
	counts := make([]*tmCount, len(ms))
	var f, n, fPre, nPre int64
	firstMinute := s.firstWindow / usPerMinute
	for i, m := range ms {
		c := s.minutes[tm{tool, m}]
		counts[i] = c
		f, n = f+c.failed, n+c.attempts
		if s.hasWindow && m < firstMinute {
			fPre, nPre = fPre+c.failed, nPre+c.attempts
		}
	}
	p1, ok1 := ratio(float64(f), float64(n)), n > 0
	if nPre > 0 {
		p1, ok1 = float64(fPre)/float64(nPre), true
	}
	var fq, nq int64
	for _, c := range counts {
		if !hot(c.failed, c.attempts, p1, ok1) {
			fq, nq = fq+c.failed, nq+c.attempts
		}
	}
	base := 0.0
	if nq > 0 {
		base = float64(fq) / float64(nq)
	}
	// Islands of active (hot or guarded) minutes, split by gaps of more than 3 minutes; an
	// island with a hot minute is an incident from its first to its last minute.
	var inside int64
	first, last, anyHot, open := 0, 0, false, false // indices into ms
	flush := func() {
		if open && anyHot {
			for _, c := range counts[first : last+1] {
				inside += c.failed
			}
		}
	}
	for i, m := range ms {
		c := counts[i]
		isHot := hot(c.failed, c.attempts, base, true)
		if !isHot && !c.guarded {
			continue
		}
		if open && m-ms[last] > 3 {
			flush()
			open = false
		}
		if !open {
			first, anyHot, open = i, false, true
		}
		last, anyHot = i, anyHot || isHot
	}
	flush()
	return inside
}
