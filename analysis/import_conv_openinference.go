package analysis

// OpenInference (Arize Phoenix's instrumentations, e.g. LangChain and LangGraph):
// openinference.span.kind AGENT, CHAIN, LLM, TOOL, RETRIEVER, ...; tool.name,
// llm.token_count.*, llm.model_name, session.id; the tool's input as input.value.
func init() {
	register(&convention{
		Name:        ConvOpenInference,
		Rank:        10,
		DetectAttrs: []string{"openinference.span.kind"},
		KindAttrs:   []string{"openinference.span.kind"},
		Kinds: map[string]spanRole{
			"AGENT": roleAgent, "LLM": roleModel, "EMBEDDING": roleModel,
			"TOOL": roleTool, "RETRIEVER": roleTool, "RERANKER": roleTool,
		},
		// LangChain's prebuilt agents (createAgent) are graphs: the run is a root CHAIN named
		// after the agent, and a sub-agent a CHAIN under the tool call that ran it.
		ChainKinds:   []string{"CHAIN"},
		Tool:         []string{"tool.name"},
		CallID:       []string{"tool_call.id", "tool.call.id", "gen_ai.tool.call.id"},
		Args:         []string{"tool.parameters.input", "input.value"},
		Attempt:      attemptAttrs,
		Resend:       resendAttrs,
		InputTokens:  []string{"llm.token_count.prompt"},
		OutputTokens: []string{"llm.token_count.completion"},
		TotalTokens:  []string{"llm.token_count.total"},
		Model:        []string{"llm.model_name"},
		Session:      []string{"session.id", "metadata.session_id", "metadata.thread_id", "metadata.conversation_id"},
		ErrorType:    []string{"error.type", "exception.type"},
	})
}
