package analysis

// ConvAx is Ax's own OpenTelemetry tracing (@ax-llm/ax).
const ConvAx = "ax"

// Ax (@ax-llm/ax, its tracer option or axGlobals.tracer): a program's forward is a span
// "AxGen > <label>" (signature_name, provided_functions), the agent; each model call an "AI
// Chat Request" span with gen_ai.operation.name chat; each function call a "Tool: <name>"
// span naming its function in tool.name and the model's call id in function.id (no
// arguments, no result). A failed function call leaves the status unset and records an
// exception event of type Error without a message, and a function.error event: every
// failure is read, none of its class. A model call's tokens are only in its gen_ai.usage
// event (TokenEvent).
func init() {
	register(&convention{
		Name:               ConvAx,
		Rank:               29,
		DetectNamePrefixes: []string{"AxGen > ", "Tool: "},
		DetectAttrs:        []string{"ax.session.id", "provided_functions"},
		DetectAttrSets:     [][]string{{"tool.mode", "function.id"}},
		OperationAttrs:     []string{"gen_ai.operation.name"},
		Names:              map[string]spanRole{"AxGen": roleAgent, "Tool:": roleTool, "chat": roleModel},
		ModelAttrs:         genAIModelAttrs,
		Tool:               []string{"tool.name"},
		ToolNamePrefix:     "Tool: ",
		CallID:             []string{"function.id"},
		Attempt:            attemptAttrs,
		Resend:             resendAttrs,
		InputTokens:        genAIInputTokens,
		OutputTokens:       genAIOutputTokens,
		TotalTokens:        []string{"gen_ai.usage.total_tokens"},
		TokenEvent:         "gen_ai.usage",
		Model:              genAIModel,
		Session:            []string{"ax.session.id", "gen_ai.conversation.id"},
		ErrorType:          []string{"error.type"},
	})
}
