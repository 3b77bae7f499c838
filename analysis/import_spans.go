package analysis

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// The spans of an import, kept in a compact form until every file is read (a trace's
// spans may arrive in any order, children before parents, across files).

// Conventions an import maps.
const (
	ConvAuto          = "auto"
	ConvGenAI         = "genai"
	ConvOpenInference = "openinference"
	ConvMayday        = "mayday" // a mayday export: gen_ai.* plus mayday.*
)

// spanRole is what an imported span is to mayday.
type spanRole int

const (
	roleOther     spanRole = iota // kept only as a link between its parent and children
	roleAgent                     // an investigation (invoke_agent, AGENT)
	roleModel                     // a model turn (chat, LLM)
	roleTool                      // a tool attempt (execute_tool, TOOL, RETRIEVER)
	roleHuman                     // a human step (a span named for a human review)
	roleSupervise                 // a supervisor step (a span named for a supervisor)
	roleValidate                  // mayday exports only: a validation
	roleInspect                   // mayday exports only: a lookup
	roleTakeover                  // mayday exports only: a crashed worker's takeover
)

// inSpan is one imported span.
type inSpan struct {
	run          *inRun
	key, parent  string // trace id + span id (hex), the parent's; parent "" for a root
	otlpID       string // the span id alone (hex)
	name         string
	start, end   int64 // Unix nanoseconds
	code         tracepb.Status_StatusCode
	msg          string
	attrs        []*commonpb.KeyValue
	events       []*tracepb.Span_Event
	links        []*tracepb.Span_Link
	traceHex     string
	conv         string
	role         spanRole
	inv          *inInv // the investigation it belongs to
	id           uint64 // mayday span id
	errType      string // error.type, else the last exception event's type
	failureClass string
	status       string
}

// inRun collects the spans of one run: every span of a mayday export's run (its resource
// names mayday.run_id), or of everything else imported.
type inRun struct {
	id       string
	native   bool
	resource map[string]*commonpb.AnyValue
	spans    []*inSpan
	byKey    map[string]*inSpan
	convs    map[string]int64 // spans by conventions
}

// spanSet is every span read so far, by run.
type spanSet struct {
	runs     []*inRun
	byID     map[string]*inRun
	forced   string // --conventions, or ConvAuto
	defRunID string
	spans    int64
}

func newSpanSet(conventions, runID string) *spanSet {
	return &spanSet{byID: map[string]*inRun{}, forced: conventions, defRunID: runID}
}

func (s *spanSet) run(id string, native bool) *inRun {
	if r, ok := s.byID[id]; ok {
		return r
	}
	r := &inRun{id: id, native: native, resource: map[string]*commonpb.AnyValue{}, byKey: map[string]*inSpan{}, convs: map[string]int64{}}
	s.byID[id] = r
	s.runs = append(s.runs, r)
	return r
}

// add takes the spans of one request; where names it for errors.
func (s *spanSet) add(req *coltracepb.ExportTraceServiceRequest, where string) error {
	for _, rs := range req.ResourceSpans {
		res := map[string]*commonpb.AnyValue{}
		if rs.Resource != nil {
			for _, kv := range rs.Resource.Attributes {
				res[kv.Key] = kv.Value
			}
		}
		id, native := s.defRunID, false
		if v := res["mayday.run_id"].GetStringValue(); v != "" && s.forced != ConvGenAI && s.forced != ConvOpenInference {
			id, native = v, true
		}
		r := s.run(id, native)
		for k, v := range res {
			if _, ok := r.resource[k]; !ok || k == "mayday.faults" || k == "mayday.tool_samples" {
				r.resource[k] = v
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				if err := r.addSpan(sp, s.forced); err != nil {
					return fmt.Errorf("%s: %w: %v", where, ErrBadTraceInput, err)
				}
				s.spans++
			}
		}
	}
	return nil
}

func (r *inRun) addSpan(sp *tracepb.Span, forced string) error {
	if len(sp.TraceId) != 16 || len(sp.SpanId) != 8 {
		return fmt.Errorf("span %q: trace id of %d bytes and span id of %d bytes (want 16 and 8)", sp.Name, len(sp.TraceId), len(sp.SpanId))
	}
	if sp.EndTimeUnixNano != 0 && sp.EndTimeUnixNano < sp.StartTimeUnixNano {
		return fmt.Errorf("span %q (%x) ends before it starts", sp.Name, sp.SpanId)
	}
	th := hex.EncodeToString(sp.TraceId)
	s := &inSpan{run: r, traceHex: th, otlpID: hex.EncodeToString(sp.SpanId), name: sp.Name,
		start: int64(sp.StartTimeUnixNano), end: int64(sp.EndTimeUnixNano),
		attrs: sp.Attributes, events: sp.Events, links: sp.Links}
	s.key = th + s.otlpID
	if len(sp.ParentSpanId) == 8 {
		s.parent = th + hex.EncodeToString(sp.ParentSpanId)
	}
	if sp.Status != nil {
		s.code, s.msg = sp.Status.Code, sp.Status.Message
	}
	if _, dup := r.byKey[s.key]; dup {
		return nil // the same span sent twice (an exporter's retry): keep the first
	}
	s.classify(forced)
	r.convs[s.conv]++
	r.byKey[s.key] = s
	r.spans = append(r.spans, s)
	return nil
}

// attr returns the value of attribute key, or nil.
func (s *inSpan) attr(key string) *commonpb.AnyValue {
	for _, kv := range s.attrs {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

func (s *inSpan) str(keys ...string) string {
	for _, k := range keys {
		if v := s.attr(k); v != nil {
			if t := anyText(v); t != "" {
				return t
			}
		}
	}
	return ""
}

func (s *inSpan) num(keys ...string) (int64, bool) {
	for _, k := range keys {
		v := s.attr(k)
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_IntValue:
			return x.IntValue, true
		case *commonpb.AnyValue_DoubleValue:
			return int64(x.DoubleValue), true
		case *commonpb.AnyValue_StringValue:
			if n, err := strconv.ParseInt(x.StringValue, 10, 64); err == nil {
				return n, true
			}
		}
	}
	return 0, false
}

// anyText is an attribute value as text: strings as they are, numbers and booleans as Go
// prints them, arrays and maps as JSON-like text.
func anyText(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_BytesValue:
		return hex.EncodeToString(x.BytesValue)
	case *commonpb.AnyValue_ArrayValue:
		parts := make([]string, 0, len(x.ArrayValue.GetValues()))
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, strconv.Quote(anyText(e)))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case *commonpb.AnyValue_KvlistValue:
		parts := make([]string, 0, len(x.KvlistValue.GetValues()))
		for _, kv := range x.KvlistValue.GetValues() {
			parts = append(parts, strconv.Quote(kv.Key)+":"+strconv.Quote(anyText(kv.Value)))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return ""
}

// classify finds the span's conventions and role, and its outcome.
func (s *inSpan) classify(forced string) {
	oiKind := strings.ToUpper(s.str("openinference.span.kind"))
	genOp := s.str("gen_ai.operation.name")
	mayOp := s.str("mayday.operation")
	switch {
	case forced == ConvGenAI || forced == ConvOpenInference:
		s.conv = forced
	case mayOp != "" && s.run.native:
		s.conv = ConvMayday
	case oiKind != "":
		s.conv = ConvOpenInference
	default:
		s.conv = ConvGenAI
	}
	name := strings.ToLower(s.name)
	switch {
	case s.conv == ConvMayday:
		s.role = maydayRole(mayOp)
	case strings.Contains(name, "human"):
		s.role = roleHuman
	case strings.Contains(name, "supervis"):
		s.role = roleSupervise
	case s.conv == ConvOpenInference:
		s.role = map[string]spanRole{"AGENT": roleAgent, "LLM": roleModel, "TOOL": roleTool, "RETRIEVER": roleTool}[oiKind]
	default:
		s.role = genAIRole(genOp, name)
		if s.role == roleOther {
			s.role = s.otherGenAIRole()
		}
	}
	s.outcome()
}

// otherGenAIRole recognises spans of instrumentations that name no gen_ai.operation.name:
// OpenLLMetry's traceloop.span.kind (agent, tool), and a span with model attributes
// (gen_ai.request.model, gen_ai.system, llm.request.type, token counts) is a model turn.
func (s *inSpan) otherGenAIRole() spanRole {
	switch strings.ToLower(s.str("traceloop.span.kind")) {
	case "agent":
		return roleAgent
	case "tool":
		return roleTool
	}
	for _, k := range []string{"gen_ai.request.model", "gen_ai.system", "llm.request.type", "gen_ai.usage.input_tokens",
		"gen_ai.usage.prompt_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"} {
		if s.attr(k) != nil {
			return roleModel
		}
	}
	return roleOther
}

func maydayRole(op string) spanRole {
	return map[string]spanRole{"invoke_agent": roleAgent, "plan": roleModel, "execute_tool": roleTool,
		"human_review": roleHuman, "supervise": roleSupervise, "validate": roleValidate,
		"inspect": roleInspect, "takeover": roleTakeover}[op]
}

// genAIRole reads gen_ai.operation.name, else the span name's first word (the conventions
// name spans "<operation> <target>").
func genAIRole(op, name string) spanRole {
	if op == "" {
		op, _, _ = strings.Cut(name, " ")
	}
	switch op {
	case "invoke_agent", "create_agent":
		return roleAgent
	case "chat", "text_completion", "generate_content", "embeddings":
		return roleModel
	case "execute_tool":
		return roleTool
	}
	return roleOther
}

// outcome sets the span's status and failure class from its OTLP status, error.type and
// exception events.
func (s *inSpan) outcome() {
	s.errType = s.str("error.type")
	for _, e := range s.events {
		if e.Name != "exception" {
			continue
		}
		for _, kv := range e.Attributes {
			if kv.Key == "exception.type" && anyText(kv.Value) != "" && s.errType == "" {
				s.errType = anyText(kv.Value)
			}
		}
		if s.errType == "" {
			s.errType = "exception"
		}
	}
	failed := s.code == tracepb.Status_STATUS_CODE_ERROR || (s.code == tracepb.Status_STATUS_CODE_UNSET && s.errType != "")
	if !failed {
		s.status = "ok"
		return
	}
	s.status, s.failureClass = "error", classOf(s.errType+" "+s.msg)
	if s.failureClass == "uncertain_completion" {
		s.status = "timeout"
	}
}

// classOf maps an error's type and message to mayday's failure classes: a timeout is an
// uncertain completion (the work may have been done), a refusal by policy a policy
// violation, an exhausted budget or context a resource exhaustion; anything else is
// transient.
func classOf(text string) string {
	t := strings.ToLower(text)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(t, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("timeout", "timed out", "deadline"):
		return "uncertain_completion"
	case has("policy", "forbidden", "permission", "not allowed", "guardrail"):
		return "policy_violation"
	case has("budget", "context_length", "context length", "max_tokens", "quota"):
		return "resource_exhaustion"
	}
	return "transient"
}
