package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mayday-sim/mayday/metric/detect"
	"github.com/mayday-sim/mayday/sim/record"
)

// This file holds the reference computations of the definitions revised in docs/metrics.md
// (signs of trouble, incidents against a tool's own baseline, recovery episodes per step,
// goodput after faults, wasted tokens), written from those definitions in plain Go.

// refSign is one sign of trouble of an operation (docs/metrics.md, recovery episodes).
type refSign struct {
	inv, root   int64
	key         record.OpKey
	hasKey      bool
	tool        string
	kind        string
	at, knownAt int64 // µs
}

type refStep struct {
	inv  int64
	step int32
}

// refSigns lists every sign: failed and timed-out attempts from their send, invalid
// results, blocks, worker crashes (takeover spans: from the death to the lease's expiry),
// parks on a breaker and throttles of the retry budget; a lifecycle record is charged to
// the investigation's next keyed tool span, else its last.
func refSigns(c *record.Collector, invByID map[int64]*record.Investigation) []refSign {
	type keyed struct {
		start int64
		id    uint64
		key   record.OpKey
		tool  string
	}
	byInv := map[int64][]keyed{}
	opTool := map[record.OpKey]string{}
	var out []refSign
	root := func(id int64) int64 {
		if inv := invByID[id]; inv != nil {
			return inv.RootID
		}
		return 0
	}
	for i := range c.Spans {
		s := &c.Spans[i]
		if s.HasKey && (s.Operation == record.OpExecuteTool || s.Operation == record.OpInspect) {
			byInv[s.InvestigationID] = append(byInv[s.InvestigationID], keyed{tsMicros(s.Start), s.SpanID, s.OpKey, s.Tool})
			if _, ok := opTool[s.OpKey]; !ok {
				opTool[s.OpKey] = s.Tool
			}
		}
		// A refused model call names its operation too: a park or throttle on the model's
		// guards answers it at the same instant, so it is the model's.
		if s.HasKey && isModelCall(s) {
			byInv[s.InvestigationID] = append(byInv[s.InvestigationID], keyed{tsMicros(s.Start), s.SpanID, s.OpKey, "model"})
		}
	}
	for i := range c.Spans {
		s := &c.Spans[i]
		sg := refSign{inv: s.InvestigationID, root: root(s.InvestigationID), key: s.OpKey, hasKey: s.HasKey, tool: s.Tool,
			at: tsMicros(s.Start), knownAt: tsMicros(s.End)}
		switch {
		case s.Operation == record.OpExecuteTool && s.Status == record.StatusError:
			sg.kind = "failed"
		case s.Operation == record.OpExecuteTool && s.Status == record.StatusTimeout:
			sg.kind = "timed_out"
		case isModelCall(s) && isFailed(s):
			sg.tool, sg.kind = "model", "failed"
			if s.Status == record.StatusTimeout {
				sg.kind = "timed_out"
			}
		case s.Operation == record.OpExecuteTool && s.Status == record.StatusBlocked:
			sg.kind = "blocked"
		case s.Operation == record.OpValidate && s.Status == record.StatusInvalid:
			sg.kind = "invalid"
			if sg.tool == "" {
				sg.tool = opTool[s.OpKey]
			}
		case s.Operation == record.OpTakeover:
			// The worker died at the span's start; the lease told the fleet at its end.
			sg.kind = "crashed"
			sg.tool = opTool[s.OpKey]
		default:
			continue
		}
		out = append(out, sg)
	}
	for _, tr := range c.Transitions {
		var kind string
		switch {
		case tr.Action == "park" && tr.Reason == "breaker_open":
			kind = "parked"
		case tr.Action == "park" && tr.Reason == "retry_throttled":
			kind = "throttled"
		default:
			continue
		}
		at := tsMicros(tr.At)
		sg := refSign{inv: tr.InvestigationID, root: root(tr.InvestigationID), kind: kind, at: at, knownAt: at}
		// The keyed span at the same instant (the last by span id), else the first after
		// (the first by span id on a tie), else the last before.
		var next, prev *keyed
		for i, k := range byInv[tr.InvestigationID] {
			if k.start >= at && (next == nil || k.start < next.start || k.start == next.start && k.id < next.id) {
				next = &byInv[tr.InvestigationID][i]
			}
			if k.start <= at && (prev == nil || k.start > prev.start || k.start == prev.start && k.id > prev.id) {
				prev = &byInv[tr.InvestigationID][i]
			}
		}
		if next == nil || prev != nil && prev.start == at {
			next = prev
		}
		if next != nil {
			sg.key, sg.hasKey, sg.tool = next.key, true, next.tool
		}
		out = append(out, sg)
	}
	return out
}

// refWindows returns the first fault window's start and the last one's end (µs), ok false
// without a window.
func refWindows(c *record.Collector) (first, last int64, ok bool) {
	for _, f := range c.Faults {
		if !f.Window || f.End <= f.Start {
			continue
		}
		if !ok || tsMicros(f.Start) < first {
			first = tsMicros(f.Start)
		}
		if !ok || tsMicros(f.End) > last {
			last = tsMicros(f.End)
		}
		ok = true
	}
	return first, last, ok
}

// refCapacity reports a call refused for capacity (a rate limit, a queue limit, load
// shedding): a failed call whose span says error = rate_limited or overloaded, whose
// error.type names a rate limit, too many requests, an overload or 429, or whose HTTP
// status is 429. A refusal is evidence of saturation, never of an incident.
func refCapacity(s *record.Span) bool {
	if !isFailed(s) {
		return false
	}
	for _, a := range s.Attrs {
		v := strings.ToLower(a.Value)
		switch a.Key {
		case "error":
			if v == "rate_limited" || v == "overloaded" {
				return true
			}
		case "error.type":
			for _, name := range []string{"rate_limit", "ratelimit", "too_many_requests", "toomanyrequests", "overloaded", "429"} {
				if strings.Contains(v, name) {
					return true
				}
			}
		case "http.response.status_code", "http.status_code":
			if v == "429" {
				return true
			}
		}
	}
	return false
}

// refToolCalls lists each tool's calls (the model's included) for the incident rule, in the
// order they were sent: by start (µs); at the same instant answered calls first, then failed
// ones, then refusals (calls at one instant have no order of their own: this is the one the
// computation takes, by start then by these two flags).
func refToolCalls(calls []refCall) map[string][]detect.Call {
	out := map[string][]detect.Call{}
	for _, cl := range calls {
		if cl.tool == "" {
			continue
		}
		out[cl.tool] = append(out[cl.tool], detect.NewCall(tsMicros(cl.s.Start), isFailed(cl.s), refCapacity(cl.s)))
	}
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	for _, cs := range out {
		slices.SortStableFunc(cs, func(x, y detect.Call) int {
			return cmp.Or(cmp.Compare(x.At(), y.At()), cmp.Compare(b(x.Failed()), b(y.Failed())), cmp.Compare(b(x.Capacity()), b(y.Capacity())))
		})
	}
	return out
}

// refRuleSpans runs the incident rule (package detect, held to its definition by its own
// tests) on each tool's calls: the run's end closes a span still open, the first fault
// window's start is the baseline's reference.
func refRuleSpans(c *record.Collector, calls []refCall) map[string]refRule {
	first, _, hasWin := refWindows(c)
	end := tsMicros(runEnd(c))
	out := map[string]refRule{}
	for tool, cs := range refToolCalls(calls) {
		res, err := detect.Incidents(cs, detect.Options{End: max(end, cs[len(cs)-1].At()), Reference: first, HasReference: hasWin})
		if err != nil {
			panic(fmt.Sprintf("reference: the incident rule on %s: %v", tool, err))
		}
		out[tool] = refRule{cs, res}
	}
	return out
}

// refRule is a tool's calls, in the rule's order, and what the rule found in them.
type refRule struct {
	calls []detect.Call
	detect.Result
}

type refMinute struct {
	attempts, failed, retries, refused int64
	parked, throttled                  int64
	guarded, inIncident                bool
}

// tm is a tool's minute.
type tm struct {
	tool string
	m    int64
}

// refToolMinutes is every minute in which a tool received a call or was guarded: its
// calls, failures, retries, capacity refusals, parks and throttles, whether it was guarded,
// and whether one of the tool's incidents covers part of it.
func refToolMinutes(c *record.Collector, attempts []refCall, signs []refSign, incidents []refIncident) map[tm]*refMinute {
	mins := map[tm]*refMinute{}
	get := func(k tm) *refMinute {
		if mins[k] == nil {
			mins[k] = &refMinute{}
		}
		return mins[k]
	}
	for _, cl := range attempts {
		r := get(tm{cl.tool, minuteOf(cl.s.Start)})
		r.attempts++
		if isFailed(cl.s) {
			r.failed++
		}
		if refCapacity(cl.s) {
			r.refused++
		}
		if cl.retry {
			r.retries++
		}
	}
	for _, sg := range signs {
		if (sg.kind == "parked" || sg.kind == "throttled") && sg.tool != "" {
			r := get(tm{sg.tool, sg.at / 60_000_000})
			r.guarded = true
			if sg.kind == "parked" {
				r.parked++
			} else {
				r.throttled++
			}
		}
	}
	for _, sm := range c.Samples {
		if sm.BreakerState == "open" || sm.BreakerState == "half_open" || sm.Parked > 0 {
			get(tm{sm.Tool, minuteOf(sm.At) - 1}).guarded = true
		}
	}
	for k, r := range mins {
		from, to := k.m*60_000_000, (k.m+1)*60_000_000
		for _, inc := range incidents {
			if inc.Tool == k.tool && inc.Start < to && inc.End > from {
				r.inIncident = true
			}
		}
	}
	return mins
}

// refIncidents finds the incidents and the failed calls inside them. The windows are the
// rule's (refRuleSpans); every count of a row is recomputed here from the records over its
// window [start, end): the tool's calls sent in it, failed among them, the roots of the
// investigations disrupted in it (a failed or timed-out call, a park or a throttle at the
// tool; an investigation without a record has no known root), its parks and throttles, the
// calls in it that were retried (the same operation's next attempt at the tool, whenever
// it went out), and the faults of its failed calls.
func refIncidents(c *record.Collector, attempts []refCall, signs []refSign) ([]refIncident, int64) {
	rules := refRuleSpans(c, attempts)
	known := map[int64]bool{}
	for _, inv := range c.Investigations {
		known[inv.InvestigationID] = true
	}
	// next: whether a call has a retry (the same operation's next attempt at the tool).
	type try struct {
		tool    string
		key     record.OpKey
		attempt int32
	}
	next := map[try]bool{}
	for _, cl := range attempts {
		if cl.s.HasKey {
			next[try{cl.tool, cl.s.OpKey, cl.s.Attempt - 1}] = true
		}
	}
	var incidents []refIncident
	var inside int64
	for _, tool := range slices.Sorted(maps.Keys(rules)) {
		res := rules[tool]
		for _, w := range res.Incidents {
			inc := refIncident{Tool: tool, Start: w.Start, End: w.End, DetectedAt: res.calls[w.Alarm].At(), Baseline: res.Baseline,
				FaultIDs: []string{}}
			in := func(t string, at int64) bool { return t == tool && at >= w.Start && at < w.End }
			faults := map[string]bool{}
			roots := map[int64]bool{}
			for _, cl := range attempts {
				s := cl.s
				if !in(cl.tool, tsMicros(s.Start)) {
					continue
				}
				inc.Calls++
				if isFailed(s) {
					inc.Failed++
					if s.FaultID != "" {
						faults[s.FaultID] = true
					}
				}
				if s.HasKey && next[try{cl.tool, s.OpKey, s.Attempt}] {
					inc.Retries++
				}
			}
			for _, sg := range signs {
				if !in(sg.tool, sg.at) {
					continue
				}
				switch sg.kind {
				case "failed", "timed_out", "parked", "throttled":
					if known[sg.inv] {
						roots[sg.root] = true
					}
				}
				switch sg.kind {
				case "parked":
					inc.Parked++
				case "throttled":
					inc.Throttled++
				}
			}
			inc.Affected = int64(len(roots))
			for f := range faults {
				inc.FaultIDs = append(inc.FaultIDs, f)
			}
			slices.Sort(inc.FaultIDs)
			inside += inc.Failed
			incidents = append(incidents, inc)
		}
	}
	slices.SortFunc(incidents, func(a, b refIncident) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Tool, b.Tool))
	})
	return incidents, inside
}

// refSaturation is each saturation span of the rule (refusals far above the tool's
// baseline) with its calls and refusals counted here over [start, end).
func refSaturation(c *record.Collector, attempts []refCall) []refSaturationSpan {
	var out []refSaturationSpan
	for tool, res := range refRuleSpans(c, attempts) {
		for _, w := range res.Saturation {
			sp := refSaturationSpan{Tool: tool, Start: w.Start, End: w.End}
			for _, cl := range attempts {
				if at := tsMicros(cl.s.Start); cl.tool == tool && at >= w.Start && at < w.End {
					sp.Calls++
					if refCapacity(cl.s) {
						sp.Refused++
					}
				}
			}
			out = append(out, sp)
		}
	}
	slices.SortFunc(out, func(a, b refSaturationSpan) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Tool, b.Tool))
	})
	return out
}

type refSaturationSpan struct {
	Tool           string
	Start, End     int64 // µs
	Calls, Refused int64
}

// refEpisodes builds one episode per disrupted step: from its first sign to its first
// valid result, else its investigation's end, else the run's end.
func refEpisodes(c *record.Collector, signs []refSign, invByID map[int64]*record.Investigation, end int64) []refEpisode {
	first := map[refStep]refSign{}
	count, failed := map[refStep]int64{}, map[refStep]int64{}
	for _, sg := range signs {
		if !sg.hasKey {
			continue
		}
		k := refStep{sg.key.Investigation, sg.key.Step}
		count[k]++
		if sg.kind == "failed" || sg.kind == "timed_out" {
			failed[k]++
		}
		if f, ok := first[k]; !ok || signBefore(sg, f) {
			first[k] = sg
		}
	}
	valid := map[refStep][]int64{}
	for i := range c.Spans {
		s := &c.Spans[i]
		if s.Operation == record.OpValidate && s.Status == record.StatusOK && s.HasKey {
			k := refStep{s.OpKey.Investigation, s.OpKey.Step}
			valid[k] = append(valid[k], tsMicros(s.End))
		}
	}
	var out []refEpisode
	for k, sg := range first {
		e := refEpisode{OpKey: stepKeyString(k), Tool: sg.tool, Start: sg.at, Outcome: "in_flight", End: tsMicros(end),
			FirstOp: opKeyString(sg.key), FirstKind: sg.kind, DetectedAt: sg.knownAt, Signs: count[k],
			Root: sg.root, Investigation: sg.inv, FailedAttempts: failed[k]}
		best := int64(-1)
		for _, v := range valid[k] {
			if v >= sg.at && (best < 0 || v < best) {
				best = v
			}
		}
		inv := invByID[sg.inv]
		if inv != nil {
			e.EndedAs = inv.FinalState
		}
		switch {
		case best >= 0:
			e.End, e.Outcome = best, "recovered"
		case inv != nil && inv.Ended:
			e.End, e.Outcome = tsMicros(inv.EndedAt), "ended"
		}
		e.Seconds = float64(e.End-e.Start) / 1e6
		e.Detection, e.Repair = float64(e.DetectedAt-e.Start)/1e6, float64(e.End-e.DetectedAt)/1e6
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b refEpisode) int { return cmp.Compare(a.OpKey, b.OpKey) })
	return out
}

// signBefore orders the signs of a step: by instant, then revision, then kind in causal
// order (a refused call before the park that answers it).
func signBefore(a, b refSign) bool {
	rank := func(kind string) int {
		return slices.Index([]string{"failed", "timed_out", "blocked", "invalid", "crashed", "parked", "throttled"}, kind)
	}
	return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.key.Revision, b.key.Revision), cmp.Compare(rank(a.kind), rank(b.kind))) < 0
}

func stepKeyString(k refStep) string {
	return strconv.FormatInt(k.inv, 10) + "/" + strconv.FormatInt(int64(k.step), 10)
}

// spanKind is a span's kind attribute, "" when it has none.
func spanKind(s *record.Span) string {
	for _, a := range s.Attrs {
		if a.Key == "kind" {
			return a.Value
		}
	}
	return ""
}

// refWastedTokens counts the tokens of investigations that did not complete (or whose root
// did not) and, for the others, of model turns that caused work that never passed
// validation or was already caused by an earlier turn.
func refWastedTokens(c *record.Collector, invByID map[int64]*record.Investigation) (wasted, all float64) {
	for _, inv := range c.Investigations {
		all += float64(inv.Tokens)
	}
	for _, w := range refWastedTokensByInvestigation(c, invByID) {
		wasted += w
	}
	return wasted, all
}

// refWastedTokensByInvestigation is every investigation's wasted tokens: all its tokens
// when it or its root did not complete, else those of its wasted model turns (at most its
// tokens).
func refWastedTokensByInvestigation(c *record.Collector, invByID map[int64]*record.Investigation) map[int64]float64 {
	plans := map[uint64]*record.Span{}
	for i := range c.Spans {
		if s := &c.Spans[i]; s.Operation == record.OpPlan && spanKind(s) == "model_turn" {
			plans[s.SpanID] = s
		}
	}
	validOp := map[record.OpKey]bool{}
	for i := range c.Spans {
		if s := &c.Spans[i]; s.Operation == record.OpValidate && s.Status == record.StatusOK && s.HasKey {
			validOp[s.OpKey] = true
		}
	}
	causers := map[record.OpKey][]*record.Span{}
	for i := range c.Spans {
		s := &c.Spans[i]
		if s.Operation != record.OpExecuteTool || !s.HasKey {
			continue
		}
		for _, id := range s.CausedBy {
			if p := plans[id]; p != nil && !slices.Contains(causers[s.OpKey], p) {
				causers[s.OpKey] = append(causers[s.OpKey], p)
			}
		}
	}
	bad := map[uint64]bool{}
	for key, ps := range causers {
		slices.SortFunc(ps, func(a, b *record.Span) int {
			return cmp.Or(cmp.Compare(tsMicros(a.Start), tsMicros(b.Start)), cmp.Compare(a.SpanID, b.SpanID))
		})
		for i, p := range ps {
			if i > 0 || !validOp[key] {
				bad[p.SpanID] = true
			}
		}
	}
	turnWaste := map[int64]float64{}
	for id := range bad {
		p := plans[id]
		turnWaste[p.InvestigationID] += float64(p.InputTokens + p.OutputTokens)
	}
	done := func(id int64) bool { inv := invByID[id]; return inv != nil && inv.FinalState == "completed" }
	out := map[int64]float64{}
	for _, inv := range c.Investigations {
		if !(done(inv.InvestigationID) && done(inv.RootID)) {
			out[inv.InvestigationID] = float64(inv.Tokens)
		} else {
			out[inv.InvestigationID] = math.Min(turnWaste[inv.InvestigationID], float64(inv.Tokens))
		}
	}
	return out
}

// refRecoveryQuantile is the time by which a share p of all episodes had recovered: the
// cumulative incidence of recovery, with an episode that ended unrecovered as a competing
// event that removes it for good and an in-flight one as right-censored (docs/metrics.md,
// median_recovery_time). Written as the product-limit recursion over distinct episode
// lengths; NaN when the curve stays below p (to within 1e-9) or there is no episode.
func refRecoveryQuantile(episodes []refEpisode, p float64) float64 {
	byTime := map[float64][3]float64{} // recovered, never, censored
	for _, e := range episodes {
		c := byTime[e.Seconds]
		switch e.Outcome {
		case "recovered":
			c[0]++
		case "ended":
			c[1]++
		default:
			c[2]++
		}
		byTime[e.Seconds] = c
	}
	atRisk := float64(len(episodes))
	open, share := 1.0, 0.0
	for _, t := range slices.Sorted(maps.Keys(byTime)) {
		c := byTime[t]
		share += open * c[0] / atRisk
		if share >= p-1e-9 {
			return t
		}
		open *= 1 - (c[0]+c[1])/atRisk
		atRisk -= c[0] + c[1] + c[2]
	}
	return math.NaN()
}

// refEpisodeRecoveryRate is recovered episodes / episodes; NaN without an episode.
func refEpisodeRecoveryRate(episodes []refEpisode) float64 {
	var rec float64
	for _, e := range episodes {
		if e.Outcome == "recovered" {
			rec++
		}
	}
	return ratio(rec, float64(len(episodes)))
}
