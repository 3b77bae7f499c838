package analysis

// OpenLLMetry (Traceloop): traceloop.span.kind workflow, task, agent, tool, with the
// entity named by traceloop.entity.name and its input in traceloop.entity.input; model
// calls carry llm.request.type and gen_ai.* (or the older llm.usage.*) attributes.
func init() {
	register(&convention{
		Name:               ConvOpenLLMetry,
		Rank:               20,
		DetectAttrPrefixes: []string{"traceloop."},
		DetectAttrs:        []string{"llm.request.type"},
		KindAttrs:          []string{"traceloop.span.kind"},
		Kinds:              map[string]spanRole{"AGENT": roleAgent, "TOOL": roleTool},
		OperationAttrs:     []string{"gen_ai.operation.name"},
		Names:              map[string]spanRole{"invoke_agent": roleAgent, "chat": roleModel, "text_completion": roleModel, "execute_tool": roleTool},
		ModelAttrs:         append([]string{"llm.request.type", "llm.request.model", "llm.response.model"}, genAIModelAttrs...),
		Tool:               []string{"traceloop.entity.name", "gen_ai.tool.name"},
		CallID:             []string{"gen_ai.tool.call.id", "tool_call.id"},
		Args:               []string{"traceloop.entity.input"},
		Attempt:            attemptAttrs,
		Resend:             resendAttrs,
		InputTokens:        append(append([]string{}, genAIInputTokens...), "llm.usage.prompt_tokens"),
		OutputTokens:       append(append([]string{}, genAIOutputTokens...), "llm.usage.completion_tokens"),
		TotalTokens:        []string{"llm.usage.total_tokens"},
		Model:              append(append([]string{}, genAIModel...), "llm.response.model", "llm.request.model"),
		Session:            []string{"traceloop.association.properties.session_id", "traceloop.association.properties.thread_id", "traceloop.association.properties.conversation_id", "gen_ai.conversation.id"},
		ErrorType:          []string{"error.type"},
	})
}
