// Drives LangGraph.js (a StateGraph agent: a model node and a ToolNode) instrumented with
// OpenInference through a scripted fleet and captures the OTLP bodies it sends. A
// sub-agent is a separate graph run in its own trace (as a worker would run it), linked to
// its investigation only by metadata (session_id, parent_run).
//
//   node langgraph.js
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { startCapture, finishCapture, versions } from './lib/run.js';
import { scriptedLangChain, dropRootChain } from './lib/langchain.js';

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
const { receiver, tel, rawDir, fleet } = await startCapture(CONFIG, SCALE, {
  resourceExtra: { 'openinference.project.name': 'incident-graph' },
  dropAtEnd: dropRootChain('incident-graph'),
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


const { ScriptedChatModel, makeTools } = scriptedLangChain(fleet, { BaseChatModel, AIMessage, tool, z }, (child) => runSubagent(child));

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
  return fleet.track(run, () =>
    graph.invoke(
      { messages: [new HumanMessage(`Investigate ${run.investigation}`)] },
      { runName: name, recursionLimit: 200, configurable: { thread_id: run.runId }, metadata },
    ),
  );
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
await finishCapture(CONFIG, { fleet, receiver, tel, rawDir }, versions(['@langchain/langgraph', '@langchain/core', '@arizeai/openinference-instrumentation-langchain', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http']));
