package analysis

// The OpenTelemetry GenAI semantic conventions: gen_ai.operation.name (invoke_agent, chat,
// execute_tool, ...), the span named "<operation> <target>", gen_ai.tool.*,
// gen_ai.usage.*. The fallback: a span no other convention detects is read as GenAI. A
// span without an operation name that carries a tool call's id is a tool call, and the
// names Pydantic AI writes by default before its instrumentation version 3 ("agent run",
// "running tool", with the arguments in tool_arguments) are read as what they are.
func init() {
	register(&convention{
		Name:           ConvGenAI,
		Rank:           1000,
		DetectAttrs:    []string{"gen_ai.operation.name"},
		OperationAttrs: []string{"gen_ai.operation.name"},
		Names: map[string]spanRole{
			"invoke_agent": roleAgent,
			"chat":         roleModel, "text_completion": roleModel, "generate_content": roleModel, "embeddings": roleModel,
			"execute_tool": roleTool,
			"agent run":    roleAgent, "running tool": roleTool,
		},
		ModelAttrs:     append([]string{"llm.request.type"}, genAIModelAttrs...),
		ToolAttrs:      []string{"gen_ai.tool.call.id"},
		Tool:           []string{"gen_ai.tool.name", "tool.name"},
		ToolNamePrefix: "execute_tool ",
		CallID:         []string{"gen_ai.tool.call.id", "tool_call.id", "tool.call.id"},
		Args:           []string{"gen_ai.tool.call.arguments", "gen_ai.tool.arguments", "tool_arguments"},
		ArgsEvents:     []string{"gen_ai.tool.message#content"},
		Attempt:        attemptAttrs,
		Resend:         resendAttrs,
		InputTokens:    genAIInputTokens,
		OutputTokens:   genAIOutputTokens,
		Model:          genAIModel,
		Session:        []string{"gen_ai.conversation.id", "session.id"},
		ErrorType:      []string{"error.type"},
		WrapperErrors:  []string{"ModelError"}, // the Strands Agents SDK wraps every error its model throws
		Request:        []string{"gen_ai.input.messages"},
		Response:       []string{"gen_ai.output.messages"},
	})
}
