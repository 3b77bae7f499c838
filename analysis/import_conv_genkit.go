package analysis

// ConvGenkit is Genkit's own OpenTelemetry tracing (genkit, @genkit-ai/core).
const ConvGenkit = "genkit"

// Genkit (JS, its own tracing through the OpenTelemetry SDK it starts): every span carries
// genkit:* attributes; what a span is says genkit:metadata:subtype (flow, model, tool,
// retriever, embedder, ...), else genkit:type (action, util: the generate loop). An agent
// is a flow where one stands: the trace's root (genkit:isRoot), or a flow a tool ran (a
// sub-agent); a flow under anything else is a step. The tool loop nests: each turn is a
// generate span holding its model span, the tool spans it asked for and the next turn's
// generate. A model or tool span is named by genkit:name (the namespaced name:
// openai/gpt-4.1, docs/search); a tool's arguments are its genkit:input, a model call's
// tokens are in its genkit:output JSON (usage.inputTokens, usage.outputTokens). No tool
// call id is on a tool span. Success leaves the status unset (genkit:state success); a
// failure is status ERROR with an exception event, on the failing span and on every
// ancestor it fails.
func init() {
	register(&convention{
		Name:               ConvGenkit,
		Rank:               28,
		DetectAttrPrefixes: []string{"genkit:"},
		KindAttrs:          []string{"genkit:metadata:subtype", "genkit:type"},
		Kinds: map[string]spanRole{
			"MODEL": roleModel, "BACKGROUND-MODEL": roleModel, "EMBEDDER": roleModel,
			"TOOL": roleTool, "RETRIEVER": roleTool,
		},
		ChainKinds:   []string{"FLOW"},
		Tool:         []string{"genkit:name"},
		Args:         []string{"genkit:input"},
		Attempt:      attemptAttrs,
		Resend:       resendAttrs,
		InputTokens:  []string{"genkit:output#usage.inputTokens"},
		OutputTokens: []string{"genkit:output#usage.outputTokens"},
		TotalTokens:  []string{"genkit:output#usage.totalTokens"},
		Model:        []string{"genkit:name"},
		Session:      []string{"genkit:sessionId", "session.id"},
		ErrorType:    []string{"error.type"},
	})
}
