// Drives VoltAgent (@voltagent/core) through a scripted fleet and captures the spans of its
// own OpenTelemetry observability: `VoltAgentObservability` (its NodeTracerProvider,
// registered globally, with its default span filter: only the `@voltagent/core` scope) given
// one extra span processor, as VoltAgent's docs show for an OTLP backend
// (`spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))]`, protobuf),
// pointed at the local receiver and wrapped in the capture's counting wrapper (which also
// loses the top span of the runs the fleet marks). VoltOps sync is off
// (`voltOpsSync.sampling.strategy: 'never'`, no VoltOps keys), so nothing goes to VoltOps.
//
// The agents are VoltAgent `Agent`s run by `agent.generateText()`, their tools `createTool()`s
// calling the fleet's attempt, the model a scripted `MockLanguageModelV3` (`ai` 6, `ai6/test`)
// answering with the fleet's decision. VoltAgent 2.10 wants `ai` 6 as a peer while the
// capture's `ai` is 7, so a module resolve hook (registered below, inline) gives VoltAgent's
// files `ai6`; nothing else is touched. A sub-agent is VoltAgent's own supervisor delegation:
// the investigator lists `researcher` in its `subAgents`, which VoltAgent gives the model as
// the tool `delegate_task` (the fleet's `Task`); VoltAgent runs the researcher with
// `streamText` (its default for a sub-agent), wrapped here to record the fleet's Task attempt.
// A failed tool is what VoltAgent does by default with a thrown error (the error becomes the
// call's result, `{ error: true, name, message, ... }`). A run that gives up makes its model
// call throw AgentGaveUpError, marked `isRetryable = false` so that VoltAgent's model retry
// (3 retries by default, re-running the whole generateText) does not run it again.
//
// Nothing leaves the machine: NODE_ENV=production keeps VoltAgent's model registry from
// fetching https://models.dev/api.json at import, `fetch` refuses every host (the model is
// in-process; the OTLP exporter uses node:http; the count is printed: 0), no VoltOps client
// or keys (VOLTAGENT_* removed), no server. VoltAgent's default in-memory memory is on (each
// run has a conversationId), so its memory spans are in the capture too.
//
//   node voltagent.js
import { register } from 'node:module';
import { toolInput, toolSchemas, AgentGaveUpError } from './lib/fleet.js';
import { Accounting, BATCH } from './lib/capture.js';
import { refuseFetch } from './lib/openai.js';
import { scriptedAiModel } from './lib/aisdk-model.js';
import { startOwnCapture, finishCapture, ownTel, versions, topSpanDropper } from './lib/run.js';

const CONFIG = {
  fixture: 'voltagent-otel',
  t0: '2026-03-10T06:30:00.000Z',
  seed: 310,
  file: 'traces.pb.gz',
  services: [{ name: 'oncall-copilot', prefix: 'oc', investigations: Number(process.env.CAPTURE_N ?? 120) }],
  outages: [{ tool: 'WebSearch', start_min: 25, end_min: 42 }],
};
const SCALE = Number(process.env.CAPTURE_SCALE ?? 30);

// VoltAgent's files import `ai` (a peer, ^6): give them the capture's `ai6`
register(
  'data:text/javascript,' +
    encodeURIComponent(`export async function resolve(specifier, context, next) {
  if ((specifier === 'ai' || specifier.startsWith('ai/')) && context.parentURL?.includes('/node_modules/@voltagent/')) {
    return next('ai6' + specifier.slice(2), context);
  }
  return next(specifier, context);
}`),
  import.meta.url,
);

for (const k of Object.keys(process.env)) if (k.startsWith('VOLTAGENT_') || k.startsWith('VOLTOPS_')) delete process.env[k];
// a production deployment: VoltAgent's model provider registry does not fetch models.dev at
// import (it does outside production), and its console logger's default level is `error`
process.env.NODE_ENV = 'production';

const { receiver, rawDir, fleet } = await startOwnCapture(CONFIG, SCALE);

// no network at all through fetch (the model is in-process; the OTLP exporter uses node:http)
const refused = refuseFetch();

const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
const { BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
const { Agent, VoltAgent, VoltAgentObservability, createTool } = await import('@voltagent/core');
const { MockLanguageModelV3, simulateReadableStream } = await import('ai6/test');
const { z } = await import('zod');

const currentRun = () => fleet.als.getStore().run;
const SUBAGENT_TOOL = 'delegate_task';
const toolName = (tool) => (tool === 'Task' ? SUBAGENT_TOOL : tool);
// VoltAgent's delegation tool takes a task and the agents' names; the fleet's other tools
// their usual arguments
const toolArgs = (name, run) =>
  name === 'Task' ? { task: `Look for incidents related to ${run.investigation}`, targetAgents: ['researcher'] } : toolInput(name, run);

// the scripted model: each call is one step of the run in the fleet's async context. A run
// that gives up throws AgentGaveUpError marked not retryable: VoltAgent retries a model error
// unless it says it is not retryable
const giveUp = (reason) => Object.assign(new AgentGaveUpError(reason), { isRetryable: false });
const scriptedModel = (modelId) =>
  scriptedAiModel(fleet, { Mock: MockLanguageModelV3, simulateReadableStream, provider: 'openai.chat', modelId, toolName, toolArgs, timestamp: true, giveUp });

const SCHEMAS = toolSchemas(z);

// the fleet's tools as VoltAgent tools; each call is one attempt of the fleet
const fleetTool = (name) =>
  createTool({
    name,
    description: `${name} tool`,
    parameters: SCHEMAS[name],
    execute: async (_args, options) => {
      const run = currentRun();
      const action = run.pending;
      const callId = options?.toolContext?.callId;
      if (callId !== action.toolCallId) throw new Error(`scripted call ${action.toolCallId} != ${callId}`);
      return fleet.attempt(run, action, () => Promise.reject(new Error('no sub-agent')));
    },
  });
const toolsOf = (names) => names.map(fleetTool);

const researcher = new Agent({
  name: 'researcher',
  purpose: 'Researches one question for an incident investigation and reports what it found.',
  instructions: 'You research one question for an incident investigation and report what you found.',
  model: scriptedModel('gpt-4.1-mini'),
  tools: toolsOf(['WebSearch', 'docs/search', 'Bash']),
  maxSteps: 40,
});

// the sub-agent's run is the fleet's Task attempt: VoltAgent's delegate_task tool runs
// researcher.streamText() and then awaits its text; the wrapper runs it as the fleet's
// sub-agent and returns the response once its text is there (the attempt's end)
const researcherStreamText = researcher.streamText.bind(researcher);
researcher.streamText = (...args) => {
  const run = currentRun();
  if (run.pending?.tool !== 'Task') throw new Error(`researcher started outside a Task call (${run.runId})`);
  return fleet.attempt(run, run.pending, (child) =>
    fleet.runSubagent(child, async () => {
      const response = await researcherStreamText(...args);
      await response.text;
      return response;
    }),
  );
};

const investigator = new Agent({
  name: 'incident-commander',
  instructions: 'You are an incident investigation agent.',
  model: scriptedModel('gpt-4.1'),
  tools: toolsOf(['WebSearch', 'Bash', 'docs/search', 'mcp.github.create_issue']),
  subAgents: [researcher],
  maxSteps: 40,
});

// VoltAgent's observability with our processor, as its docs show for an OTLP backend
const counters = { ended: 0, dropped: 0 };
const exporter = new OTLPTraceExporter({ url: receiver.url, timeoutMillis: 24 * 3600 * 1000 }); // deadline on the virtual clock
const processor = new Accounting(new BatchSpanProcessor(exporter, BATCH), counters, topSpanDropper(() => fleet));
const observability = new VoltAgentObservability({
  serviceName: CONFIG.services[0].name,
  serviceVersion: '1.4.2',
  resourceAttributes: { 'deployment.environment.name': 'production' },
  spanProcessors: [processor],
  voltOpsSync: { sampling: { strategy: 'never' } },
});
const voltagent = new VoltAgent({ agents: { investigator, researcher }, observability });
await voltagent.ready;

async function runInvestigation(run) {
  return fleet.track(run, async () => {
    const result = await investigator.generateText(`Investigate ${run.investigation}`, {
      userId: 'oncall',
      conversationId: run.investigation,
      maxSteps: 40,
    });
    return result.text;
  });
}

await fleet.runAll(runInvestigation, { concurrencyLog: !!process.env.CAPTURE_VERBOSE });
await new Promise((r) => setTimeout(r, 500));
console.log(JSON.stringify({ refused_requests: refused.length, refused_hosts: [...new Set(refused.map((u) => new URL(u).host))] }));
const tel = ownTel(counters, () => observability.forceFlush(), () => observability.shutdown());
await finishCapture(
  CONFIG,
  { fleet, receiver, tel, rawDir },
  versions([
    '@voltagent/core',
    'ai6=ai',
    '@opentelemetry/sdk-trace-node',
    '@opentelemetry/sdk-trace-base',
    '@opentelemetry/exporter-trace-otlp-proto',
    '@voltagent/core/node_modules/@opentelemetry/resources=@opentelemetry/resources',
  ]),
);
process.exit(0);
