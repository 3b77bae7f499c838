package analysis

// Tests of the import's mapping that need no database: each convention's declaration read
// off a span as its library writes it, and the rules that build operations, investigations
// and failure classes (go test -tags duckdb_arrow -run 'Convention|Mapping|FailureClass'
// ./analysis/ runs them in seconds).

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mayday-sim/mayday/sim/record"
)

// mkSpan is a span of trace tr with id and parent (0 = none), starting and ending at the
// given seconds after 10:00 on 1 May 2026, with attributes of any OTLP value type.
func mkSpan(tr, id, parent byte, name string, start, end float64, attrs map[string]any) *tracepb.Span {
	t0 := uint64(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC).UnixNano())
	s := &tracepb.Span{TraceId: []byte{tr, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, SpanId: []byte{0, 0, 0, 0, 0, 0, tr, id}, Name: name,
		StartTimeUnixNano: t0 + uint64(start*1e9), EndTimeUnixNano: t0 + uint64(end*1e9)}
	if parent != 0 {
		s.ParentSpanId = []byte{0, 0, 0, 0, 0, 0, tr, parent}
	}
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var v *commonpb.AnyValue
		switch x := attrs[k].(type) {
		case string:
			v = &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: x}}
		case int:
			v = &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: int64(x)}}
		default:
			panic(fmt.Sprintf("attribute %s: %T", k, x))
		}
		s.Attributes = append(s.Attributes, &commonpb.KeyValue{Key: k, Value: v})
	}
	return s
}

func failWith(s *tracepb.Span, msg string, exceptionType string) *tracepb.Span {
	s.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: msg}
	if exceptionType != "" {
		s.Events = append(s.Events, &tracepb.Span_Event{Name: "exception", Attributes: []*commonpb.KeyValue{
			{Key: "exception.type", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: exceptionType}}},
			{Key: "exception.message", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: msg}}}}})
	}
	return s
}

// mapped reads spans as one run of plain spans (conventions auto) and builds its records.
func mapped(t *testing.T, spans ...*tracepb.Span) (*inRun, *built, *importStats) {
	t.Helper()
	set := newSpanSet(ConvAuto, "test", "")
	r, _ := set.run("service:", false) // a run of an import that has not spilled: never an error
	for _, sp := range spans {
		if err := r.addSpan(sp, ConvAuto); err != nil {
			t.Fatal(err)
		}
	}
	st := &importStats{}
	return r, buildGeneric(r, DefaultRetryWindow, st), st
}

func spanNamed(r *inRun, name string) *inSpan {
	for _, s := range r.spans {
		if s.name == name {
			return s
		}
	}
	return nil
}

// Each convention's declaration, read off a span as its library writes it: the convention
// detected, the role, the tool, call id and arguments, the tokens, the model and the session.
func TestConventionDeclarations(t *testing.T) {
	cases := []struct {
		conv, name string
		attrs      map[string]any
		role       spanRole
		tool       string
		call, args string
		in, out    int64
		model      string
		session    string
	}{
		{conv: ConvGenAI, name: "execute_tool mcp.github.create_issue", attrs: map[string]any{"gen_ai.operation.name": "execute_tool",
			"gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": `{"repo":"a"}`, "gen_ai.conversation.id": "conv-1"},
			role: roleTool, tool: "mcp.github.create_issue", call: "call_1", args: `{"repo":"a"}`, session: "conv-1"},
		{conv: ConvGenAI, name: "chat claude", attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 100,
			"gen_ai.usage.output_tokens": 7, "gen_ai.request.model": "claude", "gen_ai.response.model": "claude-2"},
			role: roleModel, in: 100, out: 7, model: "claude-2"},
		{conv: ConvGenAI, name: "invoke_agent researcher", attrs: map[string]any{"gen_ai.operation.name": "invoke_agent"}, role: roleAgent},
		{conv: ConvGenAI, name: "step 2", attrs: map[string]any{"gen_ai.operation.name": "agent_step"}, role: roleOther},
		{conv: ConvGenAI, name: "legacy model", attrs: map[string]any{"gen_ai.system": "openai", "gen_ai.usage.prompt_tokens": 30,
			"gen_ai.usage.completion_tokens": 4}, role: roleModel, in: 30, out: 4},
		{conv: ConvAISDK, name: "ai.toolCall", attrs: map[string]any{"ai.operationId": "ai.toolCall", "ai.toolCall.name": "Bash",
			"ai.toolCall.id": "call_9", "ai.toolCall.args": `{"command":"ls"}`}, role: roleTool, tool: "Bash", call: "call_9", args: `{"command":"ls"}`},
		{conv: ConvAISDK, name: "ai.generateText.doGenerate", attrs: map[string]any{"ai.usage.promptTokens": 50, "ai.usage.completionTokens": 5,
			"ai.model.id": "mock"}, role: roleModel, in: 50, out: 5, model: "mock"},
		{conv: ConvAISDK, name: "ai.generateText", attrs: map[string]any{"ai.telemetry.metadata.sessionId": "s-4"}, role: roleAgent, session: "s-4"},
		{conv: ConvAISDK, name: "ai.streamText.doStream", attrs: map[string]any{"ai.usage.inputTokens": 9, "ai.usage.outputTokens": 2}, role: roleModel, in: 9, out: 2},
		{conv: ConvOpenInference, name: "WebSearch", attrs: map[string]any{"openinference.span.kind": "TOOL", "tool.name": "WebSearch",
			"input.value": `{"query":"x"}`, "session.id": "inv-7"}, role: roleTool, tool: "WebSearch", args: `{"query":"x"}`, session: "inv-7"},
		{conv: ConvOpenInference, name: "ScriptedChatModel", attrs: map[string]any{"openinference.span.kind": "LLM", "llm.token_count.prompt": 120,
			"llm.token_count.completion": 12, "llm.model_name": "scripted"}, role: roleModel, in: 120, out: 12, model: "scripted"},
		{conv: ConvOpenInference, name: "total only", attrs: map[string]any{"openinference.span.kind": "llm", "llm.token_count.total": 40}, role: roleModel, in: 40},
		// a chain alone is its trace's root, where an agent stands (LangChain's createAgent);
		// under an agent it is a step (TestMappingWrapperAgents, the library fixtures)
		{conv: ConvOpenInference, name: "incident-agent", attrs: map[string]any{"openinference.span.kind": "CHAIN"}, role: roleAgent},
		{conv: ConvOpenInference, name: "agent", attrs: map[string]any{"openinference.span.kind": "AGENT"}, role: roleAgent},
		{conv: ConvOpenLLMetry, name: "WebSearch.tool", attrs: map[string]any{"traceloop.span.kind": "tool", "traceloop.entity.name": "WebSearch",
			"traceloop.entity.input": `{"q":1}`, "traceloop.association.properties.session_id": "s-9"}, role: roleTool, tool: "WebSearch", args: `{"q":1}`, session: "s-9"},
		{conv: ConvOpenLLMetry, name: "ops.agent", attrs: map[string]any{"traceloop.span.kind": "agent"}, role: roleAgent},
		{conv: ConvOpenLLMetry, name: "openai.chat", attrs: map[string]any{"llm.request.type": "chat", "llm.usage.prompt_tokens": 11,
			"llm.usage.completion_tokens": 3, "llm.response.model": "gpt"}, role: roleModel, in: 11, out: 3, model: "gpt"},
		{conv: ConvOpenLLMetry, name: "ops.workflow", attrs: map[string]any{"traceloop.span.kind": "workflow"}, role: roleOther},
		// Pydantic AI's default names before its instrumentation version 3 (no operation name
		// on its agent and tool spans), and a tool span that names none but its call id
		{conv: ConvGenAI, name: "agent run", attrs: map[string]any{"agent_name": "triage", "logfire.msg": "triage run"}, role: roleAgent},
		{conv: ConvGenAI, name: "running tool", attrs: map[string]any{"gen_ai.tool.name": "WebSearch", "gen_ai.tool.call.id": "call_3",
			"tool_arguments": `{"q":"x"}`, "logfire.msg": "running tool: WebSearch"}, role: roleTool, tool: "WebSearch", call: "call_3", args: `{"q":"x"}`},
		{conv: ConvGenAI, name: "execute_tool Bash", attrs: map[string]any{"gen_ai.tool.name": "Bash", "gen_ai.tool.call.id": "call_4"},
			role: roleTool, tool: "Bash", call: "call_4"},
		{conv: ConvGenAI, name: "lookup", attrs: map[string]any{"gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": "call_5"},
			role: roleTool, tool: "lookup", call: "call_5"},
	}
	for i, c := range cases {
		t.Run(c.conv+"/"+c.name, func(t *testing.T) {
			r, _, _ := mapped(t, mkSpan(byte(i+1), 1, 0, c.name, 0, 1, c.attrs))
			s := r.spans[0]
			if s.conv != c.conv || s.role != c.role {
				t.Fatalf("read as %s, role %d; want %s, role %d", s.conv, s.role, c.conv, c.role)
			}
			cv := s.convention()
			if c.role == roleTool {
				if got := cv.toolName(s); got != c.tool {
					t.Errorf("tool %q, want %q", got, c.tool)
				}
			}
			if got := s.str(cv.CallID...); got != c.call {
				t.Errorf("call id %q, want %q", got, c.call)
			}
			if got := s.str(cv.Args...); got != c.args {
				t.Errorf("arguments %q, want %q", got, c.args)
			}
			if in, out := cv.tokens(s); in != c.in || out != c.out {
				t.Errorf("tokens %d in, %d out; want %d, %d", in, out, c.in, c.out)
			}
			if c.role == roleModel {
				if got := modelName(s); got != c.model {
					t.Errorf("model %q, want %q", got, c.model)
				}
			}
			if got := s.str(cv.Session...); got != c.session {
				t.Errorf("session %q, want %q", got, c.session)
			}
		})
	}
}

// A failure's class comes from its type and the first line of its messages, never from the
// stack that follows.
func TestFailureClassFromFirstLine(t *testing.T) {
	stack := "\n\nError: 503 Service Unavailable\n    at Timeout.setTimeout (node:timers:594:17)\n    at checkPolicy (policy.js:3)\n    at spendBudget (budget.js:9)"
	cases := []struct {
		msg, excType string
		status       string
		class        string
	}{
		{"503 Service Unavailable" + stack, "", "error", "transient"},
		{"503 Service Unavailable" + stack, "Error", "error", "transient"},
		{"WebSearch timed out after 30000 ms\n    at policy (x.js:1)", "TimeoutError", "timeout", "uncertain_completion"},
		{"connect ETIMEDOUT 10.0.0.1:443", "", "timeout", "uncertain_completion"},
		{"refused: not allowed to push to main\n    at timeout (t.js:1)", "PolicyViolationError", "error", "policy_violation"},
		{"context length exceeded", "", "error", "resource_exhaustion"},
		{"gave up: Bash failed 3 times\n    at Object.policy (agent.js:10)\n    at budget", "AgentGaveUpError", "error", "transient"},
	}
	for i, c := range cases {
		s := failWith(mkSpan(byte(i+1), 1, 0, "execute_tool Bash", 0, 1, map[string]any{"gen_ai.operation.name": "execute_tool"}), c.msg, c.excType)
		r, _, _ := mapped(t, s)
		if got := r.spans[0]; got.status != c.status || got.failureClass != c.class {
			t.Errorf("%q (%s): %s %s, want %s %s", firstLine(c.msg), c.excType, got.status, got.failureClass, c.status, c.class)
		}
	}
	// An HTTP status code of a gateway timeout says timeout whatever the message.
	s := failWith(mkSpan(9, 1, 0, "execute_tool Bash", 0, 1, map[string]any{"gen_ai.operation.name": "execute_tool", "http.response.status_code": 504}), "upstream", "")
	if r, _, _ := mapped(t, s); r.spans[0].failureClass != "uncertain_completion" {
		t.Errorf("a 504: class %s, want uncertain_completion", r.spans[0].failureClass)
	}
}

// A bare Error or Exception type takes the name the message begins with ("TimeoutError:
// ..."), as JavaScript and Python print their errors; a message that begins otherwise, or
// with a name that is no error's, leaves the type as written.
func TestErrorTypeFromMessagePrefix(t *testing.T) {
	cases := []struct{ msg, excType, want string }{
		{"TimeoutError: Bash timed out after 20000 ms", "Error", "TimeoutError"},
		{"openai.RateLimitError: 429 Too Many Requests", "Exception", "openai.RateLimitError"},
		{"TimeoutError: Bash timed out", "", "TimeoutError"},
		{"503 Service Unavailable", "Error", "Error"},
		{"Note: retrying later", "Error", "Error"},
		{"Error: 503 Service Unavailable", "Error", "Error"},
		{"TimeoutError: Bash timed out", "PolicyViolationError", "PolicyViolationError"},
		{"Time out Error: x", "Error", "Error"},
	}
	for i, c := range cases {
		s := failWith(mkSpan(byte(i+1), 1, 0, "execute_tool Bash", 0, 1, map[string]any{"gen_ai.operation.name": "execute_tool"}), c.msg, c.excType)
		r, _, _ := mapped(t, s)
		if got := r.spans[0].errType; got != c.want {
			t.Errorf("%q (type %q): error type %q, want %q", c.msg, c.excType, got, c.want)
		}
	}
}

// opsOf lists the tool attempts of a built run as "tool step#attempt", in start order.
func opsOf(b *built) string {
	var out []string
	for _, s := range b.spans {
		if s.Operation == record.OpExecuteTool {
			out = append(out, fmt.Sprintf("%s %d#%d", s.Tool, s.OpKey.Step, s.Attempt))
		}
	}
	return strings.Join(out, ", ")
}

// Retries as agent libraries make them: the failed tool called again at a later step,
// under a new step span, with a new call id, is the next attempt of one operation, until it
// succeeds; a refusal by policy, other arguments, a step of other tools in between, or the
// window closes the operation.
func TestMappingRetriesAcrossSteps(t *testing.T) {
	agent := map[string]any{"gen_ai.operation.name": "invoke_agent"}
	step := map[string]any{"gen_ai.operation.name": "agent_step"}
	chat := map[string]any{"gen_ai.operation.name": "chat"}
	tool := func(name, call, args string) map[string]any {
		a := map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call}
		if args != "" {
			a["gen_ai.tool.call.arguments"] = args
		}
		return a
	}
	// Each step: a step span, a model turn, then the step's tool calls.
	spans := []*tracepb.Span{mkSpan(1, 1, 0, "invoke_agent a", 0, 1000, agent)}
	id := byte(1)
	at := 0.0
	stepOf := func(calls ...func(parent byte, at float64) *tracepb.Span) {
		id++
		stepID := id
		spans = append(spans, mkSpan(1, stepID, 1, "step", at, at+9, step))
		id++
		spans = append(spans, mkSpan(1, id, stepID, "chat m", at, at+1, chat))
		for _, c := range calls {
			id++
			spans = append(spans, c(stepID, at+1.5))
		}
		at += 10
	}
	call := func(name, callID, args string, fail, refused bool) func(byte, float64) *tracepb.Span {
		return func(parent byte, at float64) *tracepb.Span {
			s := mkSpan(1, id, parent, "execute_tool "+name, at, at+1, tool(name, callID, args))
			switch {
			case refused:
				failWith(s, "forbidden by policy", "PolicyViolationError")
			case fail:
				failWith(s, "503 Service Unavailable", "Error")
			}
			return s
		}
	}
	stepOf(call("WebSearch", "c1", `{"q":"a"}`, true, false), call("Bash", "c2", "", false, false)) // search fails; Bash alongside
	stepOf(call("WebSearch", "c3", `{"q":"a"}`, true, false))                                       // its retry, fails again
	stepOf(call("WebSearch", "c4", `{"q":"a"}`, false, false))                                      // third attempt succeeds
	stepOf(call("Bash", "c5", "", true, false))                                                     // Bash fails
	stepOf(call("docs", "c6", "", false, false))                                                    // the agent moves on
	stepOf(call("Bash", "c7", "", false, false))                                                    // a new Bash operation
	stepOf(call("Bash", "c8", "", false, true))                                                     // refused by policy
	stepOf(call("Bash", "c9", "", false, false))                                                    // not a retry of a refusal
	stepOf(call("WebSearch", "c10", `{"q":"b"}`, true, false))                                      // fails
	stepOf(call("WebSearch", "c11", `{"q":"c"}`, false, false))                                     // other arguments: new
	_, b, _ := mapped(t, spans...)
	want := "WebSearch 1#1, Bash 2#1, WebSearch 1#2, WebSearch 1#3, Bash 3#1, docs 4#1, Bash 5#1, Bash 6#1, Bash 7#1, WebSearch 8#1, WebSearch 9#1"
	if got := opsOf(b); got != want {
		t.Errorf("operations\n got %s\nwant %s", got, want)
	}
}

// When a run's call ids repeat (an instrumentation that marks retries with them), a new id
// is a new operation even after a failure; past the window, a call is never a retry.
func TestMappingCallIDsAndWindow(t *testing.T) {
	agent := map[string]any{"gen_ai.operation.name": "invoke_agent"}
	tool := func(call string) map[string]any {
		return map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search", "gen_ai.tool.call.id": call}
	}
	_, b, _ := mapped(t,
		mkSpan(1, 1, 0, "invoke_agent a", 0, 2000, agent),
		failWith(mkSpan(1, 2, 1, "execute_tool search", 1, 2, tool("a")), "503", ""),
		mkSpan(1, 3, 1, "execute_tool search", 3, 4, tool("b")),
		mkSpan(1, 4, 1, "execute_tool search", 5, 6, tool("a")))
	if got, want := opsOf(b), "search 1#1, search 2#1, search 1#2"; got != want {
		t.Errorf("repeating ids: %s, want %s", got, want)
	}
	_, b, _ = mapped(t,
		mkSpan(1, 1, 0, "invoke_agent a", 0, 2000, agent),
		failWith(mkSpan(1, 2, 1, "execute_tool search", 1, 2, tool("x1")), "503", ""),
		mkSpan(1, 3, 1, "execute_tool search", 2+DefaultRetryWindow.Seconds()+1, 2+DefaultRetryWindow.Seconds()+2, tool("x2")))
	if got, want := opsOf(b), "search 1#1, search 2#1"; got != want {
		t.Errorf("past the window: %s, want %s", got, want)
	}
}

// Traces as they are: a trace whose root span is missing is one investigation of all its
// fragments, failed when its last call failed; a loop of parent links is cut; an agent run
// in its own trace joins the run that started it through its session id.
func TestMappingInvestigations(t *testing.T) {
	tool := map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Bash"}
	chat := map[string]any{"gen_ai.operation.name": "chat"}
	root := map[string]any{"openinference.span.kind": "CHAIN", "session.id": "inv-1"}
	llm := map[string]any{"openinference.span.kind": "LLM", "session.id": "inv-1"}
	_, b, st := mapped(t,
		// trace 1: the root span (id 1) was never sent; three fragments under it
		mkSpan(1, 2, 1, "step 1", 0, 10, map[string]any{"gen_ai.operation.name": "agent_step"}),
		mkSpan(1, 3, 2, "chat m", 0, 1, chat),
		mkSpan(1, 4, 1, "execute_tool Bash", 20, 21, tool),
		failWith(mkSpan(1, 5, 1, "execute_tool Bash", 30, 31, tool), "503", ""),
		// trace 2: a span that is its own parent
		mkSpan(2, 1, 1, "execute_tool Bash", 0, 1, tool),
		// trace 3: a graph run, and trace 4: its sub-agent in a trace of its own, same session
		mkSpan(3, 1, 0, "incident-graph", 100, 200, root),
		mkSpan(3, 2, 1, "ScriptedChatModel", 100, 101, llm),
		mkSpan(4, 1, 0, "researcher", 120, 150, root),
		mkSpan(4, 2, 1, "ScriptedChatModel", 120, 121, llm),
	)
	if len(b.invs) != 4 {
		t.Fatalf("%d investigations, want 4 (one per trace)", len(b.invs))
	}
	var frag *inInv
	for _, inv := range b.invs {
		if inv.span.missingRoot {
			frag = inv
		}
	}
	if frag == nil || frag.span.traceHex != spanNamed(frag.span.run, "step 1").traceHex || frag.rec.FinalState != "terminated" || len(frag.members) != 4 {
		t.Fatalf("the trace without its root is not one failed investigation of its 4 fragments")
	}
	if st.MissingRoots != 1 || st.CyclesBroken != 1 || st.JoinedTraces != 1 {
		t.Errorf("summary %+v: want 1 missing root, 1 loop cut, 1 trace joined", st)
	}
	var graph, sub *inInv
	for _, inv := range b.invs {
		switch inv.span.name {
		case "incident-graph":
			graph = inv
		case "researcher":
			sub = inv
		}
	}
	if graph == nil || sub == nil || sub.parent != graph || sub.depth != 1 || graph.parent != nil {
		t.Errorf("the sub-agent's trace is not joined to the graph run that started it")
	}
}

// An error.type that names no error (Mastra's unknown, the GenAI conventions' _OTHER) gives
// way to the exception's own type when that names one; a specific error.type stands.
func TestGenericErrorTypeGivesWay(t *testing.T) {
	for i, c := range []struct{ errorType, excType, want string }{
		{"unknown", "TimeoutError", "TimeoutError"},
		{"_OTHER", "PolicyViolationError", "PolicyViolationError"},
		{"unknown", "Error", "unknown"},
		{"RateLimitError", "TimeoutError", "RateLimitError"},
	} {
		s := failWith(mkSpan(byte(i+1), 1, 0, "execute_tool Bash", 0, 1,
			map[string]any{"gen_ai.operation.name": "execute_tool", "error.type": c.errorType}), "it failed", c.excType)
		r, _, _ := mapped(t, s)
		if got := r.spans[0].errType; got != c.want {
			t.Errorf("error.type %s, exception %s: type %s, want %s", c.errorType, c.excType, got, c.want)
		}
	}
}

// An error's name is read where it is printed "Name: message", at the message's start or
// inside it (a wrapper's message around the error's own), never a bare Error or a word that
// only ends in Error without the colon.
func TestErrorNameInMessage(t *testing.T) {
	for msg, want := range map[string]string{
		"TimeoutError: Bash timed out": "TimeoutError",
		`Error in agent run: {"error":"AgentGaveUpError: gave up: Bash failed 3 times"}`:   "AgentGaveUpError",
		"Error: 503 Service Unavailable":                                                   "",
		"openai.RateLimitError: too many requests":                                         "openai.RateLimitError",
		"retrying after a TimeoutError in Bash":                                            "",
		`Error running tool (non-fatal): {"error":"Tool execution failed. Error details"}`: "",
		"": "",
	} {
		if got := errorName(msg); got != want {
			t.Errorf("errorName(%q) = %q, want %q", msg, got, want)
		}
	}
}

// An AI SDK span carrying OpenInference's attributes too (@arizeai/openinference-vercel) is
// read by the AI SDK convention, and fails only with an exception event of its own: the
// processor's copy of a trace's first error onto a later span without a status is no
// failure of that span.
func TestAISDKFailsWithItsExceptions(t *testing.T) {
	attrs := map[string]any{"ai.operationId": "ai.toolCall", "ai.toolCall.name": "Bash", "ai.toolCall.id": "c1",
		"openinference.span.kind": "TOOL", "tool.name": "Bash"}
	copied := mkSpan(1, 1, 0, "ai.toolCall sre-copilot", 0, 1, attrs)
	copied.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "503 Service Unavailable"}
	own := failWith(mkSpan(2, 1, 0, "ai.toolCall sre-copilot", 0, 1, attrs), "Bash timed out after 20000 ms", "TimeoutError")
	r, _, _ := mapped(t, copied, own)
	for _, s := range r.spans {
		if s.conv != ConvAISDK || s.role != roleTool {
			t.Errorf("%s: convention %s, role %v; want the AI SDK's tool", s.key, s.conv, s.role)
		}
	}
	if s := r.spans[0]; s.status != "ok" {
		t.Errorf("an error status without the SDK's exception: %s %s, want ok", s.status, s.failureClass)
	}
	if s := r.spans[1]; s.status != "timeout" || s.failureClass != "uncertain_completion" {
		t.Errorf("the SDK's own failure: %s %s, want timeout", s.status, s.failureClass)
	}
}

// A terminated run's reason is its error's name when it has one, else the first line of
// its status message (never the stack after it), else the bare type it has.
func TestTerminationReason(t *testing.T) {
	for _, c := range []struct{ errType, msg, want string }{
		{"AgentGaveUpError", "gave up: Bash failed 3 times", "AgentGaveUpError"},
		{"exception", "gave up: Bash failed 3 times\n    at agent (a.js:1)", "gave up: Bash failed 3 times"},
		{"unknown", "gave up: docs/search failed 3 times", "gave up: docs/search failed 3 times"},
		{"Error", "", "Error"},
		{"", "it failed", "it failed"},
		{"exception", "  \n", "exception"},
	} {
		if got := terminationReason(&inSpan{errType: c.errType, msg: c.msg}); got != c.want {
			t.Errorf("type %q, message %q: reason %q, want %q", c.errType, c.msg, got, c.want)
		}
	}
}

// A session shared by many traces: a conversation of 20,000 turns, each its own trace and
// over before the next begins, joins nothing; 20,000 agent runs each begun while the one
// before still ran join into one chain, each a sub-agent of the one before it. The session
// rule sweeps the session's runs in start order and finds each run's top by path
// compression, and an investigation's root and depth are found once each: compared run to
// run, as the rule was first written, these 40,000 runs took 4·10⁸ steps.
func TestMappingLongSessions(t *testing.T) {
	const n = 20000
	t0 := uint64(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC).UnixNano())
	agent := func(trace int, session string, start, end uint64) *tracepb.Span {
		id := make([]byte, 16)
		binary.BigEndian.PutUint64(id[8:], uint64(trace))
		return &tracepb.Span{TraceId: id, SpanId: id[8:], Name: "invoke_agent a", StartTimeUnixNano: t0 + start, EndTimeUnixNano: t0 + end,
			Attributes: []*commonpb.KeyValue{strAttr("gen_ai.operation.name", "invoke_agent"), strAttr("gen_ai.conversation.id", session)}}
	}
	var spans []*tracepb.Span
	for i := range n {
		spans = append(spans, agent(i+1, "turns", uint64(i)*10, uint64(i)*10+5))    // over before the next begins
		spans = append(spans, agent(n+i+1, "chain", uint64(i)*10, uint64(i)*10+25)) // the next begins while it runs
	}
	_, b, st := mapped(t, spans...)
	if len(b.invs) != 2*n {
		t.Fatalf("%d investigations, want %d", len(b.invs), 2*n)
	}
	if st.JoinedTraces != n-1 {
		t.Errorf("%d traces joined, want %d (each run of the chain but the first)", st.JoinedTraces, n-1)
	}
	depth := map[string][]int32{}
	for _, inv := range b.invs {
		depth[inv.session()] = append(depth[inv.session()], inv.depth)
	}
	for i, d := range depth["chain"] {
		if d != int32(i) {
			t.Fatalf("run %d of the chain at depth %d, want %d (a sub-agent of the run before it)", i, d, i)
		}
	}
	for i, d := range depth["turns"] {
		if d != 0 {
			t.Fatalf("turn %d at depth %d, want 0 (no turn runs while another does)", i, d)
		}
	}
}

// A model span that lasts the whole run (VoltAgent's llm:generateText, its tool calls its
// siblings) and fails at the end failed after the run's operations, planning the next: its
// failure is an operation of its own, not the first tool operation's (whose episode it
// would take over, read as the model's). Where nothing runs during the model turns, a step
// with no tool call between parts the calls, as before.
func TestMappingFailedEnclosingTurn(t *testing.T) {
	agent := map[string]any{"gen_ai.operation.name": "invoke_agent"}
	chat := map[string]any{"gen_ai.operation.name": "chat"}
	tool := map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "WebSearch", "gen_ai.tool.call.arguments": `{"q":1}`}
	bash := map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Bash"}
	_, b, _ := mapped(t,
		mkSpan(1, 1, 0, "invoke_agent a", 0, 100, agent),
		failWith(mkSpan(1, 2, 1, "chat m", 1, 99, chat), "gave up: WebSearch failed 2 times", "AgentGaveUpError"),
		failWith(mkSpan(1, 3, 1, "execute_tool WebSearch", 10, 11, tool), "503", ""),
		failWith(mkSpan(1, 4, 1, "execute_tool WebSearch", 20, 21, tool), "503", ""),
		mkSpan(1, 5, 1, "execute_tool Bash", 30, 31, bash),
		failWith(mkSpan(1, 6, 1, "execute_tool WebSearch", 40, 41, tool), "503", ""),
	)
	if got, want := opsOf(b), "WebSearch 1#1, WebSearch 1#2, Bash 2#1, WebSearch 3#1"; got != want {
		t.Errorf("operations %s, want %s (Bash, called after the failure, says the agent went on)", got, want)
	}
	for _, s := range b.spans {
		if s.Operation == record.OpPlan && s.OpKey.Step != 4 {
			t.Errorf("the failed model turn is step %d, want 4 (after the run's three operations)", s.OpKey.Step)
		}
	}
}

// One investigation of 40,000 failed calls of one tool, each with arguments of its own, and
// then of 20,000 tools each called twice: every call of the first is an operation of its
// own (other arguments), every second call of the second a retry. An investigation keeps at
// most maxOpenOps failed operations of a tool open, and a step's tools are counted by
// search, so each call costs the same however many came before: compared with every
// earlier failed call, as the rule was first written, these took 16·10⁸ steps.
func TestMappingManyFailedCalls(t *testing.T) {
	const n = 40000
	t0 := uint64(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC).UnixNano())
	trace := bytes.Repeat([]byte{7}, 16)
	call := func(i int, tool, args string) *tracepb.Span {
		id := make([]byte, 8)
		binary.BigEndian.PutUint64(id, uint64(i+2))
		return &tracepb.Span{TraceId: trace, SpanId: id, ParentSpanId: []byte{0, 0, 0, 0, 0, 0, 0, 1}, Name: "execute_tool " + tool,
			StartTimeUnixNano: t0 + uint64(i)*1e6, EndTimeUnixNano: t0 + uint64(i)*1e6 + 5e5,
			Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "503 Service Unavailable"},
			Attributes: []*commonpb.KeyValue{strAttr("gen_ai.operation.name", "execute_tool"), strAttr("gen_ai.tool.name", tool),
				strAttr("gen_ai.tool.call.arguments", args)}}
	}
	for _, c := range []struct {
		name string
		call func(i int) *tracepb.Span
		ops  int
	}{
		{"one tool, every call its own arguments", func(i int) *tracepb.Span { return call(i, "Bash", fmt.Sprintf(`{"c":%d}`, i)) }, n},
		{"a tool per two calls", func(i int) *tracepb.Span { return call(i, fmt.Sprintf("t%d", i/2), `{}`) }, n / 2},
	} {
		spans := []*tracepb.Span{{TraceId: trace, SpanId: []byte{0, 0, 0, 0, 0, 0, 0, 1}, Name: "invoke_agent a",
			StartTimeUnixNano: t0, EndTimeUnixNano: t0 + uint64(n+1)*1e6,
			Attributes: []*commonpb.KeyValue{strAttr("gen_ai.operation.name", "invoke_agent")}}}
		for i := range n {
			spans = append(spans, c.call(i))
		}
		_, b, _ := mapped(t, spans...)
		ops := map[int32]bool{}
		for _, s := range b.spans {
			if s.Operation == record.OpExecuteTool {
				ops[s.OpKey.Step] = true
			}
		}
		if len(ops) != c.ops {
			t.Errorf("%s: %d operations, want %d", c.name, len(ops), c.ops)
		}
	}
}

// One model call recorded by two instrumentations, a span in the other (OpenInference's LLM
// span and the Anthropic SDK's own GenAI client span under it), is one model turn: the
// outer one, or the inner one when only it carries the tokens; through an HTTP span of no
// role between them too. Model calls side by side stay two.
func TestMappingNestedModelTurns(t *testing.T) {
	agent := map[string]any{"openinference.span.kind": "AGENT"}
	llm := map[string]any{"openinference.span.kind": "LLM", "llm.token_count.prompt": 100, "llm.token_count.completion": 7}
	bare := map[string]any{"openinference.span.kind": "LLM"}
	client := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 7}
	http := map[string]any{"http.request.method": "POST"}
	_, b, _ := mapped(t,
		mkSpan(1, 1, 0, "agent", 0, 100, agent),
		mkSpan(1, 2, 1, "Anthropic Messages", 1, 2, llm),
		mkSpan(1, 3, 2, "anthropic.messages.create", 1, 2, client), // the same call: dropped
		mkSpan(1, 4, 1, "LangChain model", 3, 4, bare),
		mkSpan(1, 5, 4, "POST", 3, 4, http),
		mkSpan(1, 6, 5, "chat gpt", 3, 4, client), // the same call, its tokens only here: kept instead
		mkSpan(1, 7, 1, "Anthropic Messages", 5, 6, llm),
	)
	var turns []string
	tokens := int64(0)
	for _, s := range b.spans {
		if s.Operation == record.OpPlan {
			turns = append(turns, fmt.Sprint(s.SpanID))
			tokens += s.InputTokens + s.OutputTokens
		}
	}
	if len(turns) != 3 || tokens != 3*107 {
		t.Errorf("%d model turns with %d tokens, want 3 with %d (each call once)", len(turns), tokens, 3*107)
	}
	for _, s := range b.invs[0].members {
		if s.name == "LangChain model" && s.role != roleOther || s.name == "chat gpt" && s.role != roleModel {
			t.Errorf("%s read as %v: want the tokens' span the turn", s.name, s.role)
		}
	}
}

// The Strands Agents SDK writes a tool call's arguments only in a gen_ai.tool.message event
// of its execute_tool span (content), and its chat spans repeat the conversation's tool
// messages as events of that name: a failed call followed by the same tool with other
// arguments is a new operation, with the same arguments its retry; only the first event of
// that name is kept on a span.
func TestMappingArgumentsInEvents(t *testing.T) {
	agent := map[string]any{"gen_ai.operation.name": "invoke_agent"}
	tool := func(id byte, start float64, args string, failed bool) *tracepb.Span {
		s := mkSpan(1, id, 1, "execute_tool WebSearch", start, start+1, map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "WebSearch"})
		s.Events = []*tracepb.Span_Event{{Name: "gen_ai.tool.message", Attributes: []*commonpb.KeyValue{strAttr("role", "tool"), strAttr("content", args)}}}
		if failed {
			failWith(s, "503 Service Unavailable", "Error")
		}
		return s
	}
	chat := mkSpan(1, 9, 1, "chat", 40, 41, map[string]any{"gen_ai.operation.name": "chat"})
	for i := range 5 {
		chat.Events = append(chat.Events, &tracepb.Span_Event{Name: "gen_ai.tool.message", Attributes: []*commonpb.KeyValue{strAttr("content", fmt.Sprintf(`{"turn":%d}`, i))}})
	}
	r, b, _ := mapped(t,
		mkSpan(1, 1, 0, "invoke_agent a", 0, 100, agent),
		tool(2, 10, `{"query":"a"}`, true),
		tool(3, 20, `{"query":"a"}`, true),  // the same arguments: a retry
		tool(4, 30, `{"query":"b"}`, false), // other arguments: a new operation
		chat,
	)
	if got, want := opsOf(b), "WebSearch 1#1, WebSearch 1#2, WebSearch 2#1"; got != want {
		t.Errorf("operations %s, want %s", got, want)
	}
	if n := len(spanNamed(r, "chat").events); n != 1 {
		t.Errorf("the chat span keeps %d gen_ai.tool.message events, want the first", n)
	}
}

// Ax writes a model call's tokens only in its gen_ai.usage event: they are read from it
// (TokenEvent), from the first such event; attributes, where a span has them, come first.
func TestMappingTokensInEvents(t *testing.T) {
	usage := func(in, out int64) *tracepb.Span_Event {
		return &tracepb.Span_Event{Name: "gen_ai.usage", Attributes: []*commonpb.KeyValue{intAttr("gen_ai.usage.input_tokens", in), intAttr("gen_ai.usage.output_tokens", out)}}
	}
	chat := mkSpan(1, 2, 1, "AI Chat Request", 1, 2, map[string]any{"gen_ai.operation.name": "chat", "ax.session.id": "s"})
	chat.Events = []*tracepb.Span_Event{usage(200, 15), usage(9, 9)}
	own := mkSpan(1, 3, 1, "AI Chat Request", 3, 4, map[string]any{"gen_ai.operation.name": "chat", "ax.session.id": "s", "gen_ai.usage.input_tokens": 5})
	own.Events = []*tracepb.Span_Event{usage(900, 900)}
	_, b, _ := mapped(t, mkSpan(1, 1, 0, "AxGen > triage", 0, 10, map[string]any{"provided_functions": "Bash"}), chat, own)
	var got []string
	for _, s := range b.spans {
		if s.Operation == record.OpPlan {
			got = append(got, fmt.Sprintf("%d/%d", s.InputTokens, s.OutputTokens))
		}
	}
	if want := "200/15 5/0"; strings.Join(got, " ") != want {
		t.Errorf("model turns' tokens %v, want %s (the first event's; the span's own first)", got, want)
	}
}

// What a convention says a span is wins over its name: an agent named supervisor (as
// multi-agent graphs name theirs) is an agent, a tool named ask_human a tool, a graph's
// supervisor node a step; a span of no role named for a human review is a human step, a
// chain node of a graph included, and one of no kind named for a supervisor a supervisor
// step. A handoff tool is a step.
func TestMappingNamesDoNotOverrideKinds(t *testing.T) {
	oi := func(kind string) map[string]any { return map[string]any{"openinference.span.kind": kind} }
	r, _, _ := mapped(t,
		mkSpan(1, 1, 0, "incident-supervisor", 0, 100, oi("CHAIN")),
		mkSpan(1, 2, 1, "supervisor", 1, 2, oi("AGENT")),
		mkSpan(1, 3, 2, "ask_human", 2, 3, oi("TOOL")),
		mkSpan(1, 4, 1, "supervisor", 4, 5, oi("CHAIN")),
		mkSpan(1, 5, 1, "human_review", 6, 7, oi("CHAIN")),
		mkSpan(1, 6, 1, "supervisor check", 8, 9, nil),
		mkSpan(1, 7, 4, "transfer_to_researcher", 4, 5, map[string]any{"openinference.span.kind": "TOOL", "tool.name": "transfer_to_researcher"}),
		mkSpan(1, 8, 4, "transfer_back_to_supervisor", 4, 5, map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "transfer_back_to_supervisor"}),
	)
	// a handoff (LangGraph's, the OpenAI Agents SDK's) is control flow, not a tool call
	want := map[byte]spanRole{1: roleAgent, 2: roleAgent, 3: roleTool, 4: roleOther, 5: roleHuman, 6: roleSupervise, 7: roleOther, 8: roleOther}
	for _, s := range r.spans {
		id := s.otlpID[len(s.otlpID)-1] - '0'
		if w, ok := want[id]; ok && s.role != w {
			t.Errorf("span %d %q read as role %d, want %d", id, s.name, s.role, w)
		}
	}
}
