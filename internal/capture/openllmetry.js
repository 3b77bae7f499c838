// Drives OpenLLMetry JS (@traceloop/node-server-sdk) through a scripted fleet: an agent
// loop of the official OpenAI client (instrumented by OpenLLMetry) against a local fake
// OpenAI-compatible server whose answers are the fleet's scripted decisions, with agents
// and tools marked by traceloop.withAgent / withTool. A sub-agent is a nested withAgent.
//
//   node openllmetry.js
import { Fleet } from './lib/fleet.js';
import { installClock } from './lib/clock.js';
import { startReceiver, Accounting, assemble } from './lib/capture.js';
import { FIXTURES, HERE, versions, topSpanDropper } from './lib/run.js';
import { startFakeOpenAI, agentLoop } from './lib/openai.js';
import path from 'node:path';
import fs from 'node:fs';

const CONFIG = {
  fixture: 'openllmetry',
  t0: '2026-03-20T16:00:00.000Z',
  seed: 20,
  file: 'traces.pb.gz',
  services: [{ name: 'ops-copilot', prefix: 'ops', investigations: 100 }],
  outages: [{ tool: 'WebSearch', start_min: 15, end_min: 35 }],
};
const SCALE = Number(process.env.CAPTURE_SCALE ?? 30);
process.env.OTEL_BSP_MAX_QUEUE_SIZE = '1000000';
process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE = '128';
process.env.OTEL_BSP_SCHEDULE_DELAY = '500';
process.env.OTEL_BSP_EXPORT_TIMEOUT = '300000';
// resource detectors: no host.* (this machine's name and id)
process.env.OTEL_NODE_RESOURCE_DETECTORS = 'env,os,process';
installClock({ t0Ms: Date.parse(CONFIG.t0), scale: SCALE });
const rawDir = path.join(HERE, 'out', CONFIG.fixture);
const receiver = await startReceiver(rawDir);

const fleet = new Fleet({ fixture: CONFIG.fixture, seed: CONFIG.seed, services: CONFIG.services, outages: CONFIG.outages, params: { ops_max: 4 } });
const runsById = new Map();

// the fake OpenAI-compatible server answers with each run's scripted step
const fake = await startFakeOpenAI(fleet, runsById);
const fakeUrl = `${fake.origin}/v1`;

const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
const counters = { ended: 0, dropped: 0 };
const dropper = topSpanDropper(() => fleet); // by span id: OpenLLMetry's processor hands the exporter other objects
// OpenLLMetry always adds its own BatchSpanProcessor (sized by the OTEL_BSP_* variables)
// around the exporter it is given; a `processor` option is added beside it, not instead.
// So the counting processor below forwards nothing, and the exporter leaves out the top
// spans this fleet loses.
const otlp = new OTLPTraceExporter({ url: receiver.url, timeoutMillis: 24 * 3600 * 1000 });
const exporter = {
  export: (spans, done) => otlp.export(spans.filter((s) => !dropper.drop(s)), done),
  shutdown: () => otlp.shutdown(),
  forceFlush: () => otlp.forceFlush(),
};
const noop = { onStart() {}, onEnd() {}, forceFlush: async () => {}, shutdown: async () => {} };
const traceloop = await import('@traceloop/node-server-sdk');
const OpenAI = (await import('openai')).default;
traceloop.initialize({
  appName: 'ops-copilot',
  baseUrl: receiver.url.replace('/v1/traces', ''),
  apiKey: 'none',
  exporter,
  processor: new Accounting(noop, counters, dropper),
  instrumentModules: { openAI: OpenAI },
  traceloopSyncEnabled: false,
  silenceInitializationMessage: true,
});
const client = new OpenAI({ apiKey: 'sk-test', baseURL: fakeUrl, maxRetries: 0 });

async function runAgent(run) {
  runsById.set(run.runId, run);
  const name = run.kind === 'subagent' ? 'researcher' : 'ops-copilot';
  const callTool = (call) =>
    traceloop.withTool({ name: call.function.name }, () =>
      fleet.attempt(run, run.pending, (child) => fleet.als.run({ run: child }, () => runAgent(child))),
    );
  return traceloop.withAgent({ name, associationProperties: { investigation_id: run.investigation, run_id: run.runId } }, () =>
    agentLoop({ fleet, client, run, callTool }),
  );
}

await fleet.runAll(runAgent);
await traceloop.forceFlush();
await new Promise((r) => setTimeout(r, 300));
await receiver.close();
fake.close();
const spans = { ended: counters.ended, dropped_top_spans: counters.dropped, received: receiver.stats.spans, requests: receiver.stats.requests };
const out = path.join(FIXTURES, CONFIG.fixture);
fs.mkdirSync(out, { recursive: true });
const written = assemble(rawDir, receiver.stats.files, path.join(out, CONFIG.file), { gzip: true });
const truth = fleet.truth({ library: versions(['@traceloop/node-server-sdk', 'openai', '@opentelemetry/exporter-trace-otlp-proto']), spans });
truth.file = CONFIG.file;
fs.writeFileSync(path.join(out, 'truth.json'), JSON.stringify(truth, null, 1) + '\n');
console.log(JSON.stringify({ fixture: CONFIG.fixture, file: written, bytes: fs.statSync(written).size, spans, summary: truth.summary }, null, 1));
if (spans.ended !== spans.received) {
  console.error(`spans ended ${spans.ended} != received ${spans.received}`);
  process.exit(1);
}
process.exit(0);
