package analysis

// Edge tests of the import's mapping, written against what each library writes (its own
// documentation), not against the declarations: every span kind and operation name each
// convention knows, each alternative attribute for tokens, attempts and models, the
// detection rules, and the retry rule at its boundaries. Fast: they need no database.

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Every kind and operation each convention declares, with the role its library means.
func TestMappingRolesOfEveryKind(t *testing.T) {
	cases := []struct {
		conv, name string
		attrs      map[string]any
		role       spanRole
	}{
		// OpenInference: openinference.span.kind, in any case.
		{ConvOpenInference, "a", map[string]any{"openinference.span.kind": "AGENT"}, roleAgent},
		{ConvOpenInference, "a", map[string]any{"openinference.span.kind": "LLM"}, roleModel},
		{ConvOpenInference, "a", map[string]any{"openinference.span.kind": "EMBEDDING"}, roleModel},
		{ConvOpenInference, "a", map[string]any{"openinference.span.kind": "TOOL"}, roleTool},
		{ConvOpenInference, "a", map[string]any{"openinference.span.kind": "retriever"}, roleTool},
		{ConvOpenInference, "a", map[string]any{"openinference.span.kind": "RERANKER"}, roleTool},
		{ConvOpenInference, "a", map[string]any{"openinference.span.kind": "CHAIN"}, roleAgent}, // a root chain stands for its agent
		{ConvOpenInference, "a", map[string]any{"openinference.span.kind": "GUARDRAIL"}, roleOther},
		// GenAI: gen_ai.operation.name, else the span's name or its first word, else model
		// attributes.
		{ConvGenAI, "x", map[string]any{"gen_ai.operation.name": "invoke_agent"}, roleAgent},
		{ConvGenAI, "x", map[string]any{"gen_ai.operation.name": "create_agent"}, roleOther},
		{ConvGenAI, "x", map[string]any{"gen_ai.operation.name": "chat"}, roleModel},
		{ConvGenAI, "x", map[string]any{"gen_ai.operation.name": "text_completion"}, roleModel},
		{ConvGenAI, "x", map[string]any{"gen_ai.operation.name": "generate_content"}, roleModel},
		{ConvGenAI, "x", map[string]any{"gen_ai.operation.name": "embeddings"}, roleModel},
		{ConvGenAI, "x", map[string]any{"gen_ai.operation.name": "execute_tool"}, roleTool},
		{ConvGenAI, "x", map[string]any{"gen_ai.operation.name": "execute_tool extra"}, roleTool},
		{ConvGenAI, "execute_tool", nil, roleTool},
		{ConvGenAI, "invoke_agent planner", nil, roleAgent},
		{ConvGenAI, "chat", nil, roleModel},
		{ConvGenAI, "call", map[string]any{"gen_ai.request.model": "m"}, roleModel},
		{ConvGenAI, "call", map[string]any{"gen_ai.response.model": "m"}, roleModel},
		{ConvGenAI, "call", map[string]any{"gen_ai.system": "openai"}, roleModel},
		{ConvGenAI, "call", map[string]any{"gen_ai.provider.name": "openai"}, roleModel},
		{ConvGenAI, "call", map[string]any{"gen_ai.usage.input_tokens": 1}, roleModel},
		{ConvGenAI, "call", map[string]any{"gen_ai.usage.prompt_tokens": 1}, roleModel},
		{ConvGenAI, "call", map[string]any{"gen_ai.usage.output_tokens": 1}, roleModel},
		{ConvGenAI, "call", map[string]any{"gen_ai.usage.completion_tokens": 1}, roleModel},
		{ConvGenAI, "call", nil, roleOther},
		// OpenLLMetry: traceloop.span.kind, gen_ai.operation.name, model attributes.
		{ConvOpenLLMetry, "a", map[string]any{"traceloop.span.kind": "agent"}, roleAgent},
		{ConvOpenLLMetry, "a", map[string]any{"traceloop.span.kind": "tool"}, roleTool},
		{ConvOpenLLMetry, "a", map[string]any{"traceloop.span.kind": "task"}, roleOther},
		{ConvOpenLLMetry, "a", map[string]any{"traceloop.workflow.name": "w", "gen_ai.operation.name": "chat"}, roleModel},
		{ConvOpenLLMetry, "a", map[string]any{"traceloop.workflow.name": "w", "gen_ai.operation.name": "text_completion"}, roleModel},
		{ConvOpenLLMetry, "a", map[string]any{"traceloop.workflow.name": "w", "gen_ai.operation.name": "execute_tool"}, roleTool},
		{ConvOpenLLMetry, "a", map[string]any{"traceloop.workflow.name": "w", "gen_ai.operation.name": "invoke_agent"}, roleAgent},
		{ConvOpenLLMetry, "a", map[string]any{"llm.request.type": "chat"}, roleModel},
		{ConvOpenLLMetry, "a", map[string]any{"traceloop.workflow.name": "w", "llm.request.model": "m"}, roleModel},
		{ConvOpenLLMetry, "a", map[string]any{"traceloop.workflow.name": "w", "llm.response.model": "m"}, roleModel},
		{ConvOpenLLMetry, "a", map[string]any{"traceloop.workflow.name": "w", "gen_ai.system": "openai"}, roleModel},
		{ConvOpenLLMetry, "a", map[string]any{"traceloop.workflow.name": "w"}, roleOther},
		// Vercel AI SDK: ai.operationId, else the span's name.
		{ConvAISDK, "ai.generateText", nil, roleAgent},
		{ConvAISDK, "ai.streamText", nil, roleAgent},
		{ConvAISDK, "ai.generateObject", nil, roleAgent},
		{ConvAISDK, "ai.streamObject", nil, roleAgent},
		{ConvAISDK, "ai.generateText.doGenerate", nil, roleModel},
		{ConvAISDK, "ai.streamText.doStream", nil, roleModel},
		{ConvAISDK, "ai.generateObject.doGenerate", nil, roleModel},
		{ConvAISDK, "ai.streamObject.doStream", nil, roleModel},
		{ConvAISDK, "ai.embed.doEmbed", nil, roleModel},
		{ConvAISDK, "ai.embedMany.doEmbed", nil, roleModel},
		{ConvAISDK, "ai.toolCall", nil, roleTool},
		{ConvAISDK, "ai.embed", nil, roleOther},
		{ConvAISDK, "step", map[string]any{"ai.operationId": "ai.toolCall"}, roleTool},
		{ConvAISDK, "step", map[string]any{"ai.toolCall.name": "Bash", "ai.operationId": "ai.streamText"}, roleAgent},
		{ConvAISDK, "ai.x", map[string]any{"ai.operationId": "invoke_agent"}, roleAgent},
		{ConvAISDK, "ai.x", map[string]any{"ai.operationId": "chat"}, roleModel},
		{ConvAISDK, "ai.x", map[string]any{"ai.operationId": "execute_tool"}, roleTool},
	}
	for i, c := range cases {
		r, _, _ := mapped(t, mkSpan(byte(i+1), 1, 0, c.name, 0, 1, c.attrs))
		if s := r.spans[0]; s.conv != c.conv || s.role != c.role {
			t.Errorf("%q %v: read as %s, role %d; want %s, role %d", c.name, c.attrs, s.conv, s.role, c.conv, c.role)
		}
	}
}

// Each alternative attribute a library writes tokens, attempts, models, tools and call ids
// under; a total is the input only when neither input nor output is given.
func TestMappingAlternativeAttributes(t *testing.T) {
	type want struct {
		in, out, attempt int64
		model, tool      string
	}
	cases := []struct {
		name  string
		attrs map[string]any
		want  want
	}{
		{"chat", map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.prompt_tokens": 8, "gen_ai.usage.completion_tokens": 3,
			"gen_ai.request.model": "asked"}, want{in: 8, out: 3, model: "asked"}},
		{"chat", map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 8, "gen_ai.usage.prompt_tokens": 9,
			"gen_ai.usage.output_tokens": 3, "gen_ai.usage.completion_tokens": 4}, want{in: 8, out: 3}},
		{"LLM", map[string]any{"openinference.span.kind": "LLM", "llm.token_count.prompt": 70, "llm.token_count.completion": 9,
			"llm.token_count.total": 79}, want{in: 70, out: 9}},
		{"LLM", map[string]any{"openinference.span.kind": "LLM", "llm.token_count.completion": 9, "llm.token_count.total": 79}, want{out: 9}},
		{"LLM", map[string]any{"openinference.span.kind": "LLM", "llm.token_count.prompt": "70"}, want{in: 70}},
		{"ai.streamText.doStream", map[string]any{"ai.usage.promptTokens": 5, "ai.usage.completionTokens": 2, "ai.model.id": "id",
			"ai.response.model": "resp"}, want{in: 5, out: 2, model: "resp"}},
		{"ai.streamText.doStream", map[string]any{"gen_ai.usage.input_tokens": 5, "gen_ai.usage.output_tokens": 2,
			"gen_ai.response.model": "g"}, want{in: 5, out: 2, model: "g"}},
		{"ai.streamText.doStream", map[string]any{"ai.usage.totalTokens": 7}, want{in: 7}},
		{"ai.streamText.doStream", map[string]any{"ai.usage.totalTokens": 7, "ai.usage.outputTokens": 2}, want{out: 2}},
		{"openai.chat", map[string]any{"llm.request.type": "chat", "gen_ai.usage.input_tokens": 6, "gen_ai.usage.output_tokens": 1,
			"llm.request.model": "req"}, want{in: 6, out: 1, model: "req"}},
		{"openai.chat", map[string]any{"llm.request.type": "chat", "llm.usage.total_tokens": 12}, want{in: 12}},
		{"openai.chat", map[string]any{"llm.request.type": "chat", "gen_ai.request.model": "g", "llm.response.model": "r"}, want{model: "g"}},
		{"execute_tool x", map[string]any{"gen_ai.operation.name": "execute_tool", "tool.name": "T", "retry.attempt": 2}, want{attempt: 2, tool: "T"}},
		{"execute_tool x", map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.attempt": 4}, want{attempt: 4, tool: "x"}},
		{"execute_tool x", map[string]any{"gen_ai.operation.name": "execute_tool", "attempt": 3, "http.request.resend_count": 5}, want{attempt: 3, tool: "x"}},
		{"execute_tool x", map[string]any{"gen_ai.operation.name": "execute_tool", "http.request.resend_count": 2}, want{attempt: 3, tool: "x"}},
		{"execute_tool", map[string]any{"gen_ai.operation.name": "execute_tool"}, want{tool: "execute_tool"}},
		{"ai.toolCall", map[string]any{"gen_ai.tool.name": "G", "http.request.resend_count": 0}, want{attempt: 1, tool: "G"}},
		{"T.tool", map[string]any{"traceloop.span.kind": "tool", "gen_ai.tool.name": "G", "attempt": 2}, want{attempt: 2, tool: "G"}},
		{"T", map[string]any{"openinference.span.kind": "TOOL", "retry.attempt": 6}, want{attempt: 6, tool: "T"}},
	}
	for i, c := range cases {
		r, _, _ := mapped(t, mkSpan(byte(i+1), 1, 0, c.name, 0, 1, c.attrs))
		s := r.spans[0]
		cv := s.convention()
		var got want
		got.in, got.out = cv.tokens(s)
		if n, ok := cv.attempt(s); ok {
			got.attempt = n
		}
		if s.role == roleModel {
			got.model = modelName(s)
		}
		if s.role == roleTool {
			got.tool = cv.toolName(s)
		}
		if got != c.want {
			t.Errorf("%q %v (%s): read %+v, want %+v", c.name, c.attrs, s.conv, got, c.want)
		}
	}
}

// Call ids and sessions under each name a library uses.
func TestMappingCallIDsAndSessions(t *testing.T) {
	cases := []struct {
		name          string
		attrs         map[string]any
		call, session string
	}{
		{"T", map[string]any{"openinference.span.kind": "TOOL", "tool.call.id": "c1", "metadata.thread_id": "th"}, "c1", "th"},
		{"T", map[string]any{"openinference.span.kind": "TOOL", "gen_ai.tool.call.id": "c2", "metadata.session_id": "se"}, "c2", "se"},
		{"T", map[string]any{"openinference.span.kind": "TOOL", "tool_call.id": "c3", "metadata.conversation_id": "co"}, "c3", "co"},
		{"execute_tool x", map[string]any{"gen_ai.operation.name": "execute_tool", "tool_call.id": "c4", "session.id": "s"}, "c4", "s"},
		{"execute_tool x", map[string]any{"gen_ai.operation.name": "execute_tool", "tool.call.id": "c5"}, "c5", ""},
		{"T.tool", map[string]any{"traceloop.span.kind": "tool", "tool_call.id": "c6", "traceloop.association.properties.thread_id": "t"}, "c6", "t"},
		{"T.tool", map[string]any{"traceloop.span.kind": "tool", "gen_ai.conversation.id": "g"}, "", "g"},
		{"T.tool", map[string]any{"traceloop.span.kind": "tool", "traceloop.association.properties.conversation_id": "c"}, "", "c"},
		{"ai.toolCall", map[string]any{"gen_ai.tool.call.id": "c7", "ai.telemetry.metadata.threadId": "t2"}, "c7", "t2"},
		{"ai.toolCall", map[string]any{"ai.telemetry.metadata.session_id": "s2"}, "", "s2"},
		{"ai.toolCall", map[string]any{"ai.telemetry.metadata.conversationId": "c2"}, "", "c2"},
		{"ai.toolCall", map[string]any{"session.id": "s3"}, "", "s3"},
	}
	for i, c := range cases {
		r, _, _ := mapped(t, mkSpan(byte(i+1), 1, 0, c.name, 0, 1, c.attrs))
		s := r.spans[0]
		cv := s.convention()
		if call, session := s.str(cv.CallID...), s.str(cv.Session...); call != c.call || session != c.session {
			t.Errorf("%q %v (%s): call %q, session %q; want %q, %q", c.name, c.attrs, s.conv, call, session, c.call, c.session)
		}
	}
}

// The retry rule at its boundaries: a call that starts exactly when the failed attempt
// ended, or exactly the window after, retries it; one a millisecond past the window does
// not; neither does one that starts before the failed attempt ended.
func TestMappingRetryWindowEdges(t *testing.T) {
	agent := map[string]any{"gen_ai.operation.name": "invoke_agent"}
	tool := map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}
	w := DefaultRetryWindow.Seconds()
	for _, c := range []struct {
		gap  float64 // from the failed attempt's end to the next call's start
		want string
	}{{0, "search 1#1, search 1#2"}, {w, "search 1#1, search 1#2"}, {w + 0.001, "search 1#1, search 2#1"}, {-0.5, "search 1#1, search 2#1"}} {
		_, b, _ := mapped(t,
			mkSpan(1, 1, 0, "invoke_agent a", 0, 4000, agent),
			failWith(mkSpan(1, 2, 1, "execute_tool search", 1, 2, tool), "503", ""),
			mkSpan(1, 3, 1, "execute_tool search", 2+c.gap, 3+c.gap, tool))
		if got := opsOf(b); got != c.want {
			t.Errorf("next call %v s after the failure: %s, want %s", c.gap, got, c.want)
		}
	}
}

// Detection: the convention whose producer attributes a span carries (the AI SDK's
// ai.operationId), else the first convention, in rank order, that a span's attributes or
// name match; GenAI when none does, even for a span that carries GenAI's attributes beside another's.
func TestMappingDetection(t *testing.T) {
	for _, c := range []struct {
		name  string
		attrs map[string]any
		conv  string
	}{
		{"x", map[string]any{"openinference.span.kind": "TOOL", "traceloop.span.kind": "tool"}, ConvOpenInference},
		{"ai.toolCall", map[string]any{"traceloop.entity.name": "e"}, ConvOpenLLMetry},
		{"x", map[string]any{"traceloop.anything": "v"}, ConvOpenLLMetry},
		{"x", map[string]any{"llm.request.type": "chat", "gen_ai.operation.name": "chat"}, ConvOpenLLMetry},
		{"ai.anything", nil, ConvAISDK},
		{"x", map[string]any{"ai.operationId": "ai.generateText"}, ConvAISDK},
		{"x", map[string]any{"ai.toolCall.name": "Bash"}, ConvAISDK},
		{"call_llm", map[string]any{"gcp.vertex.agent.llm_request": "{}", "gen_ai.request.model": "m"}, ConvADK},
		{"execute_tool Bash", map[string]any{"gen_ai.operation.name": "execute_tool", "gcp.vertex.agent.tool_call_args": "{}"}, ConvADK},
		{"WebSearch", map[string]any{"langsmith.span.kind": "tool", "gen_ai.operation.name": "execute_tool"}, ConvLangSmith},
		{"ai.toolCall", map[string]any{"ai.toolCall.name": "Bash", "langsmith.span.kind": "tool"}, ConvAISDK},            // an AI SDK span through LangSmith's exporter
		{"ai.toolCall x", map[string]any{"ai.operationId": "ai.toolCall", "openinference.span.kind": "TOOL"}, ConvAISDK}, // through OpenInference's processor
		{"xai.generate", nil, ConvGenAI},
		{"x", map[string]any{"gen_ai.operation.name": "chat"}, ConvGenAI},
		{"x", map[string]any{"ai.other": "v"}, ConvGenAI},
		{"incident-commander", map[string]any{"entity.type": "agent", "entity.id": "a", "operation.id": "u"}, ConvVoltAgent},
		{"tool.execution:Bash", map[string]any{"entity.type": "agent", "span.type": "tool", "operation.id": "u"}, ConvVoltAgent},
		{"x", map[string]any{"entity.type": "agent", "span.type": "tool"}, ConvGenAI}, // common words alone are anyone's
		{"Bash", map[string]any{"genkit:type": "action", "genkit:metadata:subtype": "tool"}, ConvGenkit},
		{"Tool: Bash", map[string]any{"tool.name": "Bash", "function.id": "call_1"}, ConvAx},
		{"AI Chat Request", map[string]any{"gen_ai.operation.name": "chat", "ax.session.id": "s"}, ConvAx},
		{"x", map[string]any{"tool.mode": "native", "function.id": "call_1"}, ConvAx},
	} {
		r, _, _ := mapped(t, mkSpan(1, 1, 0, c.name, 0, 1, c.attrs))
		if got := r.spans[0].conv; got != c.conv {
			t.Errorf("%q %v: read as %s, want %s", c.name, c.attrs, got, c.conv)
		}
	}
	if names := ConventionNames(); len(names) != 10 || names[len(names)-1] != ConvGenAI || names[0] != ConvOpenInference {
		t.Errorf("conventions in detection order: %v", names)
	}
}

// request is one OTLP request of one resource holding spans.
func request(res map[string]string, spans ...*tracepb.Span) *coltracepb.ExportTraceServiceRequest {
	r := &resourcepb.Resource{}
	for _, k := range []string{"service.name", "mayday.run_id", "mayday.faults", "host.name"} {
		if v, ok := res[k]; ok {
			r.Attributes = append(r.Attributes, &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}})
		}
	}
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{Resource: r,
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}}}}}
}

// Requests are sorted into runs: a resource naming mayday.run_id is a native run of that
// id unless --conventions forces a convention (then it is read as plain spans of its
// service); --service keeps one service and counts the spans of the others; a resource
// met again keeps its first attributes but for mayday.faults, which the last one gives.
func TestMappingRequestsIntoRuns(t *testing.T) {
	chat := map[string]any{"gen_ai.operation.name": "chat"}
	for _, c := range []struct {
		forced, service string
		runs            []string // run keys, in order
		native          bool
		skipped         int64
	}{
		{ConvAuto, "", []string{"r1", "service:plain"}, true, 0},
		{ConvGenAI, "", []string{"service:mayday", "service:plain"}, false, 0},
		{ConvAuto, "plain", []string{"r1", "service:plain"}, true, 0},
		{ConvGenAI, "plain", []string{"service:plain"}, false, 2},
	} {
		set := newSpanSet(c.forced, "test", c.service)
		reqs := []*coltracepb.ExportTraceServiceRequest{
			request(map[string]string{"service.name": "mayday", "mayday.run_id": "r1", "mayday.faults": "a", "host.name": "h1"},
				mkSpan(1, 1, 0, "chat m", 0, 1, chat)),
			request(map[string]string{"service.name": "mayday", "mayday.run_id": "r1", "mayday.faults": "b", "host.name": "h2"},
				mkSpan(1, 2, 0, "chat m", 1, 2, chat)),
			request(map[string]string{"service.name": "plain"}, mkSpan(2, 1, 0, "chat m", 0, 1, chat)),
		}
		for i, req := range reqs {
			if err := set.add(req, "req"); err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
		}
		var keys []string
		for _, r := range set.runs {
			keys = append(keys, r.id)
		}
		if !slices.Equal(keys, c.runs) || set.runs[0].native != c.native || set.skipped["mayday"] != c.skipped {
			t.Errorf("forced %s, service %q: runs %v (first native %v), skipped %v; want %v, %v, %d",
				c.forced, c.service, keys, set.runs[0].native, set.skipped, c.runs, c.native, c.skipped)
		}
		if want := int64(3) - c.skipped; set.spans != want {
			t.Errorf("forced %s, service %q: %d spans taken, want %d", c.forced, c.service, set.spans, want)
		}
		if r := set.runs[0]; r.id != "service:plain" {
			if h, f := r.resource["host.name"].GetStringValue(), r.resource["mayday.faults"].GetStringValue(); h != "h1" || f != "b" {
				t.Errorf("forced %s: resource host %q, faults %q; want the first host and the last faults", c.forced, h, f)
			}
		}
	}
}

// Run names from services: letters, digits, dots and underscores kept, each run of other
// characters one dash, dashes and dots trimmed at the ends, at most 60 characters.
func TestMappingSlugs(t *testing.T) {
	long := strings.Repeat("a", 70)
	for in, want := range map[string]string{
		"Agent Fleet/v2": "Agent-Fleet-v2", "  -x..y-- ": "x.y", "@@@": "unnamed", "": "unnamed",
		"a:b": "a-b", "AZaz09._": "AZaz09._", "é-z": "z", long: long[:60], long[:59] + " b": long[:59],
	} {
		if got := slugID(in); got != want {
			t.Errorf("slugID(%q) = %q, want %q", in, got, want)
		}
	}
}

// Attribute values of every OTLP type read as text; 408 and 504 are timeouts.
func TestMappingAttributeText(t *testing.T) {
	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	for _, c := range []struct {
		v    *commonpb.AnyValue
		want string
	}{
		{str("x"), "x"},
		{&commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: -3}}, "-3"},
		{&commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}, "true"},
		{&commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{str("a"), str("b")}}}}, `["a","b"]`},
		{&commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{{Key: "k", Value: str("v")}, {Key: "n", Value: str("1")}}}}}, `{"k":"v","n":"1"}`},
		{nil, ""},
	} {
		if got := anyText(c.v); got != c.want {
			t.Errorf("anyText(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	for status, want := range map[int64]string{408: "uncertain_completion", 504: "uncertain_completion"} {
		if got := classOf("", status); got != want {
			t.Errorf("HTTP %d: class %q, want %q", status, got, want)
		}
	}
}

// Explicit attempt numbers decide: attempt 2 continues the tool's last operation whatever
// its call id, attempt 1 starts a new one even right after a failure.
func TestMappingExplicitAttempts(t *testing.T) {
	agent := map[string]any{"gen_ai.operation.name": "invoke_agent"}
	tool := func(call string, attempt int) map[string]any {
		return map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search", "gen_ai.tool.call.id": call, "attempt": attempt}
	}
	_, b, _ := mapped(t,
		mkSpan(1, 1, 0, "invoke_agent a", 0, 100, agent),
		failWith(mkSpan(1, 2, 1, "execute_tool search", 1, 2, tool("c1", 1)), "503", ""),
		mkSpan(1, 3, 1, "execute_tool search", 3, 4, tool("c2", 2)),
		failWith(mkSpan(1, 4, 1, "execute_tool search", 5, 6, tool("c3", 1)), "503", ""),
		mkSpan(1, 5, 1, "execute_tool search", 7, 8, tool("c4", 1)))
	if got, want := opsOf(b), "search 1#1, search 1#2, search 2#1, search 3#1"; got != want {
		t.Errorf("explicit attempts: %s, want %s", got, want)
	}
}

// A human review is an escalation: awaiting_human from its start, back to running at its
// end when approved, to recovering when rejected or failed; supervisor spans are read as
// such in every convention, and a forced convention reads every span with it.
func TestMappingHumanAndForced(t *testing.T) {
	agent := map[string]any{"gen_ai.operation.name": "invoke_agent"}
	for decision, to := range map[string]string{"approved": "running", "rejected": "recovering"} {
		_, b, _ := mapped(t,
			mkSpan(1, 1, 0, "invoke_agent a", 0, 100, agent),
			mkSpan(1, 2, 1, "Human review", 10, 40, map[string]any{"review.decision": decision}),
			mkSpan(1, 3, 1, "supervisor check", 50, 51, nil))
		if len(b.invs) != 1 {
			t.Fatalf("%d investigations", len(b.invs))
		}
		inv := b.invs[0]
		if inv.rec.Escalations != 1 || len(inv.trans) != 2 || inv.trans[0].To != "awaiting_human" || inv.trans[1].To != to {
			t.Errorf("%s: %d escalations, transitions %+v; want one, to awaiting_human then %s", decision, inv.rec.Escalations, inv.trans, to)
		}
	}
	r, _, _ := mapped(t, mkSpan(1, 1, 0, "supervisor check", 0, 1, nil))
	if r.spans[0].role != roleSupervise {
		t.Errorf("supervisor span: role %d", r.spans[0].role)
	}
	set := newSpanSet(ConvOpenInference, "test", "")
	run, _ := set.run("service:x", false) // never an error before a spill
	if err := run.addSpan(mkSpan(1, 1, 0, "chat m", 0, 1, map[string]any{"gen_ai.operation.name": "chat"}), ConvOpenInference); err != nil {
		t.Fatal(err)
	}
	if s := run.spans[0]; s.conv != ConvOpenInference || s.role != roleOther {
		t.Errorf("forced OpenInference: %s, role %d; want OpenInference, other", s.conv, s.role)
	}
}

// linkedAgent is an agent run (trace 1: its agent span and a call of the tool delegate) and
// the sub-agent that call started, in a trace of its own (trace 2) that links to the call.
func linkedAgent() (top, call, sub *tracepb.Span) {
	agent := map[string]any{"gen_ai.operation.name": "invoke_agent"}
	top = mkSpan(1, 1, 0, "invoke_agent top", 0, 100, agent)
	call = mkSpan(1, 2, 1, "execute_tool delegate", 10, 50, map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "delegate"})
	sub = mkSpan(2, 1, 0, "invoke_agent sub", 12, 40, agent)
	sub.Links = []*tracepb.Span_Link{{TraceId: call.TraceId, SpanId: call.SpanId}}
	return top, call, sub
}

// An agent run in its own trace joins the run whose span it links to (OTLP span links):
// malformed links and links within its own trace are passed over.
func TestMappingTraceLinks(t *testing.T) {
	top, call, sub := linkedAgent()
	sub.Links = append([]*tracepb.Span_Link{
		{TraceId: call.TraceId[:8], SpanId: call.SpanId},               // malformed
		{TraceId: sub.TraceId, SpanId: []byte{0, 0, 0, 0, 0, 0, 2, 9}}, // its own trace
	}, sub.Links...)
	lone := mkSpan(3, 1, 0, "invoke_agent lone", 12, 40, map[string]any{"gen_ai.operation.name": "invoke_agent"})
	lone.Links = []*tracepb.Span_Link{{TraceId: lone.TraceId, SpanId: lone.SpanId}}
	_, b, st := mapped(t, top, call, sub, lone)
	byName := map[string]*inInv{}
	for _, inv := range b.invs {
		byName[inv.span.name] = inv
	}
	if s, p := byName["invoke_agent sub"], byName["invoke_agent top"]; s == nil || p == nil || s.parent != p || s.depth != 1 {
		t.Errorf("the linked run is not joined under the run it links to")
	}
	if l := byName["invoke_agent lone"]; l == nil || l.parent != nil || st.JoinedTraces != 1 {
		t.Errorf("a run linking only into its own trace was joined (%d joins)", st.JoinedTraces)
	}
}

// An investigation ended when its agent span has an end; one still open (no end time in
// the trace) has not.
func TestMappingInvestigationEnded(t *testing.T) {
	agent := map[string]any{"gen_ai.operation.name": "invoke_agent"}
	open := mkSpan(2, 1, 0, "invoke_agent open", 0, 10, agent)
	open.EndTimeUnixNano = 0
	_, b, _ := mapped(t, mkSpan(1, 1, 0, "invoke_agent done", 0, 10, agent), open)
	for _, inv := range b.invs {
		if want := inv.span.name == "invoke_agent done"; inv.rec.Ended != want {
			t.Errorf("%s: ended %v, want %v", inv.span.name, inv.rec.Ended, want)
		}
	}
	if len(b.invs) != 2 {
		t.Errorf("%d investigations, want 2", len(b.invs))
	}
}

// A tool span that threw but says nothing of it (status unset, no attribute: ADK JS) is a
// failed attempt when a later model request reports its result as an error, in the Gemini
// function-response form or the GenAI message-part form; the call id comes from the span, or
// else from the one call of its tool the model turn above it asked for. A result that is no
// error, a call the turn asked for twice, and a span with an explicit status stay as they are.
func TestMappingToolErrorsReportedToTheModel(t *testing.T) {
	calls := func(ids ...string) string {
		var parts []string
		for _, id := range ids {
			name, cid, _ := strings.Cut(id, "/")
			parts = append(parts, `{"functionCall":{"id":"`+cid+`","name":"`+name+`","args":{}}}`)
		}
		return `{"content":{"role":"model","parts":[` + strings.Join(parts, ",") + `]}}`
	}
	resp := func(id, name, response string) string {
		return `{"functionResponse":{"id":"` + id + `","name":"` + name + `","response":` + response + `}}`
	}
	req := func(parts ...string) string {
		return `{"contents":[{"role":"user","parts":[` + strings.Join(parts, ",") + `]}]}`
	}
	llm := func(id, parent byte, at float64, request, response string) *tracepb.Span {
		return mkSpan(1, id, parent, "call_llm", at, at+5, map[string]any{"gen_ai.request.model": "gemini-2.5-pro",
			"gcp.vertex.agent.llm_request": request, "gcp.vertex.agent.llm_response": response})
	}
	spans := []*tracepb.Span{
		mkSpan(1, 1, 0, "invoke_agent a", 0, 1000, map[string]any{"gen_ai.operation.name": "invoke_agent"}),
		llm(2, 1, 0, req(), calls("WebSearch/c1")),
		mkSpan(1, 3, 2, "execute_tool WebSearch", 1, 2, nil), // no id: c1, reported as a 503
		llm(4, 1, 10, req(resp("c1", "WebSearch", `{"error":"Error in tool 'WebSearch': 503 Service Unavailable"}`)), calls("Bash/c2", "Bash/c3")),
		mkSpan(1, 5, 4, "execute_tool Bash", 11, 12, nil), // the turn asked for Bash twice: no id
		mkSpan(1, 6, 4, "execute_tool Bash", 12, 13, nil),
		llm(7, 1, 20, req(resp("c2", "Bash", `{"error":"timed out"}`), resp("c3", "Bash", `{"error":"timed out"}`)), calls("docs/c4")),
		mkSpan(1, 8, 7, "execute_tool docs", 21, 22, map[string]any{"gen_ai.tool.call.id": "c4"}), // its own id, a GenAI part
		llm(9, 1, 30, req(`{"type":"tool_call_response","id":"c4","response":{"error":{"code":408}}}`), calls("Bash/c5")),
		mkSpan(1, 10, 9, "execute_tool Bash", 31, 32, nil), // result is no error
		llm(11, 1, 40, req(resp("c5", "Bash", `{"result":"ok","errors":0}`)), calls("Bash/c6")),
		mkSpan(1, 12, 11, "execute_tool Bash", 41, 42, nil), // explicit OK status: kept
		llm(13, 1, 50, req(resp("c6", "Bash", `{"error":"policy refusal: not allowed"}`)), calls()),
	}
	spans[11].Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}
	r, _, _ := mapped(t, spans...)
	want := map[byte][2]string{3: {"error", "transient"}, 5: {"ok", ""}, 6: {"ok", ""}, 8: {"error", "transient"}, 10: {"ok", ""}, 12: {"ok", ""}}
	for _, s := range r.spans {
		if s.role != roleTool {
			continue
		}
		id := s.otlpID[len(s.otlpID)-2:]
		var n byte
		fmt.Sscanf(id, "%x", &n)
		if got, w := [2]string{s.status, s.failureClass}, want[n]; got != w {
			t.Errorf("span %d (%s): %v, want %v", n, s.name, got, w)
		}
	}
}

// fit reads an imported review's decision as the import did: approved when the
// investigation went back to running at the review's end, rejected when it did not.
func TestFitReadsImportedReviewDecisions(t *testing.T) {
	agent := map[string]any{"gen_ai.operation.name": "invoke_agent"}
	path := filepath.Join(t.TempDir(), "reviews.binpb")
	writeRequest(t, path,
		mkSpan(1, 1, 0, "invoke_agent a", 0, 100, agent),
		mkSpan(1, 2, 1, "Human review", 10, 40, map[string]any{"review.decision": "approved"}),
		mkSpan(1, 3, 1, "Human review", 50, 60, map[string]any{"review.decision": "rejected"}),
		mkSpan(1, 4, 1, "Human review", 70, 80, nil))
	db, res := importInto(t, []string{path}, ImportOptions{})
	obs, err := db.FitInput(context.Background(), res.Runs[0].RunID)
	if err != nil {
		t.Fatal(err)
	}
	var got []bool
	for _, h := range obs.Humans {
		got = append(got, h.Approved)
	}
	if want := []bool{true, false, true}; !slices.Equal(got, want) {
		t.Errorf("reviews read as approved %v, want %v (approved, rejected, no decision: the import goes on)", got, want)
	}
}

// An agent span that only wraps agents (no tool call or model turn of its own outside them)
// is one investigation with the agents nested in it without a tool call between: the OpenAI
// Agents SDK's workflow root over the agent it runs (through a CHAIN), and a run handed from
// one agent to another under one wrapper. An agent that works keeps an agent nested in it
// as a sub-agent, and an agent reached through a tool call is a sub-agent whatever wraps it.
func TestMappingWrapperAgents(t *testing.T) {
	oi := func(kind string) map[string]any { return map[string]any{"openinference.span.kind": kind} }
	tool := func(name string) map[string]any {
		return map[string]any{"openinference.span.kind": "TOOL", "tool.name": name}
	}
	cases := []struct {
		name  string
		spans []*tracepb.Span
		invs  int // investigations
		subs  int // of them sub-agents
		tools int // tool attempts kept
	}{
		{"wrapper over one agent", []*tracepb.Span{
			mkSpan(1, 1, 0, "Agent workflow", 0, 100, oi("AGENT")),
			mkSpan(1, 2, 1, "Agent workflow", 0, 100, oi("CHAIN")),
			mkSpan(1, 3, 2, "triage", 1, 99, oi("AGENT")),
			mkSpan(1, 4, 3, "response", 2, 10, oi("LLM")),
			mkSpan(1, 5, 3, "Bash", 11, 20, tool("Bash")),
		}, 1, 0, 1},
		{"wrapper over a handoff", []*tracepb.Span{
			mkSpan(1, 1, 0, "Agent workflow", 0, 100, oi("AGENT")),
			mkSpan(1, 3, 1, "triage", 1, 50, oi("AGENT")),
			mkSpan(1, 4, 3, "response", 2, 10, oi("LLM")),
			mkSpan(1, 5, 1, "billing", 51, 99, oi("AGENT")),
			mkSpan(1, 6, 5, "Bash", 52, 60, tool("Bash")),
		}, 1, 0, 1},
		{"a working agent's nested agent", []*tracepb.Span{
			mkSpan(1, 1, 0, "supervisor", 0, 100, oi("AGENT")),
			mkSpan(1, 2, 1, "response", 1, 5, oi("LLM")),
			mkSpan(1, 3, 1, "worker", 6, 99, oi("AGENT")),
			mkSpan(1, 4, 3, "Bash", 7, 20, tool("Bash")),
		}, 2, 1, 1},
		{"an agent run by a tool under a wrapper", []*tracepb.Span{
			mkSpan(1, 1, 0, "Agent workflow", 0, 100, oi("AGENT")),
			mkSpan(1, 2, 1, "triage", 1, 99, oi("AGENT")),
			mkSpan(1, 3, 2, "Task", 2, 90, tool("Task")),
			mkSpan(1, 4, 3, "Agent workflow", 3, 89, oi("CHAIN")),
			mkSpan(1, 5, 4, "researcher", 4, 88, oi("AGENT")),
			mkSpan(1, 6, 5, "WebSearch", 5, 20, tool("WebSearch")),
		}, 2, 1, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, b, _ := mapped(t, c.spans...)
			subs := 0
			for _, inv := range b.invs {
				if inv.parent != nil {
					subs++
				}
			}
			if len(b.invs) != c.invs || subs != c.subs {
				t.Errorf("%d investigations, %d of them sub-agents; want %d and %d", len(b.invs), subs, c.invs, c.subs)
			}
			tools := 0
			for _, inv := range b.invs {
				for _, s := range inv.members {
					if s.role == roleTool {
						tools++
					}
				}
			}
			if tools != c.tools {
				t.Errorf("%d tool attempts kept, want %d", tools, c.tools)
			}
		})
	}
}

// A model turn's time for fit ends at the first tool call of its investigation that begins
// while the turn's span is still open (Mastra keeps its chat span open while the tools it
// asked for run), else at the span's end; a tool call of another investigation (a
// sub-agent's) does not cut it.
func TestFitModelTurnsEndAtTheirToolCalls(t *testing.T) {
	agent := map[string]any{"gen_ai.operation.name": "invoke_agent"}
	chat := map[string]any{"gen_ai.operation.name": "chat"}
	tool := func(name string) map[string]any {
		return map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
	}
	path := filepath.Join(t.TempDir(), "turns.binpb")
	writeRequest(t, path,
		mkSpan(1, 1, 0, "invoke_agent a", 0, 100, agent),
		mkSpan(1, 2, 1, "chat m", 0, 30, chat), // open over the two tool calls it asked for
		mkSpan(1, 3, 1, "execute_tool Bash", 2, 12, tool("Bash")),
		mkSpan(1, 4, 1, "execute_tool Bash", 14, 29, tool("Bash")),
		mkSpan(1, 5, 1, "chat m", 31, 34, chat), // closed before its tool call
		mkSpan(1, 6, 1, "execute_tool Task", 35, 90, tool("Task")),
		mkSpan(1, 7, 6, "invoke_agent sub", 36, 89, agent),
		mkSpan(1, 8, 1, "chat m", 37, 60, chat), // open over the sub-agent's call only
		mkSpan(1, 9, 7, "execute_tool WebSearch", 40, 50, tool("WebSearch")))
	db, res := importInto(t, []string{path}, ImportOptions{})
	obs, err := db.FitInput(context.Background(), res.Runs[0].RunID)
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for _, turn := range obs.Turns {
		got = append(got, turn.Seconds)
	}
	if want := []float64{2, 3, 23}; !slices.Equal(got, want) {
		t.Errorf("model turns of %v s, want %v", got, want)
	}
}
