// Drives LangGraph.js's multi-agent supervisor (`createSupervisor` of
// @langchain/langgraph-supervisor over @langchain/langgraph's `createReactAgent` workers)
// instrumented with OpenInference (@arizeai/openinference-instrumentation-langchain), as Arize
// Phoenix users trace it, through a scripted fleet, and captures the OTLP bodies it sends.
//
// One investigation is one run of the supervisor graph. The supervisor agent hands work to a
// worker through its handoff tools (`transfer_to_<worker>`); the worker (a `createReactAgent`
// graph) calls the fleet's tools and hands back (`transfer_back_to_supervisor`, added by
// createSupervisor). Workers: `searcher` (WebSearch, docs/search) and `sre` (Bash,
// mcp.github.create_issue) run the investigation's own operations; `researcher` (WebSearch,
// docs/search, Bash) is the fleet's `Task` sub-agent: the supervisor's `transfer_to_researcher`
// call carries the Task's tool call id, and the researcher node's `invoke` is wrapped to
// record the fleet's Task attempt around the sub-agent run (Fleet.runSubagent). The scripted
// models (the BaseChatModel of lib/langchain.js) route the fleet's decisions: the supervisor
// hands off to the worker owning the next planned tool (or answers), a worker calls its tools
// (again after a failure: a new tool call id) and answers when the next decision belongs to
// another worker, which the supervisor then takes. A failed tool is what createReactAgent's
// ToolNode does by default (a ToolMessage with status "error"); a run that gives up throws
// AgentGaveUpError from the worker's model after its answer.
//
//   node langgraph-supervisor.js
import { startCapture, finishCapture, versions } from './lib/run.js';
import { scriptedLangChain, dropRootChain } from './lib/langchain.js';
import { refuseFetch } from './lib/openai.js';
import { sleepVirtual } from './lib/clock.js';
import { toolInput, AgentGaveUpError } from './lib/fleet.js';

const CONFIG = {
  fixture: 'langgraph-supervisor-openinference',
  t0: '2026-03-31T07:00:00.000Z',
  seed: 333,
  encoding: 'proto',
  file: 'traces.pb.gz',
  services: [{ name: 'incident-supervisor', prefix: 'sup', investigations: Number(process.env.CAPTURE_N ?? 120) }],
  outages: [{ tool: 'WebSearch', start_min: 25, end_min: 40 }],
};
const SERVICE = CONFIG.services[0].name;
const SCALE = Number(process.env.CAPTURE_SCALE ?? 20);
const { receiver, tel, rawDir, fleet } = await startCapture(CONFIG, SCALE, {
  resourceExtra: { 'openinference.project.name': SERVICE },
  dropAtEnd: dropRootChain(SERVICE),
});

const refused = refuseFetch();
for (const k of Object.keys(process.env)) if (k.startsWith('LANGSMITH_') || k.startsWith('LANGCHAIN_')) delete process.env[k];

const { LangChainInstrumentation } = await import('@arizeai/openinference-instrumentation-langchain');
const CallbackManagerModule = await import('@langchain/core/callbacks/manager');
const lc = new LangChainInstrumentation({ tracerProvider: tel.providers[SERVICE] });
lc.manuallyInstrument(CallbackManagerModule);

const { BaseChatModel } = await import('@langchain/core/language_models/chat_models');
const { AIMessage, HumanMessage } = await import('@langchain/core/messages');
const { tool } = await import('@langchain/core/tools');
const { createReactAgent } = await import('@langchain/langgraph/prebuilt');
const { createSupervisor } = await import('@langchain/langgraph-supervisor');
const { z } = await import('zod');

const { ScriptedChatModel, makeTools } = scriptedLangChain(fleet, { BaseChatModel, AIMessage, tool, z }, () => {
  throw new Error('Task is a handoff here, not a tool');
});
const currentRun = () => fleet.als.getStore().run;

// the worker that runs each of the fleet's tools (Task: the researcher sub-agent)
const WORKERS = {
  searcher: ['WebSearch', 'docs/search'],
  sre: ['Bash', 'mcp.github.create_issue'],
  researcher: ['WebSearch', 'docs/search', 'Bash'],
};
const ownerOf = (tool) => (tool === 'Task' ? 'researcher' : Object.entries(WORKERS).find(([w, ts]) => w !== 'researcher' && ts.includes(tool))[0]);

// RoutedModel: the scripted chat model of one agent of the graph (the supervisor or a worker).
// A decision drawn by a worker that another agent must carry out waits in run.decision.
class RoutedModel extends ScriptedChatModel {
  constructor(modelName, agent) {
    super(modelName);
    this.agent = agent;
  }

  async _generate() {
    const run = currentRun();
    await sleepVirtual(fleet.modelLatency(run));
    let action = run.decision ?? fleet.nextAction(run);
    run.decision = null;
    const t = fleet.tokens(run);
    if (action.type === 'abort') throw new AgentGaveUpError(action.reason);
    let text = '';
    let call = null;
    if (this.agent === 'supervisor') {
      if (action.type === 'final') text = action.text;
      else {
        const worker = ownerOf(action.tool);
        if (action.tool === 'Task') run.pending = action; // the handoff is the Task call
        else run.decision = action; // the worker carries it out
        const id = action.tool === 'Task' ? action.toolCallId : `call_${run.r.hex(24)}`;
        call = { id, name: `transfer_to_${worker}`, args: {}, type: 'tool_call' };
      }
    } else if (action.type === 'tool' && WORKERS[this.agent].includes(action.tool) && (this.agent === 'researcher') === Boolean(run.parent)) {
      run.pending = action;
      call = { id: action.toolCallId, name: action.tool, args: toolInput(action.tool, run), type: 'tool_call' };
    } else {
      // the next decision is another agent's (or the final answer): hand back to the supervisor
      if (!run.parent) run.decision = action;
      text = action.type === 'final' && run.parent ? action.text : `${this.agent}: done, findings reported.`;
    }
    const usage_metadata = { input_tokens: t.input, output_tokens: t.output, total_tokens: t.input + t.output };
    const response_metadata = { model_name: this.modelName, stop_reason: call ? 'tool_use' : 'end_turn' };
    const message = new AIMessage({ content: text, tool_calls: call ? [call] : [], usage_metadata, response_metadata });
    return {
      generations: [{ text, message }],
      llmOutput: { tokenUsage: { promptTokens: t.input, completionTokens: t.output, totalTokens: t.input + t.output } },
    };
  }
}

function makeWorker(name) {
  return createReactAgent({
    name,
    llm: new RoutedModel('claude-haiku-4-5', name),
    tools: makeTools(WORKERS[name]),
    prompt: `You are ${name}, a worker of the incident supervisor.`,
  });
}

const searcher = makeWorker('searcher');
const sre = makeWorker('sre');
const researcher = makeWorker('researcher');

// the researcher's run is the fleet's Task attempt: createSupervisor's node for it calls
// researcher.invoke after the supervisor's transfer_to_researcher call
const researcherInvoke = researcher.invoke.bind(researcher);
researcher.invoke = (state, config) => {
  const run = currentRun();
  if (run.pending?.tool !== 'Task') throw new Error(`researcher started outside a Task handoff (${run.runId})`);
  return fleet.attempt(run, run.pending, (child) => fleet.runSubagent(child, () => researcherInvoke(state, config)));
};

const supervisor = createSupervisor({
  agents: [searcher, sre, researcher],
  llm: new RoutedModel('claude-sonnet-4-5', 'supervisor'),
  prompt: 'You are the incident supervisor. Hand each step to the worker that has its tools: searcher (web and docs search), sre (shell and GitHub issues), researcher (related incidents).',
}).compile({ name: SERVICE });

await fleet.runAll((run) =>
  fleet.track(run, () =>
    supervisor.invoke(
      { messages: [new HumanMessage(`Investigate ${run.investigation}`)] },
      { recursionLimit: 200, metadata: { session_id: run.investigation, agent: SERVICE } },
    ),
  ),
);
console.error(`fetch requests refused: ${refused.length}`);
await finishCapture(CONFIG, { fleet, receiver, tel, rawDir }, versions(['@langchain/langgraph-supervisor', '@langchain/langgraph', '@langchain/core', '@arizeai/openinference-instrumentation-langchain', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-proto']));
