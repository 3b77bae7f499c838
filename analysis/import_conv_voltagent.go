package analysis

// ConvVoltAgent is VoltAgent's own OpenTelemetry tracing (@voltagent/core).
const ConvVoltAgent = "voltagent"

// VoltAgent (@voltagent/core, its own OpenTelemetry observability): every span of an agent
// run carries entity.type (agent), entity.id / entity.name and operation.id; a span inside
// the run says what it is in span.type (llm, tool, memory), the agent's own span has none.
// A sub-agent run by the supervisor's delegate_task tool is a span subagent:<name>
// (entity.type agent, subagent.name) under that tool's span. A tool span (tool.execution:
// <tool>) names its tool in tool.name, the model's call id in tool.call.id and the
// arguments as JSON in input; its error is VoltAgent's wrapper (error.type VoltAgentError),
// so its class comes from the message. A model span (llm:generateText, llm:streamText) lasts
// the whole multi-step call, not one model call: its llm.usage.* are the last call's tokens,
// and the agent span's usage.* are the run's.
func init() {
	register(&convention{
		Name:           ConvVoltAgent,
		Rank:           27,
		DetectAttrs:    []string{"voltagent.operation_id", "voltagent.is_subagent"},
		DetectAttrSets: [][]string{{"entity.type", "span.type", "operation.id"}, {"entity.type", "entity.id", "operation.id"}},
		KindAttrs:      []string{"span.type", "entity.type"},
		Kinds:          map[string]spanRole{"AGENT": roleAgent, "LLM": roleModel, "TOOL": roleTool},
		Tool:           []string{"tool.name"},
		CallID:         []string{"tool.call.id"},
		Args:           []string{"input"},
		Attempt:        attemptAttrs,
		Resend:         resendAttrs,
		InputTokens:    []string{"llm.usage.prompt_tokens", "usage.prompt_tokens"},
		OutputTokens:   []string{"llm.usage.completion_tokens", "usage.completion_tokens"},
		TotalTokens:    []string{"llm.usage.total_tokens", "usage.total_tokens"},
		Model:          []string{"llm.model", "ai.model.name"},
		Session:        []string{"conversation.id", "voltagent.conversation_id"},
		ErrorType:      []string{"error.type"},
		WrapperErrors:  []string{"VoltAgentError"},
	})
}
