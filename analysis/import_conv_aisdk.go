package analysis

// The Vercel AI SDK's own telemetry spans (experimental_telemetry): ai.generateText,
// ai.streamText, ai.generateObject and ai.streamObject are agent runs (a multi-step
// generation; one started inside a tool call is a sub-agent), their .doGenerate and
// .doStream children model calls, ai.toolCall a tool attempt (ai.toolCall.name,
// ai.toolCall.id, ai.toolCall.args or .input), ai.usage.* the tokens. The SDK's GenAI
// form (invoke_agent, chat, execute_tool) is read by the GenAI convention; its names are
// also understood here in case a span mixes both. A span with ai.operationId was made by
// the SDK whatever else it carries (ProducerAttrs): OpenInference's processor for the AI
// SDK (@arizeai/openinference-vercel) adds its own attributes to these spans, but the
// SDK's own say more (call ids, tokens) and its failures are its exception events
// (FailsWithException).
func init() {
	register(&convention{
		Name:               ConvAISDK,
		Rank:               30,
		ProducerAttrs:      []string{"ai.operationId"},
		DetectNamePrefixes: []string{"ai."},
		DetectAttrs:        []string{"ai.operationId", "ai.toolCall.name"},
		OperationAttrs:     []string{"ai.operationId"},
		Names: map[string]spanRole{
			"ai.generateText": roleAgent, "ai.streamText": roleAgent, "ai.generateObject": roleAgent, "ai.streamObject": roleAgent,
			"ai.generateText.doGenerate": roleModel, "ai.streamText.doStream": roleModel,
			"ai.generateObject.doGenerate": roleModel, "ai.streamObject.doStream": roleModel,
			"ai.embed.doEmbed": roleModel, "ai.embedMany.doEmbed": roleModel,
			"ai.toolCall":  roleTool,
			"invoke_agent": roleAgent, "chat": roleModel, "execute_tool": roleTool,
		},
		Tool:         []string{"ai.toolCall.name", "gen_ai.tool.name"},
		CallID:       []string{"ai.toolCall.id", "gen_ai.tool.call.id"},
		Args:         []string{"ai.toolCall.args", "ai.toolCall.input", "gen_ai.tool.call.arguments"},
		Attempt:      attemptAttrs,
		Resend:       resendAttrs,
		InputTokens:  append([]string{"ai.usage.inputTokens", "ai.usage.promptTokens"}, genAIInputTokens...),
		OutputTokens: append([]string{"ai.usage.outputTokens", "ai.usage.completionTokens"}, genAIOutputTokens...),
		TotalTokens:  []string{"ai.usage.totalTokens"},
		Model:        append([]string{"ai.response.model", "ai.model.id"}, genAIModel...),
		Session: []string{"ai.telemetry.metadata.sessionId", "ai.telemetry.metadata.session_id", "ai.telemetry.metadata.conversationId",
			"ai.telemetry.metadata.threadId", "gen_ai.conversation.id", "session.id"},
		ErrorType:          []string{"error.type"},
		FailsWithException: true,
	})
}
