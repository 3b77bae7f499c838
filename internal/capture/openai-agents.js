// Drives the OpenAI Agents SDK for JavaScript (@openai/agents) instrumented with
// OpenInference (@arizeai/openinference-instrumentation-openai-agents) through a scripted
// fleet. The agents are the SDK's own `Agent`s run by `run()`, their tools `tool()`s, the
// model the SDK's default OpenAI provider (Responses API, `/v1/responses`) whose client is
// pointed at the local fake OpenAI-compatible server (lib/openai.js) through
// OPENAI_BASE_URL. A sub-agent is the `researcher` agent exposed as the `Task` tool by
// `agent.asTool()` (a nested run in the same SDK trace). A failed tool is what the SDK does
// by default: the thrown error becomes the string result of the tool's default
// `errorFunction`, sent to the model. A run that gives up throws AgentGaveUpError from its
// model (a wrapper around the SDK's model) after the model's answer.
//
// OpenInference replaces the SDK's trace processors (`manuallyInstrument(agents)`,
// exclusive mode) with its own, which turns the SDK's traces and spans into OTel spans on
// the capture's provider. Nothing leaves the machine: the SDK's default exporter to the
// OpenAI tracing backend is removed by that, no tracing export key is set, and `fetch`
// refuses every host but the fake model server (the count of refused requests is printed).
//
//   node openai-agents.js
import { startCapture, finishCapture, versions } from './lib/run.js';
import { startFakeOpenAI, guardFetch } from './lib/openai.js';
import { AgentGaveUpError } from './lib/fleet.js';

const CONFIG = {
  fixture: 'openai-agents-openinference',
  t0: '2026-03-22T10:00:00.000Z',
  seed: 22,
  encoding: 'json',
  file: 'traces.jsonl.gz',
  services: [{ name: 'postmortem-agent', prefix: 'pm', investigations: 120 }],
  outages: [{ tool: 'Bash', start_min: 25, end_min: 45 }],
};
const SCALE = Number(process.env.CAPTURE_SCALE ?? 30);

delete process.env.OPENAI_API_KEY;
delete process.env.OPENAI_AGENTS_DISABLE_TRACING;

const { receiver, tel, rawDir, fleet } = await startCapture(CONFIG, SCALE);

const runsById = new Map();
// the SDK gives the model each tool under a name of letters, digits and underscores
// (`docs/search` is sent as `docs_search`), so the scripted model calls it by that name
const fake = await startFakeOpenAI(fleet, runsById, { toolName: (name) => name.replace(/[^a-zA-Z0-9]/g, '_') });
const fakeOrigin = fake.origin;

// no network but the fake model server (the OTLP exporter uses node:http, not fetch); a
// request to the fake server carries the run it belongs to (x-run-id), from the fleet's
// async context, so the server answers with that run's scripted step
const refused = guardFetch(fleet, fakeOrigin);
process.env.OPENAI_BASE_URL = `${fakeOrigin}/v1`;

const agents = await import('@openai/agents');
const { OpenAIAgentsInstrumentation } = await import('@arizeai/openinference-instrumentation-openai-agents');
const { z } = await import('zod');
const { Agent, Runner, OpenAIProvider, tool, setDefaultOpenAIKey } = agents;

// OpenInference as its README says for ESM: the processor replaces the SDK's own
const instrumentation = new OpenAIAgentsInstrumentation({ tracerProvider: tel.providers[CONFIG.services[0].name] });
instrumentation.manuallyInstrument(agents);
setDefaultOpenAIKey('sk-test');

const currentRun = () => fleet.als.getStore().run;
const subagentOf = (child, fn) => fleet.runSubagent(child, fn, runsById);

// the fleet's tools as the SDK's function tools; each call is one attempt of the fleet
const fleetTool = (name) =>
  tool({
    name,
    description: `${name} tool`,
    parameters: z.object({ q: z.string() }),
    execute: async () => {
      const run = currentRun();
      return JSON.stringify(await fleet.attempt(run, run.pending, () => Promise.reject(new Error('no sub-agent'))));
    },
  });

const provider = new OpenAIProvider();

// the investigation's model: the SDK's Responses model; after its answer, a run the fleet
// aborted gives up (the agent's code throws)
const giveUp = (inner) => ({
  async getResponse(request) {
    const resp = await inner.getResponse(request);
    const run = currentRun();
    if (run.aborted) throw new AgentGaveUpError(run.aborted);
    return resp;
  },
  getStreamedResponse: (request) => inner.getStreamedResponse(request),
});

const researcher = new Agent({
  name: 'researcher',
  instructions: 'You research one question for an incident investigation and report what you found.',
  model: 'gpt-4.1-mini',
  tools: ['WebSearch', 'docs/search', 'Bash'].map(fleetTool),
});

// the sub-agent as a tool (agent.asTool): its invocation is the fleet's Task attempt, whose
// sub-agent run is the SDK's nested run of `researcher`
const task = researcher.asTool({
  toolName: 'Task',
  toolDescription: 'Delegate a research question to the researcher agent',
  parameters: z.object({ q: z.string() }),
  inputBuilder: ({ params }) => `Research ${params.q}`,
  runOptions: { maxTurns: 40 },
});
const invokeTask = task.invoke;
task.invoke = function (runContext, input, details) {
  const run = currentRun();
  return fleet.attempt(run, run.pending, (child) => subagentOf(child, () => invokeTask.call(this, runContext, input, details)));
};

const investigator = new Agent({
  name: 'postmortem-agent',
  instructions: 'You are an incident investigation agent.',
  model: giveUp(await provider.getModel('gpt-4.1')),
  tools: [...['WebSearch', 'Bash', 'docs/search', 'mcp.github.create_issue'].map(fleetTool), task],
});

// a Runner per investigation: its trace's group id and metadata name the investigation
async function runInvestigation(run) {
  runsById.set(run.runId, run);
  const runner = new Runner({
    modelProvider: provider,
    groupId: run.investigation,
    traceMetadata: { investigation_id: run.investigation, run_id: run.runId },
  });
  return fleet.track(run, async () => (await runner.run(investigator, `Investigate ${run.investigation}`, { maxTurns: 40 })).finalOutput);
}

await fleet.runAll(runInvestigation, { concurrencyLog: true });
await new Promise((r) => setTimeout(r, 500));
fake.close();
// the root spans OpenInference started for SDK traces and never ended: the SDK does not end
// a trace whose run threw, and OpenInference ends the root only when a failed agent span is
// its direct child (with the SDK's task span in between it is not), so these are never sent
const openRoots = instrumentation.processor?.rootSpans?.size ?? null;
console.log(JSON.stringify({ refused_requests: refused.length, refused_hosts: [...new Set(refused.map((u) => new URL(u).host))], root_spans_never_ended: openRoots }));
await finishCapture(CONFIG, { fleet, receiver, tel, rawDir }, versions(['@openai/agents', '@openai/agents-core', '@openai/agents-openai', '@openai/agents-openai/node_modules/openai=openai', '@arizeai/openinference-instrumentation-openai-agents', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http']));
process.exit(0);
