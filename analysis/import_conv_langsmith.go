package analysis

// LangSmith's OpenTelemetry mode (the JS and Python SDKs with LANGSMITH_OTEL_ENABLED):
// each LangSmith run is a span named after the run, its run type in langsmith.span.kind
// (chain, llm, tool, retriever, embedding, prompt, parser) and mirrored in
// gen_ai.operation.name (chat, execute_tool, embeddings, or the run type itself), the run's
// name in langsmith.trace.name and, on tool runs, gen_ai.tool.name and gen_ai.tool.call.id;
// tokens in gen_ai.usage.*, the run's metadata as langsmith.metadata.<key>, its inputs and
// outputs as JSON in gen_ai.prompt and gen_ai.completion. Every span carries gen_ai.system
// (the default "langchain" on chains and tools), so it is not a sign of a model call here.
//
// LangSmith has no agent run type: an agent is a chain. A chain that is a trace's root, or
// the run of a tool call (a sub-agent started by a tool), is an agent (ChainKinds); a chain
// under a chain (a graph's node, a step) is not.
//
// The JS SDK sets a span's status to OK when the run is created, and OpenTelemetry makes OK
// final, so a run that fails keeps status OK: its failure is the exception event LangSmith
// records only for a run that failed (exception.message "<ErrorName>: <message>",
// exception.type always "Error"). ExceptionFails reads that event as the failure.
func init() {
	register(&convention{
		Name:               ConvLangSmith,
		Rank:               35, // after aisdk: LangSmith's exporter adds langsmith.* to AI SDK spans
		DetectAttrPrefixes: []string{"langsmith."},
		KindAttrs:          []string{"langsmith.span.kind"},
		Kinds: map[string]spanRole{
			"LLM": roleModel, "EMBEDDING": roleModel,
			"TOOL": roleTool, "RETRIEVER": roleTool,
		},
		ChainKinds:     []string{"CHAIN"},
		ExceptionFails: true,
		Tool:           []string{"gen_ai.tool.name", "langsmith.trace.name"},
		CallID:         []string{"gen_ai.tool.call.id", "langsmith.metadata.tool_call_id"},
		Args:           []string{"gen_ai.prompt"},
		Attempt:        attemptAttrs,
		Resend:         resendAttrs,
		InputTokens:    genAIInputTokens,
		OutputTokens:   genAIOutputTokens,
		Model:          genAIModel,
		Session:        []string{"langsmith.metadata.session_id", "langsmith.metadata.thread_id", "langsmith.metadata.conversation_id", "gen_ai.conversation.id"},
		ErrorType:      []string{"error.type"},
	})
}
