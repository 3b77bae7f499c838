// Drives the BeeAI framework (beeai-framework) instrumented with OpenInference
// (@arizeai/openinference-instrumentation-beeai) through a scripted fleet. The agents are
// BeeAI `ToolCallingAgent`s (native tool calls; each run its own agent and memory), their
// tools `DynamicTool`s, the model BeeAI's `OpenAIChatModel` (its Vercel adapter over
// `@ai-sdk/openai` 3, chat completions) pointed at the local fake OpenAI-compatible server
// (lib/openai.js), which answers each step as a tool call, the final answer (and a give-up)
// as a call of the agent's own `final_answer` tool. A sub-agent is a `researcher`
// ToolCallingAgent run inside the `Task` tool's handler (a nested BeeAI run, same trace). A
// failed tool is what BeeAI does by default: the tool's run wraps the error in a ToolError
// and the agent sends the model its explanation as the call's error result. A run that
// gives up throws AgentGaveUpError from its model (a subclass of BeeAI's OpenAI model) after
// the model's answer.
//
// The instrumentation 1.5.30 supports beeai-framework ">=0.1.9 <0.1.14" only: its
// `manuallyInstrument(beeai)` (its README's way for ESM) warns "DependencyConflict" for 0.1.30
// and patches nothing (no span at all). The script calls it as the README says, then, since
// nothing was patched, calls the instrumentation's own `patch(beeai)`, which wraps
// `BaseAgent.run`, `Tool.run` and `ChatModel.create` with its telemetry middleware; the spans
// are the instrumentation's own, unchanged. It builds a run's whole span tree when the run
// finishes, from BeeAI's emitter events, with the events' times.
//
// Nothing leaves the machine: `fetch` refuses every host but the fake model server (the
// count of refused requests is printed); the OTLP exporter uses node:http.
//
//   node beeai.js
import { register } from 'node:module';
import { diag } from '@opentelemetry/api';
import { startCapture, finishCapture, versions } from './lib/run.js';
import { startFakeOpenAI, guardFetch } from './lib/openai.js';
import { AgentGaveUpError } from './lib/fleet.js';

const CONFIG = {
  fixture: '../libraries-unmapped/beeai-openinference', // not yet mapped: its README
  t0: '2026-03-25T12:00:00.000Z',
  seed: 25,
  encoding: 'proto',
  file: 'traces.pb.gz',
  services: [{ name: 'triage-bee', prefix: 'bee', investigations: Number(process.env.CAPTURE_N ?? 110) }],
  outages: [{ tool: 'mcp.github.create_issue', start_min: 20, end_min: 40 }],
};
const SCALE = Number(process.env.CAPTURE_SCALE ?? 30);

delete process.env.OPENAI_API_KEY;
delete process.env.OPENAI_API_ENDPOINT;
delete process.env.OPENAI_API_HEADERS;

const { receiver, tel, rawDir, fleet } = await startCapture(CONFIG, SCALE, {
  resourceExtra: { 'openinference.project.name': 'incident-response' },
});

const runsById = new Map();
// BeeAI allows tool names of letters, digits, `-` and `_` only, so the fleet's tools are
// named so (`docs/search` is `docs_search`) and the scripted model calls them by those names
const toolName = (name) => name.replace(/[^a-zA-Z0-9_-]/g, '_');
const fake = await startFakeOpenAI(fleet, runsById, { toolName, finalTool: 'final_answer' });
const fakeOrigin = fake.origin;

// no network but the fake model server; a request to it carries the run it belongs to
// (x-run-id), from the fleet's async context
const refused = guardFetch(fleet, fakeOrigin);

// BeeAI imports `zod` undeclared and needs zod 3: lib/zod3-hooks.js resolves its `zod` to
// zod 4's `zod/v3` (the tools' schemas below are made with the same)
register('./lib/zod3-hooks.js', import.meta.url);
const beeai = await import('beeai-framework');
const { BeeAIInstrumentation } = await import('@arizeai/openinference-instrumentation-beeai');
const { ToolCallingAgent } = await import('beeai-framework/agents/toolCalling/agent');
const { UnconstrainedMemory } = await import('beeai-framework/memory/unconstrainedMemory');
const { DynamicTool, StringToolOutput } = await import('beeai-framework/tools/base');
const { OpenAIChatModel } = await import('beeai-framework/adapters/openai/backend/chat');
const { z } = await import('zod/v3');

// OpenInference as its README says for ESM; 1.5.30 refuses beeai-framework 0.1.30 (see above)
const instrumentation = new BeeAIInstrumentation({ tracerProvider: tel.providers[CONFIG.services[0].name] });
const before = beeai.BaseAgent.prototype.run;
const warnings = [];
const warn = diag.warn.bind(diag);
diag.warn = (msg, ...rest) => {
  warnings.push(String(msg));
  warn(msg, ...rest);
};
instrumentation.manuallyInstrument(beeai);
diag.warn = warn;
const patchedByManual = beeai.BaseAgent.prototype.run !== before;
if (!patchedByManual) instrumentation.patch(beeai);
console.log(JSON.stringify({ beeai_version: beeai.Version, manuallyInstrument_patched: patchedByManual, warnings }));

const currentRun = () => fleet.als.getStore().run;

// BeeAI's OpenAI model; after its answer, a run the fleet aborted gives up (the agent's code
// throws)
class FleetOpenAIChatModel extends OpenAIChatModel {
  async _create(input, run) {
    const out = await super._create(input, run);
    const fr = currentRun();
    if (fr.aborted) throw new AgentGaveUpError(fr.aborted);
    return out;
  }
}
const client = { baseURL: `${fakeOrigin}/v1`, apiKey: 'sk-test' };
const models = {
  investigation: new FleetOpenAIChatModel('gpt-4.1', {}, client),
  subagent: new FleetOpenAIChatModel('gpt-4.1-mini', {}, client),
};

const subagentOf = (child, fn) => fleet.runSubagent(child, fn, runsById);

// the fleet's tools as BeeAI DynamicTools (named by toolName); each call is one attempt of the fleet
const fleetTool = (name) =>
  new DynamicTool({
    name: toolName(name),
    description: `${name} tool`,
    inputSchema: z.object({ q: z.string() }),
    handler: async () => {
      const run = currentRun();
      return new StringToolOutput(JSON.stringify(await fleet.attempt(run, run.pending, () => Promise.reject(new Error('no sub-agent')))));
    },
  });

// the sub-agent: a researcher ToolCallingAgent run by the Task tool
const taskTool = () =>
  new DynamicTool({
    name: 'Task',
    description: 'Delegate a research question to the researcher agent',
    inputSchema: z.object({ q: z.string() }),
    handler: async (input) => {
      const run = currentRun();
      const text = await fleet.attempt(run, run.pending, (child) =>
        subagentOf(child, async () => {
          const agent = newAgent(child);
          const res = await agent.run({ prompt: `Research ${input.q}` }, { execution: { maxIterations: 40, totalMaxRetries: 40, maxRetriesPerStep: 3 } });
          return res.result.text;
        }),
      );
      return new StringToolOutput(text);
    },
  });

function newAgent(run) {
  const sub = run.kind === 'subagent';
  return new ToolCallingAgent({
    llm: sub ? models.subagent : models.investigation,
    memory: new UnconstrainedMemory(),
    tools: sub ? ['WebSearch', 'docs/search', 'Bash'].map(fleetTool) : [...['WebSearch', 'Bash', 'docs/search', 'mcp.github.create_issue'].map(fleetTool), taskTool()],
    meta: { name: sub ? 'researcher' : 'triage-bee', description: sub ? 'researches one question' : 'incident investigation agent' },
  });
}

async function runInvestigation(run) {
  runsById.set(run.runId, run);
  try {
    const res = await newAgent(run).run({ prompt: `Investigate ${run.investigation}` }, { execution: { totalMaxRetries: 40 } });
    fleet.endRun(run, 'completed');
    return res.result.text;
  } catch (e) {
    fleet.endRun(run, 'failed');
    throw e;
  }
}

await fleet.runAll(runInvestigation, { concurrencyLog: process.env.CAPTURE_LOG === '1' });
await new Promise((r) => setTimeout(r, 500));
fake.close();
console.log(JSON.stringify({ refused_requests: refused.length, refused_hosts: [...new Set(refused.map((u) => new URL(u).host))] }));
await finishCapture(CONFIG, { fleet, receiver, tel, rawDir }, versions(['beeai-framework', 'beeai-framework/node_modules/ai=ai', '@ai-sdk/openai', '@arizeai/openinference-instrumentation-beeai', '@arizeai/openinference-core', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-proto']));
process.exit(0);
