// Drives Genkit (`genkit` 1.42: a Genkit instance, flows, `ai.generate` with tools in its
// tool loop) through a scripted fleet and captures what Genkit's own OpenTelemetry tracing
// sends as OTLP. Each investigation is a call of the flow `investigate`, whose body is one
// `ai.generate` with the fleet's tools (`ai.defineTool`) and `maxTurns: 40`; the model is a
// scripted model defined with `ai.defineModel` (`openai/gpt-4.1`, the sub-agent's
// `openai/gpt-4.1-mini`) that answers with the fleet's decision (a `toolRequest` part whose
// `ref` is the fleet's tool call id, a text, or a thrown AgentGaveUpError when the run gives
// up). A sub-agent is the `Task` tool running the flow `researcher` (its own generate with its
// own tools), nested in the same trace. Genkit's tool loop fails the whole generate when a
// tool throws, so the generate has a generate middleware (Genkit's `generateMiddleware`,
// its `tool` hook) that turns a thrown tool error into the tool's response
// (`{ error: "<name>: <message>" }`), which the model sees and retries: the tool's own span
// is still the failed action.
//
// Genkit traces with its own OpenTelemetry SDK: `enableTelemetry(config)` (genkit/tracing)
// starts an `@opentelemetry/sdk-node` 0.52 NodeSDK (sdk-trace-base 1.25) that registers the
// global tracer provider, with Genkit's dev-UI telemetry-server processor first and the
// `spanProcessors` given after it. The capture gives it one processor: the counting wrapper
// around a BatchSpanProcessor and OTLP protobuf exporter of the SDK version Genkit ships
// (its own 0.52 copies, resolved from @genkit-ai/core), pointed at the receiver. So this
// script does not use the capture's 2.x providers (startCapture): the NodeSDK must own the
// global provider.
//
// Nothing leaves the machine: GENKIT_ENV is not `dev` (no reflection server, no dev-UI),
// GENKIT_TELEMETRY_SERVER is unset (the telemetry-server processor and Genkit's log exporter
// then send nothing), ENABLE_FIREBASE_MONITORING is unset (no Firebase plugin is loaded; it is
// an optional dependency, installed and unused), no OTEL_* exporter variable is set, and
// `fetch` refuses every host (the model is in-process; the count is printed: 0).
//
//   node genkit.js
import { createRequire } from 'node:module';
import { toolInput, toolSchemas, AgentGaveUpError } from './lib/fleet.js';
import { sleepVirtual } from './lib/clock.js';
import { Accounting, BATCH } from './lib/capture.js';
import { refuseFetch } from './lib/openai.js';
import { startOwnCapture, finishCapture, ownTel, versions, topSpanDropper } from './lib/run.js';

const CONFIG = {
  fixture: 'genkit-otel',
  t0: '2026-03-27T14:30:00.000Z',
  seed: 4127,
  encoding: 'proto',
  file: 'traces.pb.gz',
  services: [{ name: 'oncall-copilot', prefix: 'oc', investigations: Number(process.env.CAPTURE_N ?? 120) }],
  outages: [{ tool: 'WebSearch', start_min: 38, end_min: 55 }],
};
const SCALE = Number(process.env.CAPTURE_SCALE ?? 30);

for (const k of Object.keys(process.env)) if (k.startsWith('OTEL_')) delete process.env[k];
for (const k of ['GENKIT_ENV', 'GENKIT_TELEMETRY_SERVER', 'GENKIT_ENABLE_REALTIME_TELEMETRY', 'ENABLE_FIREBASE_MONITORING', 'GENKIT_RUNTIME_ID', 'OPENAI_API_KEY']) delete process.env[k];

const { receiver, rawDir, fleet } = await startOwnCapture(CONFIG, SCALE);

// no network at all through fetch: the model is in-process and the OTLP exporter uses
// node:http
const refused = refuseFetch();

const { genkit, z, generateMiddleware } = await import('genkit');
const { enableTelemetry, flushTracing } = await import('genkit/tracing');

// the OpenTelemetry SDK Genkit ships (1.25 / 0.52), resolved from @genkit-ai/core
const requireGenkit = createRequire(createRequire(import.meta.url).resolve('@genkit-ai/core'));
const { BatchSpanProcessor } = requireGenkit('@opentelemetry/sdk-trace-base');
const { OTLPTraceExporter } = requireGenkit('@opentelemetry/exporter-trace-otlp-proto');
const { Resource } = requireGenkit('@opentelemetry/resources');

// the top span of a run the fleet marked dropTop (its flow span: Genkit makes the outermost
// Genkit span a root) is ended but never sent; sdk-trace-base 1.25 spans carry parentSpanId
const counters = { ended: 0, dropped: 0 };
const dropper = topSpanDropper(() => fleet, (span) => span.parentSpanId);
// the exporter measures its deadline with Date.now(), on the virtual clock: a virtual day
const exporter = new OTLPTraceExporter({ url: receiver.url, timeoutMillis: 24 * 3600 * 1000 });
const processor = new Accounting(new BatchSpanProcessor(exporter, BATCH), counters, dropper);

await enableTelemetry({
  autoDetectResources: false,
  resource: new Resource({
    'service.name': CONFIG.services[0].name,
    'service.version': '1.4.2',
    'deployment.environment.name': 'production',
  }),
  spanProcessors: [processor],
});

const ai = genkit({});

const currentRun = () => fleet.als.getStore().run;

// Genkit gives the model a tool by the last segment of its name (`docs/search` is a
// namespaced name: the model sees `search`), so the scripted model calls it by that name
const shortName = (tool) => tool.substring(tool.lastIndexOf('/') + 1);

// the scripted model: each call is one step of the run in the fleet's async context
function scriptedModel(name) {
  return ai.defineModel(
    { name, label: `scripted ${name}`, supports: { multiturn: true, tools: true, systemRole: true, media: false } },
    async () => {
      const run = currentRun();
      await sleepVirtual(fleet.modelLatency(run));
      const action = fleet.nextAction(run);
      const t = fleet.tokens(run);
      const usage = { inputTokens: t.input, outputTokens: t.output, totalTokens: t.input + t.output };
      if (action.type === 'abort') throw new AgentGaveUpError(action.reason);
      if (action.type === 'tool') {
        run.pending = action;
        return {
          message: { role: 'model', content: [{ toolRequest: { name: shortName(action.tool), ref: action.toolCallId, input: toolInput(action.tool, run) } }] },
          finishReason: 'stop',
          usage,
        };
      }
      return { message: { role: 'model', content: [{ text: action.text }] }, finishReason: 'stop', usage };
    },
  );
}
const commander = scriptedModel('openai/gpt-4.1');
const researcherModel = scriptedModel('openai/gpt-4.1-mini');

const SCHEMAS = toolSchemas(z);

// the fleet's tools as Genkit tools; each call is one attempt of the fleet
let researcherFlow;
const tools = Object.fromEntries(
  Object.keys(SCHEMAS).map((name) => [
    name,
    ai.defineTool({ name, description: `${name} tool`, inputSchema: SCHEMAS[name], outputSchema: z.any() }, async () => {
      const run = currentRun();
      return fleet.attempt(run, run.pending, (child) =>
        fleet.runSubagent(child, () => researcherFlow({ question: `look for incidents related to ${run.investigation}` })),
      );
    }),
  ]),
);

// a thrown tool error becomes the tool's response, which the model sees (Genkit's own tool
// loop would fail the generate): the tool's action span has already failed
const toolErrorsAsResults = generateMiddleware({ name: 'toolErrorsAsResults', description: 'tool errors as tool responses' }, () => ({
  tool: async (req, ctx, next) => {
    try {
      return await next(req, ctx);
    } catch (e) {
      return { toolResponse: { name: req.toolRequest.name, ref: req.toolRequest.ref, output: { error: `${e.name}: ${e.message}` } } };
    }
  },
}));

// an agent's turn loop: one generate with its tools, tool errors as tool responses
const generate = async (model, system, prompt, toolList) =>
  (await ai.generate({ model, system, prompt, tools: toolList, use: [toolErrorsAsResults()], maxTurns: 40 })).text;

researcherFlow = ai.defineFlow(
  { name: 'researcher', inputSchema: z.object({ question: z.string() }), outputSchema: z.string() },
  ({ question }) =>
    generate(researcherModel, 'You research one question for an incident investigation and report what you found.', question, [tools.WebSearch, tools['docs/search'], tools.Bash]),
);

const investigate = ai.defineFlow(
  { name: 'investigate', inputSchema: z.object({ investigation: z.string() }), outputSchema: z.string() },
  ({ investigation }) => generate(commander, 'You are an incident investigation agent.', `Investigate ${investigation}`, Object.values(tools)),
);

await fleet.runAll((run) => fleet.track(run, () => investigate({ investigation: run.investigation })), { concurrencyLog: !!process.env.CAPTURE_VERBOSE });
await new Promise((r) => setTimeout(r, 500));
console.log(JSON.stringify({ refused_requests: refused.length, refused_hosts: [...new Set(refused.map((u) => new URL(u).host))] }));

const tel = ownTel(counters, () => flushTracing(), () => processor.forceFlush(), () => processor.shutdown());
await finishCapture(
  CONFIG,
  { fleet, receiver, tel, rawDir },
  versions([
    'genkit',
    '@genkit-ai/core',
    '@genkit-ai/ai',
    '@genkit-ai/core/node_modules/@opentelemetry/sdk-node=@opentelemetry/sdk-node',
    '@genkit-ai/core/node_modules/@opentelemetry/sdk-trace-base=@opentelemetry/sdk-trace-base',
    '@genkit-ai/core/node_modules/@opentelemetry/exporter-trace-otlp-proto=@opentelemetry/exporter-trace-otlp-proto',
  ]),
);
process.exit(0);
