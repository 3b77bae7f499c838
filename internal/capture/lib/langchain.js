// The scripted LangChain parts the LangChain captures share (langgraph.js, langchain-agent.js):
// a chat model whose every answer is the fleet's scripted decision, and the fleet's tools as
// LangChain tools. LangChain's classes are passed in, since a capture imports them only after
// it has set up its instrumentation.
import { sleepVirtual } from './clock.js';
import { toolInput, toolSchemas, AgentGaveUpError } from './fleet.js';

export function scriptedLangChain(fleet, { BaseChatModel, AIMessage, tool, z }, runSubagent) {
  const currentRun = () => fleet.als.getStore().run;
  // ScriptedChatModel: a chat model whose every answer is the fleet's scripted decision.
  class ScriptedChatModel extends BaseChatModel {
    constructor(modelName) {
      super({});
      this.modelName = modelName;
    }
    _llmType() {
      return 'anthropic';
    }
    bindTools() {
      return this;
    }
    invocationParams() {
      return { model: this.modelName, temperature: 0 };
    }
    async _generate() {
      const run = currentRun();
      await sleepVirtual(fleet.modelLatency(run));
      const action = fleet.nextAction(run);
      const t = fleet.tokens(run);
      if (action.type === 'abort') throw new AgentGaveUpError(action.reason);
      const usage_metadata = { input_tokens: t.input, output_tokens: t.output, total_tokens: t.input + t.output };
      const response_metadata = { model_name: this.modelName, stop_reason: action.type === 'final' ? 'end_turn' : 'tool_use' };
      let message;
      if (action.type === 'final') {
        message = new AIMessage({ content: action.text, usage_metadata, response_metadata });
      } else {
        run.pending = action;
        message = new AIMessage({
          content: '',
          tool_calls: [{ id: action.toolCallId, name: action.tool, args: toolInput(action.tool, run), type: 'tool_call' }],
          usage_metadata,
          response_metadata,
        });
      }
      return {
        generations: [{ text: typeof message.content === 'string' ? message.content : '', message }],
        llmOutput: { tokenUsage: { promptTokens: t.input, completionTokens: t.output, totalTokens: t.input + t.output } },
      };
    }
  }

  const SCHEMAS = toolSchemas(z);

  function makeTools(names) {
    return names.map((name) =>
      tool(
        async (_input, config) => {
          const out = await fleet.attemptPending(currentRun(), config?.toolCall?.id, runSubagent);
          return JSON.stringify(out);
        },
        { name, description: `${name} tool`, schema: SCHEMAS[name] },
      ),
    );
  }

  return { ScriptedChatModel, makeTools };
}

// dropRootChain is a capture's dropAtEnd for LangChain's OpenInference spans: the top span of
// an investigation marked to lose it is its root CHAIN span, known at its end by its session
// id (the investigation) and the agent named in its metadata.
export function dropRootChain(agent) {
  return (span, fleet) => {
    if (span.parentSpanContext) return false;
    const inv = span.attributes['session.id'];
    const meta = String(span.attributes.metadata ?? '');
    if (!inv || !meta.includes(`"agent":"${agent}"`)) return false;
    const run = fleet.runs.find((r) => r.runId === inv);
    return Boolean(run?.dropTop);
  };
}
