// The scripted AI SDK language model the AI SDK based captures share (aisdk.js, mastra.js,
// voltagent.js): a mock model of the AI SDK's test helpers (`MockLanguageModelV3` of `ai` 6,
// `MockLanguageModelV4` of `ai` 7) whose every call is one step of a fleet run, answered with
// the fleet's decision: a tool call or the final text, its finish reason, usage and response
// metadata; `doStream` answers the same as `simulateReadableStream` chunks.
import { sleepVirtual } from './clock.js';
import { toolInput, AgentGaveUpError } from './fleet.js';

// aiUsage is the fleet's tokens as the AI SDK's V3 usage.
export function aiUsage(t) {
  return {
    inputTokens: { total: t.input, noCache: t.input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: t.output, text: t.output, reasoning: 0 },
  };
}

// scriptedAiModel makes the model. What differs between the captures is an option:
//   Mock                    the mock model class (MockLanguageModelV3 or V4)
//   simulateReadableStream  when given, the model also answers doStream (else it has none)
//   provider, modelId       the model's provider and id
//   responseModelId         the model id of the responses (default modelId)
//   runOf()                 the fleet run the call belongs to (default: the fleet's async context)
//   toolName(tool)          the name the library gave the model for a fleet tool (default itself)
//   toolArgs(tool, run)     a call's arguments (default toolInput)
//   raw                     the provider's raw finish reasons, { stop, tools }
//   idPrefix                the responses' id prefix (then 24 hex digits of the run's stream)
//   timestamp               whether doGenerate's response metadata has a timestamp
//   giveUp(reason)          the error a run that gives up throws (default AgentGaveUpError)
export function scriptedAiModel(fleet, {
  Mock,
  simulateReadableStream = null,
  provider,
  modelId,
  responseModelId = modelId,
  runOf = () => fleet.als.getStore().run,
  toolName = (tool) => tool,
  toolArgs = toolInput,
  raw = { stop: 'stop', tools: 'tool_calls' },
  idPrefix = 'msg_',
  timestamp = false,
  giveUp = (reason) => new AgentGaveUpError(reason),
}) {
  // step: the model's latency, then the fleet's decision at the run's next step
  const step = async () => {
    const run = runOf();
    await sleepVirtual(fleet.modelLatency(run));
    const action = fleet.nextAction(run);
    const usage = aiUsage(fleet.tokens(run));
    if (action.type === 'abort') throw giveUp(action.reason);
    const id = `${idPrefix}${run.r.hex(24)}`;
    if (action.type === 'tool') run.pending = action;
    return { run, action, usage, id };
  };
  const finishReason = (action) => (action.type === 'tool' ? { unified: 'tool-calls', raw: raw.tools } : { unified: 'stop', raw: raw.stop });
  const toolCall = (action, run) => ({ type: 'tool-call', toolCallId: action.toolCallId, toolName: toolName(action.tool), input: JSON.stringify(toolArgs(action.tool, run)) });
  const options = {
    provider,
    modelId,
    doGenerate: async () => {
      const { run, action, usage, id } = await step();
      const content = action.type === 'tool' ? [toolCall(action, run)] : [{ type: 'text', text: action.text }];
      const response = timestamp ? { id, modelId: responseModelId, timestamp: new Date() } : { id, modelId: responseModelId };
      return { content, finishReason: finishReason(action), usage, warnings: [], response };
    },
  };
  if (simulateReadableStream) {
    options.doStream = async () => {
      const { run, action, usage, id } = await step();
      const chunks = [{ type: 'stream-start', warnings: [] }, { type: 'response-metadata', id, modelId: responseModelId, timestamp: new Date() }];
      if (action.type === 'tool') {
        chunks.push(toolCall(action, run));
      } else {
        chunks.push({ type: 'text-start', id: 't0' }, { type: 'text-delta', id: 't0', delta: action.text }, { type: 'text-end', id: 't0' });
      }
      chunks.push({ type: 'finish', finishReason: finishReason(action), usage });
      return { stream: simulateReadableStream({ chunks, initialDelayInMs: null, chunkDelayInMs: null }) };
    };
  }
  return new Mock(options);
}
