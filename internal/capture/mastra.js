// Drives Mastra (@mastra/core) through a scripted fleet and captures what its AI tracing
// sends as OTLP through @mastra/otel-exporter (the OpenTelemetry GenAI form, its only form):
// a `Mastra` instance with `Observability` (@mastra/observability) whose one config exports
// through `OtelExporter` with the `custom` provider pointed at the local receiver
// (`http/protobuf`). The agents are Mastra `Agent`s run by `agent.generate()`, their tools
// `createTool()`s, the model a scripted `MockLanguageModelV3` (`ai` 6, `ai6/test`) whose
// stream answers with the fleet's decision. A sub-agent is Mastra's own supervisor
// delegation: the investigator lists `researcher` in its `agents`, which Mastra gives the
// model as the tool `agent-researcher` (the fleet's `Task`). A failed tool is what Mastra
// does by default with a thrown error. A run that gives up makes its model stream fail with
// AgentGaveUpError.
//
// Mastra's exporter builds its own BatchSpanProcessor (queue 2,048, 5 s delay) and OTLP
// exporter (the copy of @opentelemetry/exporter-trace-otlp-proto it depends on); the
// capture only wraps that processor with its counting wrapper (which also loses the top
// span of the runs the fleet marks). Nothing leaves the machine: the log signal is off,
// no Mastra platform/cloud exporter is configured (no MASTRA_CLOUD_ACCESS_TOKEN),
// MASTRA_TELEMETRY_DISABLED=1 turns off Mastra's PostHog telemetry, and `fetch` refuses
// every host (the model is in-process; the count of refused requests is printed).
//
//   node mastra.js
import { toolInput, toolSchemas } from './lib/fleet.js';
import { Accounting } from './lib/capture.js';
import { refuseFetch } from './lib/openai.js';
import { scriptedAiModel } from './lib/aisdk-model.js';
import { startOwnCapture, finishCapture, ownTel, versions } from './lib/run.js';

const CONFIG = {
  fixture: 'mastra-otel',
  t0: '2026-03-23T15:00:00.000Z',
  seed: 23,
  file: 'traces.pb.gz',
  services: [{ name: 'incident-commander', prefix: 'ic', investigations: Number(process.env.CAPTURE_N ?? 125) }],
  outages: [{ tool: 'docs/search', start_min: 30, end_min: 50 }],
};
const SCALE = Number(process.env.CAPTURE_SCALE ?? 30);

delete process.env.MASTRA_CLOUD_ACCESS_TOKEN;
delete process.env.MASTRA_PLATFORM_ACCESS_TOKEN;
process.env.MASTRA_TELEMETRY_DISABLED = '1'; // Mastra's PostHog telemetry

const { receiver, rawDir, fleet } = await startOwnCapture(CONFIG, SCALE);
const origin = new URL(receiver.url).origin;

// no network at all through fetch (the model is in-process; the OTLP exporter uses node:http)
const refused = refuseFetch();

const { Mastra } = await import('@mastra/core/mastra');
const { Agent } = await import('@mastra/core/agent');
const { createTool } = await import('@mastra/core/tools');
const { Observability } = await import('@mastra/observability');
const { OtelExporter } = await import('@mastra/otel-exporter');
const { MockLanguageModelV3, simulateReadableStream } = await import('ai6/test');
const { z } = await import('zod');

const currentRun = () => fleet.als.getStore().run;
const SUBAGENT_TOOL = 'agent-researcher';
// Mastra gives the model each tool under a name of letters, digits, `_` and `-` (`docs/search`
// is sent as `docs_search`), so the scripted model calls it by that name
const toolName = (tool) => (tool === 'Task' ? SUBAGENT_TOOL : tool.replace(/[^a-zA-Z0-9_-]/g, '_'));

// Mastra's delegation tool takes a prompt; the fleet's other tools their usual arguments
const toolArgs = (name, run) => (name === 'Task' ? { prompt: `Look for incidents related to ${run.investigation}` } : toolInput(name, run));

// the scripted model: each call is one step of the run in the fleet's async context
// (Mastra streams: doStream answers)
const scriptedModel = (modelId) =>
  scriptedAiModel(fleet, { Mock: MockLanguageModelV3, simulateReadableStream, provider: 'openai.chat', modelId, toolName, toolArgs });

const SCHEMAS = toolSchemas(z);

// the fleet's tools as Mastra tools; each call is one attempt of the fleet
const fleetTool = (name) =>
  createTool({
    id: name,
    description: `${name} tool`,
    inputSchema: SCHEMAS[name],
    execute: async (_input, context) => {
      return fleet.attemptPending(currentRun(), context?.agent?.toolCallId);
    },
  });
const toolsOf = (names) => Object.fromEntries(names.map((n) => [n, fleetTool(n)]));

const researcher = new Agent({
  id: 'researcher',
  name: 'researcher',
  description: 'Researches one question for an incident investigation and reports what it found.',
  instructions: 'You research one question for an incident investigation and report what you found.',
  model: scriptedModel('gpt-4.1-mini'),
  tools: toolsOf(['WebSearch', 'docs/search', 'Bash']),
  defaultOptions: { maxSteps: 40 },
});

// the sub-agent's run is the fleet's Task attempt: Mastra's delegation tool calls
// researcher.generate(), wrapped here to run it as the fleet's sub-agent
const researcherGenerate = researcher.generate.bind(researcher);
researcher.generate = (...args) => {
  const run = currentRun();
  return fleet.attempt(run, run.pending, (child) =>
    fleet.runSubagent(child, async () => {
      const out = await researcherGenerate(...args);
      if (out?.error) throw out.error;
      return out;
    }),
  );
};

const investigator = new Agent({
  id: 'incident-commander',
  name: 'incident-commander',
  instructions: 'You are an incident investigation agent.',
  model: scriptedModel('gpt-4.1'),
  tools: toolsOf(['WebSearch', 'Bash', 'docs/search', 'mcp.github.create_issue']),
  agents: { researcher },
  defaultOptions: { maxSteps: 40 },
});

// Mastra's exporter, as its README shows, with the custom provider at the receiver
const otelExporter = new OtelExporter({
  provider: { custom: { endpoint: origin, protocol: 'http/protobuf' } },
  // the exporter measures its deadline with Date.now(), on the virtual clock
  timeout: 24 * 3600 * 1000,
  signals: { logs: false },
});
const mastra = new Mastra({
  agents: { investigator, researcher },
  observability: new Observability({
    configs: {
      otel: { serviceName: CONFIG.services[0].name, exporters: [otelExporter] },
    },
  }),
  logger: false,
});

// the counting wrapper around Mastra's own batch processor; a run marked to lose its top
// span loses its root span (no parent), known by the run id in its tracing metadata
await otelExporter.ensureSetup();
if (!otelExporter.processor) throw new Error('OtelExporter did not set up its trace processor');
const counters = { ended: 0, dropped: 0 };
const runsById = new Map();
const dropper = {
  onStart() {},
  drop(span) {
    if (span.parentSpanContext) return false;
    const run = runsById.get(span.attributes['mastra.metadata.run_id']);
    if (!run?.dropTop || run.topDropped) return false;
    run.topDropped = true;
    return true;
  },
};
otelExporter.processor = new Accounting(otelExporter.processor, counters, dropper);

const agent = mastra.getAgent('investigator');
async function runInvestigation(run) {
  runsById.set(run.runId, run);
  return fleet.track(run, async () => {
    const result = await agent.generate(`Investigate ${run.investigation}`, {
      maxSteps: 40,
      tracingOptions: { metadata: { investigation_id: run.investigation, run_id: run.runId } },
    });
    if (result?.error) throw result.error;
    return result.text;
  });
}

await fleet.runAll(runInvestigation, { concurrencyLog: true });
await new Promise((r) => setTimeout(r, 500));
console.log(JSON.stringify({ refused_requests: refused.length, refused_hosts: [...new Set(refused.map((u) => new URL(u).host))] }));
const tel = ownTel(counters, () => otelExporter.flush(), () => mastra.shutdown?.(), () => otelExporter.shutdown());
await finishCapture(
  CONFIG,
  { fleet, receiver, tel, rawDir },
  versions([
    '@mastra/core',
    '@mastra/observability',
    '@mastra/otel-exporter',
    'ai6=ai',
    '@mastra/otel-exporter/node_modules/@opentelemetry/exporter-trace-otlp-proto=@opentelemetry/exporter-trace-otlp-proto',
    '@opentelemetry/sdk-trace-base',
  ]),
);
process.exit(0);
