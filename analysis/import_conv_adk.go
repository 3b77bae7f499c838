package analysis

// Google's Agent Development Kit (ADK) tracing: the GenAI names (invoke_agent <agent>,
// execute_tool <tool>) plus a call_llm span per model call that carries gen_ai.request.model
// and gen_ai.usage.* but no gen_ai.operation.name, an invocation span above the agent, and
// the whole model request and response as Gemini-format JSON in
// gcp.vertex.agent.llm_request / llm_response. A tool call that throws ends its
// execute_tool span with no status and no attribute; the error reaches the model as the
// call's functionResponse {"error": ...} in the next request (toolResultsReported in
// import_build.go reads it back).
func init() {
	register(&convention{
		Name:               ConvADK,
		Rank:               30,
		DetectAttrPrefixes: []string{"gcp.vertex.agent."},
		OperationAttrs:     []string{"gen_ai.operation.name"},
		Names: map[string]spanRole{
			"invoke_agent": roleAgent, "call_llm": roleModel, "execute_tool": roleTool,
		},
		ModelAttrs:     genAIModelAttrs,
		Tool:           []string{"gen_ai.tool.name"},
		ToolNamePrefix: "execute_tool ",
		CallID:         []string{"gen_ai.tool.call.id"},
		Args:           []string{"gcp.vertex.agent.tool_call_args"},
		Attempt:        attemptAttrs,
		Resend:         resendAttrs,
		InputTokens:    genAIInputTokens,
		OutputTokens:   genAIOutputTokens,
		Model:          genAIModel,
		Session:        []string{"gen_ai.conversation.id", "gcp.vertex.agent.session_id"},
		ErrorType:      []string{"error.type"},
		Request:        []string{"gcp.vertex.agent.llm_request"},
		Response:       []string{"gcp.vertex.agent.llm_response"},
	})
}
