// Drives LangGraph.js (a StateGraph agent: a model node and a ToolNode) instrumented with
// OpenInference through a scripted fleet and captures the OTLP bodies it sends. A
// sub-agent is a separate graph run in its own trace (as a worker would run it), linked to
// its investigation only by metadata (session_id, parent_run).
//
//   node langgraph.js
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { Fleet, toolInput } from './lib/fleet.js';
import { sleepVirtual } from './lib/clock.js';
import { setup, finish, versions } from './lib/run.js';

const CONFIG = {
  fixture: 'langgraph-openinference',
  t0: '2026-03-19T07:30:00.000Z',
  seed: 19,
  encoding: 'json',
  file: 'traces.jsonl.gz',
  services: [{ name: 'incident-graph', prefix: 'inc', investigations: 150 }],
  outages: [{ tool: 'mcp.github.create_issue', start_min: 30, end_min: 50 }],
};
const SCALE = Number(process.env.CAPTURE_SCALE ?? 20);
const fleetRef = {};
const { receiver, tel, rawDir } = await setup({
  fixture: CONFIG.fixture,
  t0: CONFIG.t0,
  scale: SCALE,
  encoding: CONFIG.encoding,
  services: CONFIG.services.map((s) => s.name),
  fleetRef,
  resourceExtra: { 'openinference.project.name': 'incident-graph' },
  // the top span of an investigation marked to lose it: the graph's root CHAIN span, known
  // at its end by its session id (the investigation) and the agent in its metadata
  dropAtEnd: (span, fleet) => {
    if (span.parentSpanContext) return false;
    const inv = span.attributes['session.id'];
    const meta = String(span.attributes.metadata ?? '');
    if (!inv || !meta.includes('"agent":"incident-graph"')) return false;
    const run = fleet.runs.find((r) => r.runId === inv);
    return Boolean(run?.dropTop);
  },
});

const { LangChainInstrumentation } = await import('@arizeai/openinference-instrumentation-langchain');
const CallbackManagerModule = await import('@langchain/core/callbacks/manager');
const lc = new LangChainInstrumentation({ tracerProvider: tel.providers['incident-graph'] });
lc.manuallyInstrument(CallbackManagerModule);

const { BaseChatModel } = await import('@langchain/core/language_models/chat_models');
const { AIMessage, HumanMessage } = await import('@langchain/core/messages');
const { tool } = await import('@langchain/core/tools');
const { AsyncLocalStorageProviderSingleton } = await import('@langchain/core/singletons');
const { StateGraph, MessagesAnnotation, START, END } = await import('@langchain/langgraph');
const { ToolNode, toolsCondition } = await import('@langchain/langgraph/prebuilt');
const { z } = await import('zod');

const fleet = new Fleet({ fixture: CONFIG.fixture, seed: CONFIG.seed, services: CONFIG.services, outages: CONFIG.outages });
fleetRef.fleet = fleet;

class AgentGaveUpError extends Error {
  constructor(msg) {
    super(msg);
    this.name = 'AgentGaveUpError';
  }
}

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


const SCHEMAS = {
  WebSearch: z.object({ query: z.string() }),
  Bash: z.object({ command: z.string() }),
  'docs/search': z.object({ query: z.string() }),
  'mcp.github.create_issue': z.object({ repo: z.string(), title: z.string() }),
  Task: z.object({ description: z.string(), subagent_type: z.string() }),
};

function makeTools(names) {
  return names.map((name) =>
    tool(
      async (_input, config) => {
        const run = currentRun();
        const action = run.pending;
        const id = config?.toolCall?.id;
        if (id && id !== action.toolCallId) throw new Error(`scripted call ${action.toolCallId} != ${id}`);
        const out = await fleet.attempt(run, action, runSubagent);
        return JSON.stringify(out);
      },
      { name, description: `${name} tool`, schema: SCHEMAS[name] },
    ),
  );
}

function makeGraph(modelName, toolNames) {
  const model = new ScriptedChatModel(modelName);
  const tools = makeTools(toolNames);
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
    .addNode('tools', new ToolNode(tools))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition, ['tools', END])
    .addEdge('tools', 'agent')
    .compile();
}

const mainGraph = makeGraph('claude-sonnet-4-5', ['WebSearch', 'Bash', 'docs/search', 'mcp.github.create_issue', 'Task']);
const researcher = makeGraph('claude-haiku-4-5', ['WebSearch', 'Bash', 'docs/search']);

async function invoke(graph, run, name, metadata) {
  try {
    const res = await graph.invoke(
      { messages: [new HumanMessage(`Investigate ${run.investigation}`)] },
      { runName: name, recursionLimit: 200, configurable: { thread_id: run.runId }, metadata },
    );
    fleet.endRun(run, 'completed');
    return res;
  } catch (e) {
    fleet.endRun(run, 'failed');
    throw e;
  }
}

// runSubagent runs the researcher graph as its own trace: outside the caller's OpenTelemetry
// context and outside LangChain's run tree, as a separate worker would.
async function runSubagent(child) {
  return context.with(ROOT_CONTEXT, () =>
    AsyncLocalStorageProviderSingleton.getInstance().run(undefined, () =>
      fleet.als.run({ run: child }, async () => {
        const res = await invoke(researcher, child, 'researcher', { session_id: child.investigation, parent_run: child.parent, agent: 'researcher' });
        return res.messages[res.messages.length - 1].content;
      }),
    ),
  );
}

await fleet.runAll((run) => invoke(mainGraph, run, 'incident-graph', { session_id: run.investigation, agent: 'incident-graph' }));
await finish({
  fixture: CONFIG.fixture,
  fleet,
  receiver,
  tel,
  rawDir,
  file: CONFIG.file,
  gzip: true,
  library: versions(['@langchain/langgraph', '@langchain/core', '@arizeai/openinference-instrumentation-langchain', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http']),
});
