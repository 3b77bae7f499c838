// Drives LangChain.js v1's prebuilt agent (`createAgent` from the `langchain` package, a
// LangGraph graph underneath: a model node and its ToolNode) instrumented with OpenInference
// (@arizeai/openinference-instrumentation-langchain) through a scripted fleet and captures the
// OTLP bodies it sends. Tools are LangChain `tool()`s; the model is the scripted
// `BaseChatModel` subclass of langgraph.js. A failed tool is what createAgent does by
// default: its ToolNode catches the error and sends the model a ToolMessage with status
// "error"; the model calls the tool again (a new tool call id). A sub-agent is the `Task`
// tool invoking a nested `researcher` agent (the same trace, under the Task tool span). A run
// that gives up throws AgentGaveUpError from the model after its answer.
//
//   node langchain-agent.js
import { startCapture, finishCapture, versions } from './lib/run.js';
import { scriptedLangChain, dropRootChain } from './lib/langchain.js';
import { refuseFetch } from './lib/openai.js';

const CONFIG = {
  fixture: 'langchain-agent-openinference',
  t0: '2026-03-26T09:00:00.000Z',
  seed: 26,
  encoding: 'json',
  file: 'traces.jsonl.gz',
  services: [{ name: 'incident-agent', prefix: 'ia', investigations: Number(process.env.CAPTURE_N ?? 130) }],
  outages: [{ tool: 'Bash', start_min: 20, end_min: 40 }],
};
const SCALE = Number(process.env.CAPTURE_SCALE ?? 20);
const { receiver, tel, rawDir, fleet } = await startCapture(CONFIG, SCALE, {
  resourceExtra: { 'openinference.project.name': 'incident-agent' },
  dropAtEnd: dropRootChain('incident-agent'),
});

const refused = refuseFetch();
for (const k of Object.keys(process.env)) if (k.startsWith('LANGSMITH_') || k.startsWith('LANGCHAIN_')) delete process.env[k];

const { LangChainInstrumentation } = await import('@arizeai/openinference-instrumentation-langchain');
const CallbackManagerModule = await import('@langchain/core/callbacks/manager');
const lc = new LangChainInstrumentation({ tracerProvider: tel.providers['incident-agent'] });
lc.manuallyInstrument(CallbackManagerModule);

const { BaseChatModel } = await import('@langchain/core/language_models/chat_models');
const { AIMessage, HumanMessage } = await import('@langchain/core/messages');
const { tool, createAgent } = await import('langchain');
const { z } = await import('zod');


const { ScriptedChatModel, makeTools } = scriptedLangChain(fleet, { BaseChatModel, AIMessage, tool, z }, (child) => runSubagent(child));

function makeAgent(name, modelName, toolNames) {
  return createAgent({
    name,
    model: new ScriptedChatModel(modelName),
    tools: makeTools(toolNames),
    systemPrompt: `You are ${name}, an incident investigation agent.`,
  });
}

const mainAgent = makeAgent('incident-agent', 'claude-sonnet-4-5', ['WebSearch', 'Bash', 'docs/search', 'mcp.github.create_issue', 'Task']);
const researcher = makeAgent('researcher', 'claude-haiku-4-5', ['WebSearch', 'Bash', 'docs/search']);

async function invoke(agent, run, metadata) {
  return fleet.track(run, () =>
    agent.invoke(
      { messages: [new HumanMessage(`Investigate ${run.investigation}`)] },
      { recursionLimit: 200, metadata },
    ),
  );
}

// runSubagent: the Task tool invokes the researcher agent inside the tool call (the same
// trace and LangChain run tree: the nested agent's spans are children of the Task tool span)
async function runSubagent(child) {
  return fleet.als.run({ run: child }, async () => {
    const res = await invoke(researcher, child, { session_id: child.investigation, parent_run: child.parent, agent: 'researcher' });
    return res.messages[res.messages.length - 1].content;
  });
}

await fleet.runAll((run) => invoke(mainAgent, run, { session_id: run.investigation, agent: 'incident-agent' }));
console.error(`fetch requests refused: ${refused.length}`);
await finishCapture(CONFIG, { fleet, receiver, tel, rawDir }, versions(['langchain', '@langchain/langgraph', '@langchain/core', '@arizeai/openinference-instrumentation-langchain', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http']));
