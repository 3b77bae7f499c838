package analysis

import (
	"cmp"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mayday-sim/mayday/sim/record"
)

// Building mayday's records from the spans of a GenAI or OpenInference trace. The rules
// are documented in docs/import.md; this file is their one implementation.

// DefaultRetryWindow is how long after a failed attempt a new span of the same tool under
// the same parent still counts as its retry, when neither a tool call id nor an attempt
// attribute says so.
const DefaultRetryWindow = 5 * time.Minute

// inInv is one investigation: an agent span, or the root of a trace without one.
type inInv struct {
	span      *inSpan // the agent span (or the trace's root span)
	implicit  bool    // no agent span: the root span stands for the investigation
	parent    *inInv
	id        int64
	root      *inInv
	depth     int32
	members   []*inSpan // its spans other than agent spans, in start order
	rec       record.Investigation
	trans     []record.Transition // its human steps' transitions
	trace     string              // the trace of its agent span (hex)
	sessionID *string             // session(), once read
}

// inOp is one logical tool operation: its attempts in order.
type inOp struct {
	step     int32
	tool     string
	args     string // the first attempt's arguments, as the trace records them
	lastStep int    // the agent-loop step of its latest attempt
	attempts []*inSpan
}

// built is what one generic run becomes.
type built struct {
	invs  []*inInv
	spans []record.Span
	trans []record.Transition
	zero  int64              // Unix nanoseconds of time 0
	next  uint64             // the last span id given
	attrs arena[record.Attr] // the spans' attribute lists, many to a block
}

// buildGeneric maps a run of plain spans (any convention but mayday's own) to records.
func buildGeneric(r *inRun, window time.Duration, st *importStats) *built {
	return buildPart(r, st, runParams(r, window))
}

// runParams is what building any part of run r takes from the whole run: from its spill
// when it spilled (import_spill.go), else from its spans.
func runParams(r *inRun, window time.Duration) buildParams {
	if sp := r.spill; sp != nil {
		return buildParams{zero: minuteFloor(sp.zero), rules: retryRules{window: window, callIDsMark: sp.repeat}}
	}
	return buildParams{zero: timeZero(r.spans), rules: retryRules{window: window, callIDsMark: callIDsRepeat(r)}}
}

// buildParams is what building a part of a run takes from the whole run: its time 0, its
// retry rules, and the investigation and span ids the parts before it gave (import_spill.go).
type buildParams struct {
	zero      int64
	rules     retryRules
	firstInv  int64
	firstSpan uint64
}

// buildPart maps the spans of r, a run or a part of one holding whole groups of joined
// traces, to records.
func buildPart(r *inRun, st *importStats, p buildParams) *built {
	b := &built{zero: p.zero}
	linkParents(r)
	st.CyclesBroken = breakCycles(r)
	toolResultsReported(r)
	agentChains(r)
	agentWrappers(r)
	nestedModelTurns(r)
	b.invs = investigations(r, st, p.firstInv)
	b.next = spanIDs(b.invs, p.firstSpan)
	// Every span kept, and a validation at most per tool attempt: room for them all at once,
	// rather than a slice of records copied at each growth.
	room := int(b.next - p.firstSpan)
	for _, inv := range b.invs {
		for _, s := range inv.members {
			if s.role == roleTool {
				room++
			}
		}
	}
	b.spans = make([]record.Span, 0, room)
	for _, inv := range b.invs {
		b.investigation(inv, p.rules)
	}
	sortSpans(b.spans, p.firstSpan)
	return b
}

// sortByIndex sorts s by cmp, stably, as slices.SortStableFunc would: the sort moves
// indices (ties kept in their order), and each element then moves once to its place
// (records are a few hundred bytes, and their moves, with the collector's write barriers,
// were most of sorting them).
func sortByIndex[T any](s []T, cmp func(x, y *T) int) {
	idx := make([]int32, len(s))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		if c := cmp(&s[a], &s[b]); c != 0 {
			return c
		}
		return int(a - b)
	})
	permute(s, idx)
}

// permute moves element idx[i] of s to i, each element once (idx is a permutation, which it
// leaves spent): it follows each cycle of the permutation.
func permute[T any](s []T, idx []int32) {
	for i := range idx {
		if idx[i] < 0 {
			continue
		}
		tmp := s[i]
		j := i
		for {
			k := int(idx[j])
			idx[j] = -1
			if k == i {
				s[j] = tmp
				break
			}
			s[j] = s[k]
			j = k
		}
	}
}

// sortSpans sorts spans by SpanID. A part's ids are first+1 to first+len(spans), each
// once (spanIDs, then a validation's): each span then goes to its place, in one pass that
// moves a span at most once more than it must. Sorting the records themselves, a few
// hundred bytes each, was a twentieth of an import's CPU. Any other ids are sorted.
func sortSpans(spans []record.Span, first uint64) {
	n := uint64(len(spans))
	placed := make([]bool, n)
	for i := range spans {
		k := spans[i].SpanID - first - 1 // past n when the id is first or below
		if k >= n || placed[k] {
			slices.SortFunc(spans, func(x, y record.Span) int { return cmp.Compare(x.SpanID, y.SpanID) })
			return
		}
		placed[k] = true
	}
	for i := range spans {
		for k := spans[i].SpanID - first - 1; k != uint64(i); k = spans[i].SpanID - first - 1 {
			spans[i], spans[k] = spans[k], spans[i]
		}
	}
}

// linkParents points each span of r at its parent span (up), looked up once by key for
// every pass of the build that walks up the tree; a parent not in r leaves it nil.
func linkParents(r *inRun) {
	for _, s := range r.spans {
		s.up = nil
		if s.parent != "" {
			s.up = r.byKey[s.parent]
		}
	}
}

// agentChains makes agents of the chain spans (a convention's ChainKinds) that stand where
// an agent does: a trace's root span, or the span a tool call ran, which is a sub-agent. A
// chain under a chain or a model call is a step of its agent, and a chain whose parent
// never arrived is left a link (what it stood under is not known).
func agentChains(r *inRun) {
	for _, s := range r.spans {
		if !s.chain || s.cycle {
			continue
		}
		if s.parent == "" {
			s.role = roleAgent
		} else if p := s.up; p != nil && p.role == roleTool {
			s.role = roleAgent
		}
	}
}

// nestedModelTurns keeps one model turn of a model call that two instrumentations both
// recorded, one span in the other: Anthropic's and OpenAI's SDKs trace their own calls
// (a GenAI client span) under OpenInference's or OpenLLMetry's span of the same call, and
// LangChain's model span holds the client library's. A model turn whose parent, or whose
// parent's parent through a span of no role, is a model turn is that turn again: the outer
// one stays (it is what the library the user wrote against recorded), unless only the inner
// one carries the call's tokens. The other is a span of no role, kept as a link.
func nestedModelTurns(r *inRun) {
	hasTokens := func(s *inSpan) bool {
		in, out := s.convention().tokens(s)
		return in+out > 0
	}
	for _, s := range r.spans {
		if s.role != roleModel {
			continue
		}
		outer := s.up
		if outer != nil && outer.role == roleOther {
			outer = outer.up
		}
		if outer == nil || outer.role != roleModel || outer == s {
			continue
		}
		if !hasTokens(outer) && hasTokens(s) {
			outer.role = roleOther
		} else {
			s.role = roleOther
		}
	}
}

// agentWrappers folds into an agent the agent spans nested in it when it does no work of
// its own (no tool call, model turn or other step outside them): the outer span only wraps
// the agent run, as the OpenAI Agents SDK's workflow span (its trace's root, an AGENT in
// OpenInference) wraps the agent it runs, or a run handed from one agent to the next. The
// nested spans become steps of the outer agent, which is the investigation. An agent nested
// under an agent that works stays a sub-agent, and so does one reached through a tool call:
// that call is its outer agent's own work.
func agentWrappers(r *inRun) {
	findAncestry(r)
	own := map[*inSpan]bool{}
	nested := map[*inSpan][]*inSpan{}
	for _, s := range r.spans {
		switch p := s.up; {
		case s.role == roleOther:
		case s.role != roleAgent:
			if a := s.anc.agent; a != nil {
				own[a] = true
			}
		case p != nil && p.anc.agent != nil:
			nested[p.anc.agent] = append(nested[p.anc.agent], s)
		}
	}
	for outer, inner := range nested {
		if !own[outer] {
			for _, s := range inner {
				s.role = roleOther
			}
		}
	}
}

// timeZero is the first span's start, down to the whole minute (UTC): minute 0 of the run.
func timeZero(spans []*inSpan) int64 {
	first := int64(0)
	for i, s := range spans {
		if i == 0 || s.start < first {
			first = s.start
		}
	}
	return minuteFloor(first)
}

// minuteFloor is a Unix time down to its whole minute: a run's time 0 from its first start.
func minuteFloor(unixNano int64) int64 { return unixNano - unixNano%int64(time.Minute) }

// breakCycles cuts the parent link that closes a loop of parent links (a span that is its
// own parent, or an ancestor of its parent), so that every walk up the tree ends; it
// returns how many links it cut. The walk is iterative, so a chain of any depth is safe.
func breakCycles(r *inRun) int {
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[*inSpan]uint8, len(r.spans))
	cut := 0
	var path []*inSpan
	for _, s := range r.spans {
		path = path[:0]
		for cur := s; cur != nil && state[cur] == unseen; {
			state[cur] = onPath
			path = append(path, cur)
			p := cur.up
			if p != nil && state[p] == onPath {
				cur.parent, cur.up, cur.cycle = "", nil, true
				cut++
				break
			}
			cur = p
		}
		for _, x := range path {
			state[x] = done
		}
	}
	return cut
}

// findAncestry finds, for every span of r, its nearest agent ancestor (itself when it is
// one; nil when it has none) and the top of its chain (the trace's root, or the top of an
// orphan fragment whose parent span is missing), and holds them on the span (anc). Parents
// are walked iteratively after breakCycles, each span once.
func findAncestry(r *inRun) {
	for _, s := range r.spans {
		s.anc = spanAncestry{}
	}
	var path []*inSpan
	for _, s := range r.spans {
		path = path[:0]
		var agent, top *inSpan
		cur := s
		for {
			if cur.anc.top != nil {
				agent, top = cur.anc.agent, cur.anc.top
				break
			}
			path = append(path, cur)
			p := cur.up
			if p == nil {
				top = cur
				break
			}
			cur = p
		}
		// path runs from s up to the first span already known (exclusive) or the top:
		// fill it from the top down, so each span's agent is its nearest.
		for i := len(path) - 1; i >= 0; i-- {
			x := path[i]
			if x.role == roleAgent {
				agent = x
			}
			x.anc = spanAncestry{agent: agent, top: top}
		}
	}
}

// investigations finds every investigation of the run, its parent and members, and numbers
// them by start. Each agent span is an investigation; a span belongs to its nearest agent
// ancestor. Spans of a trace with no agent ancestor belong to the trace's home
// investigation: its root agent span when the root is an agent, else the trace itself
// (its root span standing for the agent, or, when the root span is missing, every orphan
// fragment of the trace together). An agent span with no agent ancestor is a sub-agent of
// its trace's home investigation when there is one, else a root, which a link or a shared
// session id may then join to the run it was started from (joinTraces).
func investigations(r *inRun, st *importStats, firstID int64) []*inInv {
	findAncestry(r)
	byAgent := map[*inSpan]*inInv{}
	var invs []*inInv
	newInv := func(span *inSpan, implicit bool) *inInv {
		inv := &inInv{span: span, implicit: implicit, trace: span.traceHex}
		invs = append(invs, inv)
		return inv
	}
	for _, s := range r.spans {
		if s.role == roleAgent {
			byAgent[s] = newInv(s, false)
		}
	}
	traces := map[string]*traceInfo{}
	var order []string
	for _, s := range r.spans {
		t := traces[s.traceHex]
		if t == nil {
			t = &traceInfo{}
			traces[s.traceHex] = t
			order = append(order, s.traceHex)
		}
		top := s.anc.top
		if top.parent == "" {
			t.root = top
		} else if top == s {
			t.orphans = append(t.orphans, s)
		}
		if s.anc.agent == nil {
			t.loose = append(t.loose, s)
			if s.role != roleOther {
				t.roleSpans++
			}
		} else {
			t.agents++
		}
	}
	st.MissingParents = 0
	for _, h := range order {
		t := traces[h]
		st.MissingParents += len(t.orphans)
		if t.root == nil {
			st.MissingRoots++
		}
		switch {
		case t.root != nil && t.root.role == roleAgent:
			t.home = byAgent[t.root]
		case t.roleSpans > 0 || t.agents == 0:
			span := t.root
			if span == nil {
				span = syntheticRoot(r, h, t.loose)
				st.OrphanFragments += len(t.orphans)
			}
			t.home = newInv(span, true)
		}
		for _, s := range t.loose {
			if t.home != nil && (s != t.home.span || s.role != roleOther) {
				s.inv = t.home
				t.home.members = append(t.home.members, s)
			}
		}
	}
	for _, s := range r.spans {
		a := s.anc.agent
		if a == nil {
			continue
		}
		inv := byAgent[a]
		s.inv = inv
		if s != a {
			inv.members = append(inv.members, s)
			continue
		}
		if p := s.up; p != nil && p.anc.agent != nil {
			inv.parent = byAgent[p.anc.agent]
		} else if home := traces[s.traceHex].home; home != nil && home != inv {
			inv.parent = home
		}
	}
	joinTraces(r, invs, byAgent, traces, st)
	slices.SortFunc(invs, func(x, y *inInv) int { return spanOrder(x.span, y.span) })
	for i, inv := range invs {
		inv.id = firstID + int64(i+1)
	}
	for _, inv := range invs {
		inv.rootAndDepth()
		slices.SortFunc(inv.members, spanOrder)
	}
	return invs
}

// traceInfo is what investigations learns of one trace.
type traceInfo struct {
	root      *inSpan   // the span without a parent, nil when it is missing
	orphans   []*inSpan // tops of fragments whose parent span is missing
	loose     []*inSpan // spans without an agent ancestor
	roleSpans int       // loose spans of a role
	agents    int       // spans under (or being) an agent span
	home      *inInv
}

// syntheticRoot stands for a trace's missing root span: it spans the trace's loose spans,
// and it ended in error when the last of them to end did (a run whose top span was never
// sent is often one that failed).
func syntheticRoot(r *inRun, trace string, loose []*inSpan) *inSpan {
	s := &inSpan{run: r, traceHex: trace, key: trace + "/missing-root", name: "missing root span", role: roleOther,
		status: "ok", missingRoot: true}
	var last *inSpan
	for i, x := range loose {
		if i == 0 || x.start < s.start {
			s.start = x.start
		}
		if x.end == 0 {
			continue
		}
		if x.end > s.end {
			s.end = x.end
		}
		if (x.role == roleTool || x.role == roleModel) && (last == nil || x.end >= last.end) {
			last = x
		}
	}
	if last != nil && last.status != "ok" {
		s.status, s.code, s.errType, s.msg = last.status, tracepb.Status_STATUS_CODE_ERROR, last.errType, last.msg
	}
	return s
}

// joinTraces makes a root investigation a sub-agent of the investigation it was started
// from when its trace says so: a span link from its agent span to a span of another trace,
// else a session (conversation, thread) id shared with an investigation of another trace
// that was running when it began (the latest such). A join never makes a loop.
//
// The session rule is a sweep over each session's investigations in start order, so that a
// conversation of many turns (each a trace of its own, one id) costs its length, not its
// square: an investigation that ended before one began has ended before every later one
// begins too, and leaves the sweep for good.
func joinTraces(r *inRun, invs []*inInv, byAgent map[*inSpan]*inInv, traces map[string]*traceInfo, st *importStats) {
	invOf := func(s *inSpan) *inInv {
		if a := s.anc.agent; a != nil {
			return byAgent[a]
		}
		return traces[s.traceHex].home
	}
	top := newInvTops(invs)
	join := func(inv, to *inInv) {
		inv.parent = to
		top.link(inv, to)
		st.JoinedTraces++
	}
	sessions := map[string][]*inInv{}
	var ids []string // the sessions in the order first met, so that joins never follow map order
	for _, inv := range invs {
		if id := inv.session(); id != "" {
			if _, seen := sessions[id]; !seen {
				ids = append(ids, id)
			}
			sessions[id] = append(sessions[id], inv)
		}
	}
	for _, inv := range invs {
		if inv.parent != nil {
			continue
		}
		for _, l := range inv.span.links {
			if !l.ok {
				continue
			}
			if p := r.byKey[l.key]; p != nil && p.traceHex != inv.trace {
				if to := invOf(p); to != nil && top.find(to) != inv {
					join(inv, to)
				}
				break
			}
		}
	}
	for _, id := range ids {
		members := sessions[id]
		slices.SortStableFunc(members, func(x, y *inInv) int { return spanOrder(x.span, y.span) })
		var open, kept []*inInv // open: pushed in start order, the top the latest begun
		next := 0
		for _, inv := range members {
			for next < len(members) && members[next].span.start <= inv.span.start {
				open = append(open, members[next])
				next++
			}
			if inv.parent != nil {
				continue
			}
			// Down from the latest begun: one that ended before inv began has ended before
			// every later one begins too, and is dropped; one that cannot be inv's parent is
			// passed over and kept.
			kept = kept[:0]
			i := len(open) - 1
			for ; i >= 0 && len(kept) < maxSessionSkips; i-- {
				c := open[i]
				if c.span.end != 0 && c.span.end < inv.span.start {
					continue
				}
				if c == inv || c.trace == inv.trace || top.find(c) == inv {
					kept = append(kept, c)
					continue
				}
				join(inv, c)
				break
			}
			open = open[:i+1]
			for k := len(kept) - 1; k >= 0; k-- {
				open = append(open, kept[k])
			}
		}
	}
}

// maxSessionSkips bounds how many of a session's running investigations that cannot be a
// parent (of the same trace, or below the one joining) the session rule passes over for one
// investigation, so that no trace makes the sweep quadratic; past it the investigation stays
// a root.
const maxSessionSkips = 1024

// invTops finds the top investigation above each (the investigation without a parent that
// it descends from), with path compression: joinTraces asks, before each join, whether the
// candidate parent descends from the investigation it would join, which is a loop exactly
// when the candidate's top is that investigation (only investigations without a parent
// join). A join puts a top under another investigation, so the tops only ever move up.
type invTops map[*inInv]*inInv

func newInvTops(invs []*inInv) invTops {
	t := make(invTops, len(invs))
	for _, inv := range invs {
		if inv.parent != nil {
			t[inv] = inv.parent
		}
	}
	return t
}

func (t invTops) find(inv *inInv) *inInv {
	x := inv
	for t[x] != nil {
		x = t[x]
	}
	for y := inv; y != x; {
		next := t[y]
		t[y] = x
		y = next
	}
	return x
}

func (t invTops) link(inv, to *inInv) { t[inv] = to }

// rootAndDepth sets inv.root and inv.depth, and those of every investigation above it, by
// one walk up that stops at the first investigation already set: a chain of sub-agents (or
// of joined traces) as long as the run costs its length, not its square.
func (inv *inInv) rootAndDepth() {
	var up []*inInv
	x := inv
	for x.root == nil && x.parent != nil {
		up = append(up, x)
		x = x.parent
	}
	if x.root == nil { // a top
		x.root, x.depth = x, 0
	}
	for i := len(up) - 1; i >= 0; i-- {
		y := up[i]
		y.root, y.depth = y.parent.root, y.parent.depth+1
	}
}

// session is the investigation's session id: its agent span's, else the first member's
// that names one.
func (inv *inInv) session() string {
	if inv.sessionID != nil {
		return *inv.sessionID
	}
	id := ""
	for _, s := range append([]*inSpan{inv.span}, inv.members...) {
		if s.cv != nil {
			if id = s.str(s.cv.Session...); id != "" {
				break
			}
		}
	}
	inv.sessionID = &id
	return id
}

func spanOrder(x, y *inSpan) int {
	return cmp.Or(cmp.Compare(x.start, y.start), cmp.Compare(x.end, y.end), strings.Compare(x.key, y.key))
}

// spanIDs numbers the spans mayday keeps (agents, and members of a role) by start, after
// first, and returns the last id given.
func spanIDs(invs []*inInv, first uint64) uint64 {
	var kept []*inSpan
	for _, inv := range invs {
		if !inv.implicit || inv.span.role == roleOther {
			kept = append(kept, inv.span)
		}
		for _, s := range inv.members {
			if s.role != roleOther {
				kept = append(kept, s)
			}
		}
	}
	slices.SortFunc(kept, spanOrder)
	for i, s := range kept {
		s.id = first + uint64(i+1)
	}
	return first + uint64(len(kept))
}

// simTime turns a Unix time into the record's time, which the trace tables store as
// record.Epoch + time: an imported run keeps its timestamps as recorded, and its minutes
// count from its own time 0 (b.zero, stored in runs.config as $.import.time_zero_us).
func (b *built) simTime(unixNano int64) int64 { return unixNano - record.Epoch }

// investigation emits the spans of inv and fills its record.
func (b *built) investigation(inv *inInv, rules retryRules) {
	a := inv.span
	inv.rec = record.Investigation{InvestigationID: inv.id, RootID: inv.root.id, Depth: inv.depth,
		ArrivedAt: b.simTime(a.start), Ended: a.end != 0, EndedAt: b.simTime(a.end)}
	if inv.parent != nil {
		inv.rec.ParentID = inv.parent.id
	}
	if a.id != 0 && (!inv.implicit || a.role == roleOther) {
		b.spans = append(b.spans, b.span(a, inv, record.OpInvokeAgent))
	}
	ops := operations(inv, rules)
	b.memberSpans(inv, ops)
	inv.rec.Steps = int32(len(ops))
	b.finish(inv)
}

// retryRules is what operations needs besides the investigation.
type retryRules struct {
	window      time.Duration // how long after a failed call a call of the same tool may be its retry
	callIDsMark bool          // the run's tool call ids repeat: a new id is a new operation
}

// callIDsRepeat reports whether some tool call id of the run is on more than one tool
// span: then the instrumentation marks retries with the call id, and a new id is a new
// operation. When every id is new (agent libraries give each call, retries included, an
// id of its own), ids say nothing about retries.
func callIDsRepeat(r *inRun) bool {
	seen := map[string]bool{}
	for _, s := range r.spans {
		if s.role != roleTool {
			continue
		}
		if id := s.str(s.convention().CallID...); id != "" {
			if seen[id] {
				return true
			}
			seen[id] = true
		}
	}
	return false
}

// operations groups the tool attempts of inv into logical operations, the first rule that
// applies deciding (docs/import.md, "Operations and retries"):
//  1. spans with the same tool call id are attempts of one operation, and when the run's
//     call ids repeat anywhere, a new call id is a new operation;
//  2. an explicit attempt number above 1 continues the tool's latest operation, and 1
//     starts a new one;
//  3. otherwise a call of a tool that follows a failed call of the same tool in the same
//     investigation, under any parent (agent libraries put each retry under a new step
//     span, with a new tool call id), is its next attempt when it starts after that call
//     ended and within window of it, and the two record the same arguments (or either
//     records none). A success closes the operation, and so does a refusal by policy (a
//     refused call is not retried); a call of the tool with other arguments starts a new
//     one; and the agent moving on closes it: a step (the calls one model turn asked for)
//     between the two that called other tools and not this one.
func operations(inv *inInv, rules retryRules) map[*inSpan]*inOp {
	ops := map[*inSpan]*inOp{}
	byCall := map[string]*inOp{}
	lastOfTool := map[string]*inOp{} // tool -> its latest operation
	open := map[string][]*inOp{}     // tool -> its operations whose last attempt failed
	st := newSteps(inv)
	n := int32(0)
	for _, s := range inv.members {
		if s.role != roleTool {
			continue
		}
		cv := s.convention()
		tool := cv.toolName(s)
		args := cv.args(s)
		call := s.str(cv.CallID...)
		attempt, hasAttempt := cv.attempt(s)
		step := st.of(s)
		var op *inOp
		switch {
		case call != "" && byCall[call] != nil:
			op = byCall[call]
		case call != "" && rules.callIDsMark:
		case hasAttempt && attempt > 1:
			op = lastOfTool[tool]
		case hasAttempt:
		default:
			op = retryOf(open[tool], s, args, rules.window, st, step)
		}
		if op == nil {
			n++
			op = &inOp{step: n, tool: tool, args: args}
		}
		if call != "" && byCall[call] == nil {
			byCall[call] = op
		}
		op.attempts = append(op.attempts, s)
		op.lastStep = step
		ops[s] = op
		lastOfTool[tool] = op
		st.called(step, tool, s.start)
		open[tool] = slices.DeleteFunc(open[tool], func(o *inOp) bool { return o == op || (args != "" && o.args == args) })
		if s.status != "ok" && s.failureClass != "policy_violation" {
			if len(open[tool]) == maxOpenOps {
				open[tool] = slices.Delete(open[tool], 0, 1)
			}
			open[tool] = append(open[tool], op)
		}
	}
	return ops
}

// maxOpenOps bounds the operations of one tool an investigation keeps open for retries
// (the latest whose last attempt failed): a call retries one of the last few failed
// operations of its tool, and a trace of thousands of failed calls of one tool with as many
// arguments would otherwise compare each call with every one before it.
const maxOpenOps = 64

// steps numbers an investigation's agent-loop steps: a tool call's step is how many of
// the investigation's model turns ended before it began, so the calls a model turn asked
// for share a step whatever span they sit under.
type steps struct {
	turnEnds  []int64          // ends of the model turns, in order
	withCalls []int            // the steps that called a tool, in order (calls come in start order, so steps never go back)
	byTool    map[string][]int // tool -> the steps that called it, in order
	// the latest call's start and tool, and the latest start of a call of another tool
	latest, other int64
	latestTool    string
}

func newSteps(inv *inInv) *steps {
	st := &steps{byTool: map[string][]int{}, latest: math.MinInt64, other: math.MinInt64}
	for _, s := range inv.members {
		if s.role == roleModel && s.end != 0 {
			st.turnEnds = append(st.turnEnds, s.end)
		}
	}
	slices.Sort(st.turnEnds)
	return st
}

func (st *steps) of(s *inSpan) int {
	n, _ := slices.BinarySearch(st.turnEnds, s.start+1)
	return n
}

// called records a call of tool at step, begun at start (calls in start order).
func (st *steps) called(step int, tool string, start int64) {
	if n := len(st.withCalls); n == 0 || st.withCalls[n-1] != step {
		st.withCalls = append(st.withCalls, step)
	}
	if n := len(st.byTool[tool]); n == 0 || st.byTool[tool][n-1] != step {
		st.byTool[tool] = append(st.byTool[tool], step)
	}
	if tool != st.latestTool {
		st.other, st.latestTool = st.latest, tool
	}
	st.latest = start
}

// otherSince reports whether a call of a tool other than tool began after at.
func (st *steps) otherSince(tool string, at int64) bool {
	if st.latestTool != tool {
		return st.latest > at
	}
	return st.other > at
}

// movedOn reports whether a step after from and before to called tools, none of them tool:
// the agent went on to other work instead of calling the tool again. The steps that called
// this tool are among those that called any, so one such step is there exactly when the
// second are more than the first.
func (st *steps) movedOn(tool string, from, to int) bool {
	within := func(steps []int) int {
		lo, _ := slices.BinarySearch(steps, from+1)
		hi, _ := slices.BinarySearch(steps, to)
		return max(hi-lo, 0)
	}
	return within(st.withCalls) > within(st.byTool[tool])
}

// retryOf returns the open operation that s retries: the latest whose last attempt failed
// and ended before s began, within window, with the same recorded arguments (or none
// recorded on either side), and with no step in between that called only other tools (or,
// in the same step, no call of another tool begun after the failure); nil when there is
// none.
func retryOf(open []*inOp, s *inSpan, args string, window time.Duration, st *steps, step int) *inOp {
	for i := len(open) - 1; i >= 0; i-- {
		o := open[i]
		last := o.attempts[len(o.attempts)-1]
		if last.end == 0 || s.start < last.end || time.Duration(s.start-last.end) > window {
			continue
		}
		if args != "" && o.args != "" && args != o.args {
			continue
		}
		if st.movedOn(o.tool, o.lastStep, step) {
			continue
		}
		if step == o.lastStep && st.otherSince(o.tool, last.end) {
			// The model turns do not part the two calls (a library whose one model span lasts
			// the whole run, as VoltAgent's does): that another tool was called after the
			// failure and before this call is what says the agent went on.
			continue
		}
		return o
	}
	return nil
}

// convention is the declaration s is read with (GenAI for a span of a mayday export read
// as plain spans).
func (s *inSpan) convention() *convention {
	if s.cv != nil {
		return s.cv
	}
	return conventionNamed(ConvGenAI)
}

func modelName(s *inSpan) string { return s.str(s.convention().Model...) }

// memberSpans emits the spans of inv's model turns, tool attempts, human and supervisor
// steps, and a validate span for each operation whose last attempt succeeded.
func (b *built) memberSpans(inv *inInv, ops map[*inSpan]*inOp) {
	var lastTurn uint64 // the latest model turn that succeeded
	failedTurns := int32(0)
	firstTurn := map[*inOp]uint64{}
	var opStarts []int64 // the first attempt's start of each operation, in order
	for s, op := range ops {
		if op.attempts[0] == s {
			opStarts = append(opStarts, s.start)
		}
	}
	slices.Sort(opStarts)
	for _, s := range inv.members {
		switch s.role {
		case roleModel:
			sp := b.span(s, inv, record.OpPlan)
			if s.status != "ok" {
				// A failed turn was planning the next operation after those begun before
				// it failed (at its end): a turn that lasts the run, as VoltAgent's one
				// model span does, failed after every operation of the run, not before them.
				failedTurns++
				planned, _ := slices.BinarySearch(opStarts, max(s.end, s.start))
				sp.Tool, sp.HasKey, sp.Attempt = "model", true, failedTurns
				sp.OpKey = record.OpKey{Investigation: inv.id, Step: int32(planned) + 1}
			} else {
				failedTurns = 0
				lastTurn = s.id
			}
			b.spans = append(b.spans, sp)
		case roleTool:
			op := ops[s]
			sp := b.span(s, inv, record.OpExecuteTool)
			sp.Tool, sp.HasKey = op.tool, true
			sp.OpKey = record.OpKey{Investigation: inv.id, Step: op.step}
			sp.Attempt = int32(slices.Index(op.attempts, s) + 1)
			if sp.Attempt == 1 {
				firstTurn[op] = lastTurn
			}
			if t := firstTurn[op]; t != 0 {
				sp.CausedBy = []uint64{t}
			}
			inv.rec.Attempts++
			b.spans = append(b.spans, sp)
			if s == op.attempts[len(op.attempts)-1] && s.status == "ok" && s.end != 0 {
				b.validate(inv, s, sp.OpKey)
			}
		case roleHuman:
			b.spans = append(b.spans, b.span(s, inv, record.OpHumanReview))
			b.human(inv, s)
		case roleSupervise:
			b.spans = append(b.spans, b.span(s, inv, record.OpSupervise))
		}
	}
}

// validate stands for the validation an imported trace does not have: the result of the
// operation's successful last attempt counts as its valid result, when it arrived.
func (b *built) validate(inv *inInv, s *inSpan, key record.OpKey) {
	b.next++
	at := b.simTime(s.end)
	b.spans = append(b.spans, record.Span{TraceID: inv.root.id, SpanID: b.next, ParentSpanID: parentID(s, inv),
		InvestigationID: inv.id, AgentID: inv.id, Operation: record.OpValidate, HasKey: true, OpKey: key,
		Start: at, End: at, Status: record.StatusOK, CausedBy: []uint64{s.id},
		Attrs: []record.Attr{{Key: "mayday.imported", Value: "result_delivered"}}})
}

// human records a human review as an escalation: awaiting_human from its start, back to
// work (or terminated, when the investigation ends with it) at its end.
func (b *built) human(inv *inInv, s *inSpan) {
	inv.rec.Escalations++
	to := "running"
	if s.status != "ok" || s.str("review.decision", "decision") == "rejected" {
		to = "recovering"
	}
	inv.trans = append(inv.trans,
		record.Transition{InvestigationID: inv.id, At: b.simTime(s.start), From: "recovering", To: "awaiting_human",
			Event: "escalate", Action: "escalate", DecidedBy: "policy"},
		record.Transition{InvestigationID: inv.id, At: b.simTime(s.end), From: "awaiting_human", To: to,
			Event: "human_decision", DecidedBy: "human"})
}

func parentID(s *inSpan, inv *inInv) uint64 {
	if p := s.up; p != nil && p.id != 0 {
		return p.id
	}
	if inv.span != s {
		return inv.span.id
	}
	return 0
}

// span is the common part of the record of s.
func (b *built) span(s *inSpan, inv *inInv, op record.Operation) record.Span {
	sp := record.Span{TraceID: inv.root.id, SpanID: s.id, ParentSpanID: parentID(s, inv),
		InvestigationID: inv.id, AgentID: inv.id, Operation: op,
		Start: b.simTime(s.start), End: b.simTime(max(s.end, s.start)),
		Status: record.Status(s.status), FailureClass: s.failureClass}
	if op == record.OpPlan {
		sp.Attrs = append(sp.Attrs, record.Attr{Key: "kind", Value: "model_turn"})
		sp.Model = modelName(s)
	}
	if op == record.OpPlan || op == record.OpSupervise || op == record.OpInvokeAgent {
		in, out := s.convention().tokens(s)
		sp.InputTokens, sp.OutputTokens = in, out
		if op != record.OpInvokeAgent {
			inv.rec.Tokens += in + out
		}
	}
	// Room for the span's own attributes and each one added here: its kind, two of
	// mayday.imported at most, error.type.
	list := b.attrs.take(nil, len(s.attrs)+4, arenaBlock)[:0]
	sp.Attrs = append(list, sp.Attrs...)
	for _, kv := range s.attrs {
		sp.Attrs = append(sp.Attrs, record.Attr{Key: kv.key, Value: kv.val.text()})
	}
	if s.missingRoot {
		sp.Attrs = append(sp.Attrs, record.Attr{Key: "mayday.imported", Value: "missing_root"})
	}
	if s.cycle {
		sp.Attrs = append(sp.Attrs, record.Attr{Key: "mayday.imported", Value: "parent_link_cut"})
	}
	if s.errType != "" && s.str("error.type") == "" {
		sp.Attrs = append(sp.Attrs, record.Attr{Key: "error.type", Value: s.errType})
	}
	if s.end == 0 {
		sp.Status = record.StatusUnset
	}
	return sp
}

// terminationReason is why an agent span's run ended in error: its error type when that
// names one, else the first line of its status message (a stack never), else the type it
// has (a bare Error, or "exception" for an exception event without a type).
func terminationReason(a *inSpan) string {
	if a.errType != "" && a.errType != unnamedException && !a.genericError(a.errType) {
		return a.errType
	}
	return cmp.Or(firstLine(a.msg), a.errType)
}

// finish sets the investigation's final state and its start and end transitions.
func (b *built) finish(inv *inInv) {
	a := inv.span
	start := record.Transition{InvestigationID: inv.id, At: inv.rec.ArrivedAt, From: "pending", To: "running",
		Event: "start", Action: "start", DecidedBy: "engine"}
	b.trans = append(append(b.trans, start), inv.trans...)
	switch {
	case a.end == 0:
		inv.rec.FinalState = "running"
		return
	case a.status != "ok" && a.code == tracepb.Status_STATUS_CODE_ERROR:
		inv.rec.FinalState = "terminated"
		inv.rec.TerminationReason = terminationReason(a)
	default:
		inv.rec.FinalState = "completed"
	}
	b.trans = append(b.trans, record.Transition{InvestigationID: inv.id, At: inv.rec.EndedAt, From: "running",
		To: inv.rec.FinalState, Event: "finished", Reason: inv.rec.TerminationReason, DecidedBy: "engine"})
}

// importUnknown lists the metrics a GenAI or OpenInference trace cannot give, with the
// reason summary.json states; the metrics view reports them NULL for an imported run.
var importUnknown = map[string]string{
	"correct_completion_rate":      "a trace does not know whether a result was truly valid",
	"validation_pass_rate":         "a trace records no independent validation of results",
	"duplicate_side_effects":       "a trace has no tool-side record of executions (duplicates)",
	"discarded_results":            "a trace has no tool-side record of executions (results done but never delivered)",
	"compute_per_completion":       "a trace does not record the compute tools spent",
	"wasted_compute_ratio":         "a trace does not record the compute tools spent",
	"full_scope_completion_rate":   "a trace does not say whether an investigation dropped steps",
	"events":                       "not a simulation: there are no simulation events",
	"median_pending_time":          "a trace does not record how long an investigation waited for a worker before its agent span began",
	"median_subagent_pending_time": "a trace does not record how long a subagent waited for a worker before its agent span began",
	"goodput_recovery_time":        "a trace names no fault windows (the incidents view finds correlated trouble)",
	"goodput_recovered":            "a trace names no fault windows (the incidents view finds correlated trouble)",
	"cost_per_completion":          "a trace carries no prices",
	"wasted_cost_ratio":            "a trace carries no prices",
}

// toolResultsReported marks as failed the tool attempts whose span says nothing of an error
// (status unset, no error type) but whose result a later model request reports to the model
// as an error: some libraries (ADK JS) end a tool span that threw with no status and no
// attribute, and hand the error to the model as the call's result. A result is an error
// when it is an object with an "error" key, the Gemini function-response form
// ({"functionResponse": {"id", "name", "response": {"error": ...}}}) or the GenAI
// message-part form ({"type": "tool_call_response", "id", "response": {"error": ...}}), read
// from the convention's Request attributes. A tool span without a call id takes the id of
// the one call of its tool that the nearest model turn above it asked for (its Response);
// none is guessed when it asked for several or none. The error's text decides the class.
func toolResultsReported(r *inRun) {
	errs := map[string]string{}
	for _, s := range r.spans {
		if s.role != roleModel {
			continue
		}
		if req := s.str(s.convention().Request...); req != "" {
			walkJSON(req, func(m map[string]any) {
				if id, msg, ok := errorResult(m); ok {
					errs[id] = msg
				}
			})
		}
	}
	if len(errs) == 0 {
		return
	}
	for _, s := range r.spans {
		if s.role != roleTool || s.code != tracepb.Status_STATUS_CODE_UNSET || s.status != "ok" {
			continue
		}
		cv := s.convention()
		id := s.str(cv.CallID...)
		if id == "" {
			id = askedBy(r, s, cv.toolName(s))
		}
		msg, ok := errs[id]
		if id == "" || !ok {
			continue
		}
		s.status, s.failureClass = "error", classOf(firstLine(msg), 0)
		if s.failureClass == "uncertain_completion" {
			s.status = "timeout"
		}
		if s.msg == "" {
			s.msg = firstLine(msg)
		}
	}
}

// askedBy is the id of the one call of tool that the nearest model turn above s asked
// for, "" when there is none or more than one.
func askedBy(r *inRun, s *inSpan, tool string) string {
	for p := s.up; p != nil; p = p.up {
		if p.role != roleModel {
			continue
		}
		id, n := "", 0
		if resp := p.str(p.convention().Response...); resp != "" {
			walkJSON(resp, func(m map[string]any) {
				if cid, name, ok := toolCall(m); ok && name == tool {
					id, n = cid, n+1
				}
			})
		}
		if n == 1 {
			return id
		}
		return ""
	}
	return ""
}

// errorResult reads a tool result that is an error: its call id and error text.
func errorResult(m map[string]any) (id, msg string, ok bool) {
	if fr, isMap := m["functionResponse"].(map[string]any); isMap {
		m = fr
	} else if m["type"] != "tool_call_response" {
		return "", "", false
	}
	id, _ = m["id"].(string)
	resp, _ := m["response"].(map[string]any)
	e, has := resp["error"]
	if id == "" || !has || e == nil {
		return "", "", false
	}
	if text, isText := e.(string); isText {
		return id, text, true
	}
	b, _ := json.Marshal(e)
	return id, string(b), true
}

// toolCall reads a tool call a model asked for: its id and tool.
func toolCall(m map[string]any) (id, name string, ok bool) {
	if fc, isMap := m["functionCall"].(map[string]any); isMap {
		m = fc
	} else if m["type"] != "tool_call" {
		return "", "", false
	}
	id, _ = m["id"].(string)
	name, _ = m["name"].(string)
	return id, name, id != "" && name != ""
}

// walkJSON calls f on every object of the JSON text (nothing when it is not JSON).
func walkJSON(text string, f func(map[string]any)) {
	var v any
	if json.Unmarshal([]byte(text), &v) != nil {
		return
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			f(x)
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
}
