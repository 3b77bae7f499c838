package analysis

// Langfuse's tracing SDK (@langfuse/tracing in JS, langfuse in Python, on OpenTelemetry):
// what a span is says only langfuse.observation.type (agent, generation, tool, chain,
// retriever, embedding, span, event, ...); a tool is named by its span's name; a model call
// (generation) carries langfuse.observation.model.name and its tokens in the JSON object
// langfuse.observation.usage_details ({"input": n, "output": m, "total": t}). A failure is a
// level, langfuse.observation.level ERROR, with the message in
// langfuse.observation.status_message; the span's own status stays unset for a tool.
// The observation's input is the whole call (a tool's arguments and its call options, the
// call id among them), so it is not read as the arguments.
func init() {
	register(&convention{
		Name:        ConvLangfuse,
		Rank:        25,
		DetectAttrs: []string{"langfuse.observation.type"},
		KindAttrs:   []string{"langfuse.observation.type"},
		Kinds: map[string]spanRole{
			"AGENT": roleAgent, "GENERATION": roleModel, "EMBEDDING": roleModel,
			"TOOL": roleTool, "RETRIEVER": roleTool,
		},
		ChainKinds:   []string{"CHAIN"},
		Tool:         []string{"gen_ai.tool.name"},
		CallID:       []string{"gen_ai.tool.call.id"},
		Attempt:      attemptAttrs,
		Resend:       resendAttrs,
		InputTokens:  append([]string{"langfuse.observation.usage_details#input", "langfuse.observation.usage_details#prompt_tokens"}, genAIInputTokens...),
		OutputTokens: append([]string{"langfuse.observation.usage_details#output", "langfuse.observation.usage_details#completion_tokens"}, genAIOutputTokens...),
		TotalTokens:  []string{"langfuse.observation.usage_details#total"},
		Model:        append([]string{"langfuse.observation.model.name"}, genAIModel...),
		Session:      []string{"session.id", "langfuse.session.id", "langfuse.trace.metadata.session_id"},
		ErrorType:    []string{"error.type"},
		ErrorLevel:   []string{"langfuse.observation.level"},
		ErrorMessage: []string{"langfuse.observation.status_message"},
	})
}
