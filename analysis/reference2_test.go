package analysis

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/stat"

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

// hotMinute is the incident test: at least 5 failures of n, and a Chernoff bound on the
// binomial tail at the baseline p0 of at most 1e-4.
func hotMinute(f, n int64, p0 float64, defined bool) bool {
	if f < 5 || !defined || float64(f) <= float64(n)*p0 {
		return false
	}
	if p0 <= 0 {
		return true
	}
	if p0 >= 1 {
		return false
	}
	q := float64(f) / float64(n)
	kl := q * math.Log(q/p0)
	if q < 1 {
		kl += (1 - q) * math.Log((1-q)/(1-p0))
	}
	return float64(n)*kl >= math.Log(1e4)
}

type refMinute struct {
	attempts, failed, retries int64
	parked, throttled         int64
	guarded, hot              bool
	baseline                  float64 // the tool's
}

// tm is a tool's minute.
type tm struct {
	tool string
	m    int64
}

// refToolMinutes is the incident test of every minute in which a tool received a call or
// was guarded: its calls, failures, retries, parks and throttles, its tool's baseline, and
// whether it is hot.
func refToolMinutes(c *record.Collector, attempts []refCall, signs []refSign) map[tm]*refMinute {
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
	firstWin, _, hasWin := refWindows(c)
	perTool := map[string][]int64{}
	for k := range mins {
		perTool[k.tool] = append(perTool[k.tool], k.m)
	}
	for tool, ms := range perTool {
		slices.Sort(ms)
		var f, n, fPre, nPre int64
		for _, m := range ms {
			r := mins[tm{tool, m}]
			f, n = f+r.failed, n+r.attempts
			if hasWin && m < firstWin/60_000_000 {
				fPre, nPre = fPre+r.failed, nPre+r.attempts
			}
		}
		pRef, okRef := float64(f)/float64(n), n > 0
		if nPre > 0 {
			pRef, okRef = float64(fPre)/float64(nPre), true
		}
		var fq, nq int64
		for _, m := range ms {
			r := mins[tm{tool, m}]
			if !hotMinute(r.failed, r.attempts, pRef, okRef) {
				fq, nq = fq+r.failed, nq+r.attempts
			}
		}
		base := 0.0
		if nq > 0 {
			base = float64(fq) / float64(nq)
		}
		for _, m := range ms {
			r := mins[tm{tool, m}]
			r.baseline, r.hot = base, hotMinute(r.failed, r.attempts, base, true)
		}
	}
	return mins
}

// refIncidents finds the incidents and the failed attempts inside them.
func refIncidents(c *record.Collector, attempts []refCall, signs []refSign) ([]refIncident, int64) {
	mins := refToolMinutes(c, attempts, signs)
	perTool := map[string][]int64{}
	for k := range mins {
		perTool[k.tool] = append(perTool[k.tool], k.m)
	}
	var incidents []refIncident
	var inside int64
	for tool, ms := range perTool {
		slices.Sort(ms)
		var run []int64
		flush := func() {
			inc := refIncident{Tool: tool, FirstMinute: run[0], EndMinute: run[len(run)-1] + 1}
			for _, m := range run {
				if mins[tm{tool, m}].hot {
					inc.Hot++
				}
				if mins[tm{tool, m}].guarded {
					inc.Guarded++
				}
			}
			if inc.Hot > 0 {
				incidents = append(incidents, inc)
			}
			run = run[:0]
		}
		for _, m := range ms {
			r := mins[tm{tool, m}]
			if !r.hot && !r.guarded {
				continue
			}
			if len(run) > 0 && m-run[len(run)-1] > 3 {
				flush()
			}
			run = append(run, m)
		}
		if len(run) > 0 {
			flush()
		}
	}
	// next: whether an attempt has a retry (the same operation's next attempt at the tool).
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
	for i := range incidents {
		inc := &incidents[i]
		roots := map[int64]bool{}
		faults := map[string]bool{}
		in := func(tool string, m int64) bool { return tool == inc.Tool && m >= inc.FirstMinute && m < inc.EndMinute }
		for _, cl := range attempts {
			s := cl.s
			if !in(cl.tool, minuteOf(s.Start)) {
				continue
			}
			if isFailed(s) {
				inc.Failed++
				if s.FaultID != "" {
					faults[s.FaultID] = true
				}
			}
			if s.HasKey && next[try{cl.tool, s.OpKey, s.Attempt}] {
				inc.Retries++ // its retry, sent whenever: a hang's go out after the timeouts
			}
		}
		for _, sg := range signs {
			if !in(sg.tool, sg.at/60_000_000) {
				continue
			}
			switch sg.kind {
			case "failed", "timed_out", "parked", "throttled":
				roots[sg.root] = true
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
	}
	slices.SortFunc(incidents, func(a, b refIncident) int {
		return cmp.Or(cmp.Compare(a.FirstMinute, b.FirstMinute), cmp.Compare(a.Tool, b.Tool))
	})
	return incidents, inside
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

// refGoodputRecovery is goodput_recovery_time and goodput_recovered from valid results per
// minute: the steady state is the second half of the minutes from the first arrival to the
// first fault window (at least 5 of them); a 5-minute window is back when its valid results
// reach 0.9·5·mean − 2.326·√5·sd of the steady state's minutes. Both NaN when nothing can
// be tested; recovered 0 when tested windows exist and none is back.
func refGoodputRecovery(c *record.Collector, end int64) (seconds, recovered float64) {
	first, last, ok := refWindows(c)
	if !ok {
		return math.NaN(), math.NaN()
	}
	minutes := end/60_000_000 + 1
	valid := make([]float64, minutes)
	for i := range c.Spans {
		s := &c.Spans[i]
		if s.Operation == record.OpValidate && s.Status == record.StatusOK {
			valid[minuteOf(s.End)]++
		}
	}
	firstArrival, lastArrival := int64(math.MaxInt64), int64(-1)
	for _, inv := range c.Investigations {
		if inv.ParentID == 0 {
			firstArrival = min(firstArrival, minuteOf(inv.ArrivedAt))
			lastArrival = max(lastArrival, minuteOf(inv.ArrivedAt))
		}
	}
	faultMinute := first / 60_000_000
	from := firstArrival + (faultMinute-firstArrival+1)/2
	var steady []float64
	for m := max(from, 0); m < faultMinute && m < minutes; m++ {
		steady = append(steady, valid[m])
	}
	if len(steady) < 5 {
		return math.NaN(), math.NaN()
	}
	base, sd := stat.MeanStdDev(steady, nil)
	if base <= 0 {
		return math.NaN(), math.NaN()
	}
	threshold := 4.5*base - 2.326*math.Sqrt(5)*sd
	recovered = math.NaN()
	for m := last / 60_000_000; m+4 <= lastArrival && m+4 < minutes; m++ {
		recovered = 0
		sum := 0.0
		for j := m; j <= m+4; j++ {
			sum += valid[j]
		}
		if sum >= threshold {
			return math.Max(0, float64(m*60_000_000-last)/1e6), 1
		}
	}
	return math.NaN(), recovered
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
