package compute

import (
	"cmp"
	"slices"
	"strings"

	"github.com/mayday-sim/mayday/metric/detect"
	"github.com/mayday-sim/mayday/sim/record"
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
			if j, ok := s.opIndex(e, k.key); ok {
				tool = e.ops[j].tool
			}
		}
		e.signs = append(e.signs, sign{k.key, m.at, m.at, tool, m.kind})
		if tool != noTool {
			c := s.minute(tool, m.at/usPerMinute)
			c.guarded = true
			if m.kind == kindParked {
				c.parked++
			} else {
				c.throttled++
			}
			s.addHit(tool, hit{at: m.at, root: e.rootOrNone(), kind: m.kind, fault: -1})
		}
	}
}

// Incidents are found by the accumulating-evidence rule of package metric/detect, over each
// tool's calls in the order they were sent (docs/metrics.md, incidents): the rule is there,
// once; here are only what it reads (the calls) and what an incident row adds up over its
// span (the failed calls, the investigations hit, parks, throttles, retries and faults).

// packCall is a call as a tool's calls list keeps it: a detect.Call (its start in µs, never
// before the run's time 0, and two flags), which the rule reads as it is decoded.
func packCall(at int64, failed, capacity bool) uint64 {
	return uint64(detect.NewCall(max(at, 0), failed, capacity))
}

// hit is a disruption of an investigation at a tool: a failed or timed-out call, a park on
// the breaker or a throttle of the retry budget (disruptions' kinds an incident counts).
type hit struct {
	at    int64 // µs
	root  int64 // the investigation's root, -1 when its row never came
	kind  uint8
	fault int32 // number in Sink.faults, -1 for none
}

// callRef is a call of an investigation, kept until it settles: for the retries that
// followed each call (incidents.retries_sent) and the retry flag of the model's calls
// (tool_minutes.retries).
type callRef struct {
	key     record.OpKey
	hasKey  bool
	model   bool
	failed  bool
	tool    int32
	attempt int32
	start   int64 // µs
	span    uint64
	kind    uint8
	fault   int32
}

func (e *inv) rootOrNone() int64 {
	if e.seen {
		return e.root
	}
	return -1
}

func (s *Sink) addHit(tool int32, h hit) {
	for int(tool) >= len(s.hits) {
		s.hits = append(s.hits, nil)
	}
	s.hits[tool] = append(s.hits[tool], h)
}

// capacityRefusal reports whether a failed call was refused for capacity (a rate limit, a
// queue limit, load shedding) rather than failed: the simulator marks it with the attribute
// error = rate_limited or overloaded (mayday.attr.error in its OTLP export); an imported
// span with an error.type naming a rate limit or an overload, or an HTTP status of 429.
// RefusalAttrs are the span attributes capacityRefusal reads: what a reader of stored spans
// must give a failed span for it to be classed as the simulation classed it.
var RefusalAttrs = []string{"error", "mayday.attr.error", "error.type", "http.response.status_code", "http.status_code"}

// rateLimitWords are what an error.type naming a rate limit or an overload holds.
var rateLimitWords = []string{"ratelimit", "rate_limit", "too_many_requests", "toomanyrequests", "overloaded", "429"}

func capacityRefusal(r *record.Span) bool {
	for _, a := range r.Attrs {
		switch a.Key {
		case "error", "mayday.attr.error": // the second: mayday's own export, read as plain spans
			if a.Value == "rate_limited" || a.Value == "overloaded" {
				return true
			}
		case "error.type":
			v := strings.ToLower(a.Value)
			for _, w := range rateLimitWords {
				if strings.Contains(v, w) {
					return true
				}
			}
		case "http.response.status_code", "http.status_code":
			if a.Value == "429" {
				return true
			}
		}
	}
	return false
}

// settleCalls takes the calls of investigation e as it settles: its hits, the retries that
// followed each call, and which of its model calls were retries.
func (s *Sink) settleCalls(e *inv) {
	cs := e.calls
	if len(cs) == 0 {
		return
	}
	root := e.rootOrNone()
	for _, c := range cs {
		if c.failed && c.tool != noTool {
			kind := kindFailed
			if c.kind == kindTimedOut {
				kind = kindTimedOut
			}
			s.addHit(c.tool, hit{at: c.start, root: root, kind: kind, fault: c.fault})
		}
	}
	// A model call is a retry when the investigation's model call before it (by start, then
	// span id) failed.
	slices.SortFunc(cs, func(a, b callRef) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.span, b.span))
	})
	prevFailed, seen := false, false
	for _, c := range cs {
		if !c.model {
			continue
		}
		if seen && prevFailed && c.tool != noTool {
			s.minute(c.tool, c.start/usPerMinute).retries++
		}
		prevFailed, seen = c.failed, true
	}
	// The retries sent after each call: the call of the same tool and operation with the
	// next attempt number.
	slices.SortFunc(cs, func(a, b callRef) int {
		return cmp.Or(cmp.Compare(a.tool, b.tool), cmp.Compare(a.key.Investigation, b.key.Investigation),
			cmp.Compare(a.key.Step, b.key.Step), cmp.Compare(a.key.Revision, b.key.Revision), cmp.Compare(a.attempt, b.attempt))
	})
	for i, c := range cs {
		if !c.hasKey || c.tool == noTool {
			continue
		}
		for j := i + 1; j < len(cs) && cs[j].tool == c.tool && cs[j].hasKey && cs[j].key == c.key && cs[j].attempt <= c.attempt+1; j++ {
			if cs[j].attempt == c.attempt+1 {
				for int(c.tool) >= len(s.retried) {
					s.retried = append(s.retried, nil)
				}
				s.retried[c.tool] = append(s.retried[c.tool], c.start)
			}
		}
	}
}

// findIncidents runs the incident rule on every tool's calls and makes the rows of
// incidents, saturation and tool_minutes; it returns the failed calls inside incidents.
func (s *Sink) findIncidents(end int64) (int64, error) {
	order := make([]int32, 0, len(s.tools.list))
	for i := range s.tools.list {
		order = append(order, int32(i))
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(s.tools.list[a], s.tools.list[b]) })
	var inside int64
	windows := make([][]detect.Span, len(s.tools.list))
	var calls []detect.Call // the tool's calls in the order sent, 8 bytes each: the largest tool's are the end of a large run's peak
	for _, tool := range order {
		if int(tool) >= len(s.calls) || s.calls[tool].len() == 0 {
			continue
		}
		calls = decodeSorted(&s.calls[tool], calls, func(u uint64) detect.Call { return detect.Call(u) })
		s.calls[tool] = packedList{} // read once: the end of a large run holds one tool's calls, not two forms of every tool's
		res, err := detect.Incidents(calls, detect.Options{End: max(end, calls[len(calls)-1].At()),
			Reference: s.firstWindow, HasReference: s.hasWindow})
		if err != nil {
			return 0, err
		}
		windows[tool] = res.Incidents
		var hits []hit
		if int(tool) < len(s.hits) {
			hits = s.hits[tool]
			slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(a.at, b.at) })
		}
		var retried []int64
		if int(tool) < len(s.retried) {
			retried = s.retried[tool]
			slices.Sort(retried)
		}
		for _, w := range res.Incidents {
			row := s.incidentRow(tool, w, calls, hits, retried, res.Baseline)
			inside += row.FailedAttempts
			s.incidentRows = append(s.incidentRows, row)
		}
		if int(tool) < len(s.hits) {
			s.hits[tool] = nil
		}
		if int(tool) < len(s.retried) {
			s.retried[tool] = nil
		}
		for _, w := range res.Saturation {
			lo, hi := callRange(calls, w.Start, w.End)
			var refused int64
			for _, c := range calls[lo:hi] {
				if c.Capacity() {
					refused++
				}
			}
			s.saturationRows = append(s.saturationRows, Saturation{Tool: s.tools.list[tool], Start: s.at(w.Start), End: s.at(w.End),
				Minutes: float64(w.End-w.Start) / usPerMinute, Calls: int64(hi - lo), Refused: refused})
		}
	}
	slices.SortFunc(s.incidentRows, func(a, b Incident) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), strings.Compare(a.Tool, b.Tool))
	})
	for i := range s.incidentRows {
		s.incidentRows[i].Incident = int64(i + 1)
	}
	slices.SortFunc(s.saturationRows, func(a, b Saturation) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), strings.Compare(a.Tool, b.Tool))
	})
	for i := range s.saturationRows {
		s.saturationRows[i].Episode = int64(i + 1)
	}
	if s.opts.Tables {
		s.toolMinuteRows(windows)
	}
	return inside, nil
}

// callRange returns the indices [lo, hi) of the calls sent in [from, to).
func callRange(calls []detect.Call, from, to int64) (int, int) {
	lo, _ := slices.BinarySearchFunc(calls, from, func(c detect.Call, t int64) int { return cmp.Compare(c.At(), t) })
	hi, _ := slices.BinarySearchFunc(calls, to, func(c detect.Call, t int64) int { return cmp.Compare(c.At(), t) })
	return lo, hi
}

// incidentRow adds up an incident w of tool over its span [Start, End).
func (s *Sink) incidentRow(tool int32, w detect.Span, calls []detect.Call, hits []hit, retried []int64, baseline float64) Incident {
	lo, hi := callRange(calls, w.Start, w.End)
	row := Incident{Tool: s.tools.list[tool], Start: s.at(w.Start), End: s.at(w.End),
		Minutes: float64(w.End-w.Start) / usPerMinute, DetectedAt: s.at(calls[w.Alarm].At()), Calls: int64(hi - lo),
		Baseline: baseline, FaultIDs: []string{}}
	for _, c := range calls[lo:hi] {
		if c.Failed() {
			row.FailedAttempts++
		}
	}
	roots := map[int64]bool{}
	faults := map[int32]bool{}
	h0, _ := slices.BinarySearchFunc(hits, w.Start, func(h hit, t int64) int { return cmp.Compare(h.at, t) })
	for _, h := range hits[h0:] {
		if h.at >= w.End {
			break
		}
		if h.root >= 0 {
			roots[h.root] = true
		}
		switch h.kind {
		case kindParked:
			row.Parked++
		case kindThrottled:
			row.Throttled++
		default:
			if h.fault >= 0 {
				faults[h.fault] = true
			}
		}
	}
	row.AffectedInvestigations = int64(len(roots))
	for f := range faults {
		row.FaultIDs = append(row.FaultIDs, s.faults.list[f])
	}
	slices.Sort(row.FaultIDs)
	r0, _ := slices.BinarySearch(retried, w.Start)
	r1, _ := slices.BinarySearch(retried, w.End)
	row.RetriesSent = int64(r1 - r0)
	return row
}

// toolMinuteRows makes the rows of tool_minutes: every tool and minute with a call or a
// guard, and whether an incident of the tool covered part of the minute.
func (s *Sink) toolMinuteRows(windows [][]detect.Span) {
	keys := make([]tm, 0, s.minutes.len())
	s.minutes.each(func(k tm) {
		if k.tool != noTool {
			keys = append(keys, k)
		}
	}, unpackMinute)
	slices.SortFunc(keys, func(a, b tm) int {
		return cmp.Or(strings.Compare(s.tools.list[a.tool], s.tools.list[b.tool]), cmp.Compare(a.minute, b.minute))
	})
	s.minuteRows = slices.Grow(s.minuteRows, len(keys))
	for _, k := range keys {
		c, _ := s.minutes.get(k)
		from, to := k.minute*usPerMinute, (k.minute+1)*usPerMinute
		in := false
		if int(k.tool) < len(windows) {
			for _, w := range windows[k.tool] {
				if w.Start < to && w.End > from {
					in = true
					break
				}
			}
		}
		s.minuteRows = append(s.minuteRows, ToolMinute{Tool: s.tools.list[k.tool], Minute: k.minute, Start: s.at(from),
			Attempts: c.attempts, FailedAttempts: c.failed, Retries: c.retries, Refused: c.refused,
			Parked: c.parked, Throttled: c.throttled, Guarded: c.guarded, InIncident: in})
	}
}
