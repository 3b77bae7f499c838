// Drives the LangSmith JS SDK in its OpenTelemetry mode (LANGSMITH_OTEL_ENABLED=true): an
// agent loop written with `traceable` (the agent a "chain" run, each tool a "tool" run) and
// the official OpenAI client wrapped by `wrapOpenAI` (an "llm" run per call) against a
// local fake OpenAI-compatible server whose answers are the fleet's scripted decisions.
// LangSmith's own span processor and OTLP exporter send the spans, pointed at the local
// receiver; a sub-agent is a nested traceable agent inside the Task tool (same trace).
//
// LangChain.js runs themselves make no span in this mode (langsmith 0.12, @langchain/core
// 1.4): the OTel translator only annotates the span active when a run is posted, and only
// `traceable` starts one; so the agent is written with `traceable`, as LangSmith's JS
// documentation does for OTel.
//
// Nothing reaches the LangSmith API: in OTel mode the client hands runs to the translator
// instead of posting them, LANGSMITH_ENDPOINT is a closed local port, and `fetch` refuses
// every host but the fake model server (the count of refused requests is printed).
//
//   node langsmith.js
import path from 'node:path';
import fs from 'node:fs';
import { Fleet } from './lib/fleet.js';
import { installClock } from './lib/clock.js';
import { startReceiver, Accounting, assemble, BATCH } from './lib/capture.js';
import { FIXTURES, HERE, versions, topSpanDropper } from './lib/run.js';
import { startFakeOpenAI, agentLoop } from './lib/openai.js';

const CONFIG = {
  fixture: 'langsmith-otel',
  t0: '2026-03-21T13:00:00.000Z',
  seed: 21,
  file: 'traces.pb.gz',
  services: [{ name: 'triage-agent', prefix: 'tri', investigations: 130 }],
  outages: [{ tool: 'Bash', start_min: 20, end_min: 40 }],
};
const SCALE = Number(process.env.CAPTURE_SCALE ?? 30);

process.env.LANGSMITH_TRACING = 'true';
process.env.LANGSMITH_OTEL_ENABLED = 'true';
process.env.LANGSMITH_PROJECT = 'triage-agent';
process.env.LANGSMITH_ENDPOINT = 'http://127.0.0.1:9';
delete process.env.LANGSMITH_API_KEY;
delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;

installClock({ t0Ms: Date.parse(CONFIG.t0), scale: SCALE });
const rawDir = path.join(HERE, 'out', CONFIG.fixture);
const receiver = await startReceiver(rawDir);

const fleet = new Fleet({ fixture: CONFIG.fixture, seed: CONFIG.seed, services: CONFIG.services, outages: CONFIG.outages });
const runsById = new Map();

// the fake OpenAI-compatible server answers with each run's scripted step
const fake = await startFakeOpenAI(fleet, runsById);
const fakeOrigin = fake.origin;

// no network but the fake model server (the OTLP exporter uses node:http, not fetch)
const realFetch = globalThis.fetch;
const refused = [];
globalThis.fetch = (input, init) => {
  const url = String(input?.url ?? input);
  if (url.startsWith(fakeOrigin + '/')) return realFetch(input, init);
  refused.push(url);
  return Promise.reject(new TypeError(`capture: no network (${url})`));
};

// LangSmith's own span processor (it keeps the traceable spans and marks roots and parents)
// and OTLP exporter (it adds its attributes at export), pointed at the receiver, behind the
// counting wrapper that also loses the top spans the fleet marks.
const { NodeTracerProvider } = await import('@opentelemetry/sdk-trace-node');
const { defaultResource, resourceFromAttributes } = await import('@opentelemetry/resources');
const { LangSmithOTLPTraceExporter } = await import('langsmith/experimental/otel/exporter');
const { LangSmithOTLPSpanProcessor } = await import('langsmith/experimental/otel/processor');
const { initializeOTEL } = await import('langsmith/experimental/otel/setup');
const counters = { ended: 0, dropped: 0 };
const dropper = topSpanDropper(() => fleet);
const exporter = new LangSmithOTLPTraceExporter({ url: receiver.url, timeoutMillis: 24 * 3600 * 1000 });
const processor = new LangSmithOTLPSpanProcessor(exporter, BATCH);
const provider = new NodeTracerProvider({
  resource: defaultResource().merge(resourceFromAttributes({
    'service.name': CONFIG.services[0].name,
    'service.version': '2.3.0',
    'deployment.environment.name': 'production',
  })),
  spanProcessors: [new Accounting(processor, counters, dropper)],
});
provider.register();
initializeOTEL({ globalTracerProvider: provider, skipGlobalContextManagerSetup: true });

const { traceable } = await import('langsmith/traceable');
const { wrapOpenAI } = await import('langsmith/wrappers/openai');
const { RunTree } = await import('langsmith/run_trees');
const OpenAI = (await import('openai')).default;
const client = wrapOpenAI(new OpenAI({ apiKey: 'sk-test', baseURL: `${fakeOrigin}/v1`, maxRetries: 0 }));

// the agent's loop, with a tool run per call, named after the tool; LangSmith reads the call
// id from the run's metadata (tool_call_id)
const callTool = (run) => (call) =>
  traceable(
    async (args) => fleet.attempt(run, run.pending, (child) => fleet.als.run({ run: child }, () => runAgent(child))),
    { name: call.function.name, run_type: 'tool', metadata: { tool_call_id: call.id } },
  )(JSON.parse(call.function.arguments));

async function runAgent(run) {
  runsById.set(run.runId, run);
  const name = run.kind === 'subagent' ? 'researcher' : 'triage-agent';
  const agent = traceable(async (_task) => agentLoop({ fleet, client, run, callTool: callTool(run) }), {
    name,
    run_type: 'chain',
    metadata: { investigation_id: run.investigation, run_id: run.runId },
    tags: [run.kind],
  });
  return agent({ task: `Investigate ${run.investigation}` });
}

await fleet.runAll(runAgent);
await RunTree.getSharedClient().awaitPendingTraceBatches();
await new Promise((r) => setTimeout(r, 500));
await provider.forceFlush();
await provider.shutdown();
await new Promise((r) => setTimeout(r, 300));
await receiver.close();
fake.close();
const spans = { ended: counters.ended, dropped_top_spans: counters.dropped, received: receiver.stats.spans, requests: receiver.stats.requests };
const out = path.join(FIXTURES, CONFIG.fixture);
fs.mkdirSync(out, { recursive: true });
const written = assemble(rawDir, receiver.stats.files, path.join(out, CONFIG.file), { gzip: true });
const truth = fleet.truth({ library: versions(['langsmith', 'openai', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-proto']), spans });
truth.file = CONFIG.file;
fs.writeFileSync(path.join(out, 'truth.json'), JSON.stringify(truth, null, 1) + '\n');
console.log(JSON.stringify({ fixture: CONFIG.fixture, file: written, bytes: fs.statSync(written).size, spans, refused_requests: refused.length, refused_hosts: [...new Set(refused.map((u) => new URL(u).host))], summary: truth.summary }, null, 1));
if (spans.ended !== spans.received) {
  console.error(`spans ended ${spans.ended} != received ${spans.received}`);
  process.exit(1);
}
process.exit(0);
