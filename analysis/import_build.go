package analysis

import (
	"cmp"
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
	span     *inSpan // the agent span (or the trace's root span)
	implicit bool    // no agent span: the root span stands for the investigation
	parent   *inInv
	id       int64
	root     *inInv
	depth    int32
	members  []*inSpan // its spans other than agent spans, in start order
	rec      record.Investigation
	trans    []record.Transition // its human steps' transitions
}

// inOp is one logical tool operation: its attempts in order.
type inOp struct {
	step     int32
	tool     string
	attempts []*inSpan
}

// built is what one generic run becomes.
type built struct {
	invs  []*inInv
	spans []record.Span
	trans []record.Transition
	zero  int64  // Unix nanoseconds of time 0
	next  uint64 // the last span id given
}

// buildGeneric maps a GenAI / OpenInference run to records.
func buildGeneric(r *inRun, window time.Duration) *built {
	b := &built{zero: timeZero(r.spans)}
	b.invs = investigations(r)
	b.next = spanIDs(b.invs)
	for _, inv := range b.invs {
		b.investigation(inv, window)
	}
	slices.SortFunc(b.spans, func(x, y record.Span) int { return cmp.Compare(x.SpanID, y.SpanID) })
	return b
}

// timeZero is the first span's start, down to the whole minute (UTC): minute 0 of the run.
func timeZero(spans []*inSpan) int64 {
	first := int64(0)
	for i, s := range spans {
		if i == 0 || s.start < first {
			first = s.start
		}
	}
	return first - first%int64(time.Minute)
}

// agentOf returns the investigation span of s: its nearest agent ancestor (itself when it
// is one), else its topmost ancestor in the data.
func agentOf(r *inRun, s *inSpan, memo map[*inSpan]*inSpan) *inSpan {
	if a, ok := memo[s]; ok {
		return a
	}
	var a *inSpan
	switch p := r.byKey[s.parent]; {
	case s.role == roleAgent:
		a = s
	case p == nil:
		a = s
	default:
		a = agentOf(r, p, memo)
	}
	memo[s] = a
	return a
}

// investigations finds every investigation of the run, its parent and members, and numbers
// them by start.
func investigations(r *inRun) []*inInv {
	memo := map[*inSpan]*inSpan{}
	byAgent := map[*inSpan]*inInv{}
	var invs []*inInv
	for _, s := range r.spans {
		a := agentOf(r, s, memo)
		inv := byAgent[a]
		if inv == nil {
			inv = &inInv{span: a, implicit: a.role != roleAgent}
			byAgent[a] = inv
			invs = append(invs, inv)
		}
		s.inv = inv
		if s != a || inv.implicit && a.role != roleOther {
			inv.members = append(inv.members, s)
		}
	}
	for _, inv := range invs {
		if p := r.byKey[inv.span.parent]; p != nil {
			inv.parent = byAgent[agentOf(r, p, memo)]
		}
	}
	slices.SortFunc(invs, func(x, y *inInv) int { return spanOrder(x.span, y.span) })
	for i, inv := range invs {
		inv.id = int64(i + 1)
	}
	for _, inv := range invs {
		inv.root = inv
		for inv.root.parent != nil {
			inv.root = inv.root.parent
			inv.depth++
		}
		slices.SortFunc(inv.members, spanOrder)
	}
	return invs
}

func spanOrder(x, y *inSpan) int {
	return cmp.Or(cmp.Compare(x.start, y.start), cmp.Compare(x.end, y.end), strings.Compare(x.key, y.key))
}

// spanIDs numbers the spans mayday keeps (agents, and members of a role) by start.
func spanIDs(invs []*inInv) uint64 {
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
		s.id = uint64(i + 1)
	}
	return uint64(len(kept))
}

// simTime turns a Unix time into the record's time: nanoseconds since time 0.
func (b *built) simTime(unixNano int64) int64 { return unixNano - b.zero }

// investigation emits the spans of inv and fills its record.
func (b *built) investigation(inv *inInv, window time.Duration) {
	a := inv.span
	inv.rec = record.Investigation{InvestigationID: inv.id, RootID: inv.root.id, Depth: inv.depth,
		ArrivedAt: b.simTime(a.start), Ended: a.end != 0, EndedAt: b.simTime(a.end)}
	if inv.parent != nil {
		inv.rec.ParentID = inv.parent.id
	}
	if a.id != 0 {
		b.spans = append(b.spans, b.span(a, inv, record.OpInvokeAgent))
	}
	ops := operations(inv, window)
	b.memberSpans(inv, ops)
	inv.rec.Steps = int32(len(ops))
	b.finish(inv)
}

// operations groups the tool attempts of inv into logical operations: by tool call id,
// else by an attempt attribute, else by parent, tool and time (a new span of the tool under
// the same parent within window of a failed one is its retry).
func operations(inv *inInv, window time.Duration) map[*inSpan]*inOp {
	ops := map[*inSpan]*inOp{}
	byCall := map[string]*inOp{}
	lastOfTool := map[string]*inOp{}  // tool -> its latest operation
	lastUnder := map[string]*inSpan{} // parent -> its latest tool attempt
	n := int32(0)
	for _, s := range inv.members {
		if s.role != roleTool {
			continue
		}
		tool := toolName(s)
		var op *inOp
		call := s.str("gen_ai.tool.call.id", "tool_call.id", "tool.call.id")
		attempt, hasAttempt := attemptAttr(s)
		switch {
		case call != "":
			op = byCall[call]
		case hasAttempt && attempt > 1:
			op = lastOfTool[tool]
		case !hasAttempt:
			if p := lastUnder[s.parent]; p != nil && toolName(p) == tool && p.status != "ok" && p.end != 0 &&
				s.start >= p.end && time.Duration(s.start-p.end) <= window {
				op = ops[p]
			}
		}
		if op == nil {
			n++
			op = &inOp{step: n, tool: tool}
			if call != "" {
				byCall[call] = op
			}
		}
		op.attempts = append(op.attempts, s)
		ops[s] = op
		lastOfTool[tool] = op
		lastUnder[s.parent] = s
	}
	return ops
}

// attemptAttr reads an attempt number: attempt, retry.attempt (1 = the first try) or
// http.request.resend_count (0 = the first try).
func attemptAttr(s *inSpan) (int64, bool) {
	if n, ok := s.num("attempt", "retry.attempt", "gen_ai.tool.call.attempt"); ok {
		return n, true
	}
	if n, ok := s.num("http.request.resend_count"); ok {
		return n + 1, true
	}
	return 0, false
}

func toolName(s *inSpan) string {
	if t := s.str("gen_ai.tool.name", "tool.name", "traceloop.entity.name"); t != "" {
		return t
	}
	return strings.TrimPrefix(s.name, "execute_tool ")
}

func modelName(s *inSpan) string {
	return s.str("gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "llm.response.model", "llm.request.model")
}

// memberSpans emits the spans of inv's model turns, tool attempts, human and supervisor
// steps, and a validate span for each operation whose last attempt succeeded.
func (b *built) memberSpans(inv *inInv, ops map[*inSpan]*inOp) {
	var lastTurn uint64 // the latest model turn that succeeded
	failedTurns := int32(0)
	opsSeen := int32(0)
	firstTurn := map[*inOp]uint64{}
	for _, s := range inv.members {
		switch s.role {
		case roleModel:
			sp := b.span(s, inv, record.OpPlan)
			if s.status != "ok" {
				failedTurns++
				sp.Tool, sp.HasKey, sp.Attempt = "model", true, failedTurns
				sp.OpKey = record.OpKey{Investigation: inv.id, Step: opsSeen + 1}
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
				opsSeen++
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
	if p := s.run.byKey[s.parent]; p != nil && p.id != 0 {
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
		in, _ := s.num("gen_ai.usage.input_tokens", "llm.token_count.prompt", "gen_ai.usage.prompt_tokens", "llm.usage.prompt_tokens")
		out, okOut := s.num("gen_ai.usage.output_tokens", "llm.token_count.completion", "gen_ai.usage.completion_tokens", "llm.usage.completion_tokens")
		if total, ok := s.num("llm.token_count.total"); ok && in == 0 && !okOut {
			in = total
		}
		sp.InputTokens, sp.OutputTokens = in, out
		if op != record.OpInvokeAgent {
			inv.rec.Tokens += in + out
		}
	}
	for _, kv := range s.attrs {
		sp.Attrs = append(sp.Attrs, record.Attr{Key: kv.Key, Value: anyText(kv.Value)})
	}
	if s.errType != "" && s.str("error.type") == "" {
		sp.Attrs = append(sp.Attrs, record.Attr{Key: "error.type", Value: s.errType})
	}
	if s.end == 0 {
		sp.Status = record.StatusUnset
	}
	return sp
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
		inv.rec.TerminationReason = cmp.Or(a.errType, a.msg)
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
