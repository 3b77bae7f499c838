// Drives the Vercel AI SDK (generateText with tools, scripted mock models) through a
// scripted fleet and captures the OTLP bodies its OpenTelemetry integration sends.
//
//   node aisdk.js legacy         # ai@6, experimental_telemetry: { isEnabled: true } (ai.* spans), protobuf
//   node aisdk.js genai          # ai@7 + @ai-sdk/otel OpenTelemetry (invoke_agent / chat / execute_tool), JSON lines
//   node aisdk.js openinference  # the legacy spans exported the way Arize Phoenix users send AI SDK traces, JSON lines
//
// openinference: OpenInference's OpenInferenceBatchSpanProcessor (@arizeai/openinference-vercel)
// wraps the OTLP/HTTP JSON exporter, so each span carries both the AI SDK's ai.* attributes and
// the OpenInference ones (openinference.span.kind, llm.*, tool.*, input.value, ...) it adds at
// the span's end. The processor is the one of its README's standalone example (no span filter,
// no reparenting; context attributes propagated, its default), given the capture's queue
// settings; the capture's counting wrapper sits around it. 3.x says it targets AI SDK 7
// (@ai-sdk/otel); it still maps the ai.* spans of AI SDK 6 by their operation.name
// (ai.generateText -> AGENT, ai.generateText.doGenerate -> LLM, ai.toolCall -> TOOL). Nothing
// leaves the machine: the model is in-process and fetch refuses every host (the count of
// refused requests is printed).
import { scriptedAiModel } from './lib/aisdk-model.js';
import { refuseFetch } from './lib/openai.js';
import { BATCH } from './lib/capture.js';
import { startCapture, finishCapture, versions } from './lib/run.js';

const form = process.argv[2];
if (form !== 'legacy' && form !== 'genai' && form !== 'openinference') {
  console.error('usage: node aisdk.js legacy|genai|openinference');
  process.exit(2);
}
const legacySpans = form !== 'genai'; // ai@6 with experimental_telemetry

const CONFIG = {
  legacy: {
    fixture: 'aisdk-legacy',
    t0: '2026-03-17T09:00:00.000Z',
    seed: 17,
    encoding: 'proto',
    file: 'traces.pb.gz',
    services: [
      { name: 'triage-agent', prefix: 'tri', investigations: 130 },
      { name: 'release-bot', prefix: 'rel', investigations: 70 },
    ],
    outages: [{ tool: 'mcp.github.create_issue', start_min: 25, end_min: 45 }],
  },
  genai: {
    fixture: 'aisdk-genai',
    t0: '2026-03-18T14:00:00.000Z',
    seed: 18,
    encoding: 'json',
    file: 'traces.jsonl.gz',
    services: [
      { name: 'oncall-agent', prefix: 'onc', investigations: 120 },
      { name: 'support-agent', prefix: 'sup', investigations: 60 },
    ],
    outages: [{ tool: 'docs/search', start_min: 20, end_min: 40 }],
  },
  openinference: {
    fixture: 'aisdk-openinference',
    t0: '2026-03-24T08:00:00.000Z',
    seed: 24,
    encoding: 'json',
    file: 'traces.jsonl.gz',
    services: [
      { name: 'sre-copilot', prefix: 'sre', investigations: 85 },
      { name: 'deploy-guard', prefix: 'dg', investigations: 45 },
    ],
    outages: [{ tool: 'WebSearch', start_min: 30, end_min: 50 }],
  },
}[form];

const SCALE = Number(process.env.CAPTURE_SCALE ?? 60);
const openInference = form === 'openinference' ? await import('@arizeai/openinference-vercel') : null;
let refused = [];
if (openInference) {
  for (const k of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'PHOENIX_COLLECTOR_ENDPOINT', 'PHOENIX_API_KEY']) {
    delete process.env[k];
  }
  // no network at all through fetch (the model is in-process; the OTLP exporter uses node:http)
  refused = refuseFetch();
}

const { receiver, tel, rawDir, fleet } = await startCapture(CONFIG, SCALE, {
  ...(openInference && {
    // the Phoenix project, as OpenInference's README sets it on the resource
    resourceExtra: { 'openinference.project.name': 'incident-response' },
    makeProcessor: (exporter) => new openInference.OpenInferenceBatchSpanProcessor({ exporter, config: BATCH }),
  }),
});

const ai = legacySpans ? await import('ai6') : await import('ai');
const aiTest = legacySpans ? await import('ai6/test') : await import('ai/test');
const Mock = legacySpans ? aiTest.MockLanguageModelV3 : aiTest.MockLanguageModelV4;
const otel = form === 'genai' ? await import('@ai-sdk/otel') : null;
const integrations = {};
if (otel) {
  for (const s of CONFIG.services) {
    integrations[s.name] = new otel.OpenTelemetry({ tracer: tel.tracer(s.name, 'ai'), agentSpanName: 'functionId', runtimeContext: true, usage: true });
  }
}


const TOOL_SCHEMAS = {
  WebSearch: { query: { type: 'string' } },
  Bash: { command: { type: 'string' } },
  'docs/search': { query: { type: 'string' } },
  'mcp.github.create_issue': { repo: { type: 'string' }, title: { type: 'string' } },
  Task: { description: { type: 'string' }, subagent_type: { type: 'string' } },
};

// the model each form's fleet names: Anthropic's, or OpenAI's for the Phoenix users' form
const MODELS = openInference
  ? { provider: 'openai.chat', root: 'gpt-4.1', sub: 'gpt-4.1-mini', stop: 'stop', tools: 'tool_calls', id: 'chatcmpl-', version: '-2025-04-14' }
  : { provider: 'anthropic.messages', root: 'claude-sonnet-4-5', sub: 'claude-haiku-4-5', stop: 'end_turn', tools: 'tool_use', id: 'msg_', version: '' };

async function runAgent(run) {
  const modelId = run.kind === 'subagent' ? MODELS.sub : MODELS.root;
  const model = scriptedAiModel(fleet, {
    Mock,
    provider: MODELS.provider,
    modelId,
    responseModelId: `${modelId}${MODELS.version}`,
    runOf: () => run,
    raw: { stop: MODELS.stop, tools: MODELS.tools },
    idPrefix: MODELS.id,
  });
  const tools = {};
  const names = run.kind === 'subagent' ? ['WebSearch', 'Bash', 'docs/search'] : Object.keys(TOOL_SCHEMAS);
  for (const name of names) {
    tools[name] = ai.tool({
      description: `${name} tool`,
      inputSchema: ai.jsonSchema({ type: 'object', properties: TOOL_SCHEMAS[name] }),
      execute: async (_input, { toolCallId }) => {
        const action = run.pending;
        if (action.toolCallId !== toolCallId) throw new Error(`scripted call ${action.toolCallId} != ${toolCallId}`);
        return fleet.attempt(run, action, async (child) => (await runAgent(child)).text);
      },
    });
  }
  const functionId = run.kind === 'subagent' ? 'researcher' : run.service;
  const common = {
    model,
    tools,
    system: 'You are an incident investigation agent.',
    prompt: `Investigate ${run.investigation}`,
    stopWhen: ai.stepCountIs(40),
    maxRetries: 0,
  };
  const telemetry =
    legacySpans
      ? { experimental_telemetry: { isEnabled: true, functionId, metadata: { investigation_id: run.investigation, run_id: run.runId }, tracer: tel.tracer(run.service, 'ai') } }
      : {
          runtimeContext: { investigation_id: run.investigation, run_id: run.runId },
          telemetry: { isEnabled: true, functionId, includeRuntimeContext: { investigation_id: true, run_id: true }, integrations: integrations[run.service] },
        };
  try {
    const res = await ai.generateText({ ...common, ...telemetry });
    fleet.endRun(run, 'completed');
    return res;
  } catch (e) {
    fleet.endRun(run, 'failed');
    throw e;
  }
}

await fleet.runAll(runAgent);
if (openInference) console.log(JSON.stringify({ refused_requests: refused.length }));
const LIBRARY = {
  legacy: ['ai6=ai', '@opentelemetry/sdk-trace-node', `@opentelemetry/exporter-trace-otlp-proto`],
  genai: ['ai', '@ai-sdk/otel', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http'],
  openinference: ['ai6=ai', '@arizeai/openinference-vercel', '@arizeai/openinference-core', '@arizeai/openinference-semantic-conventions', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http'],
}[form];
await finishCapture(CONFIG, { fleet, receiver, tel, rawDir }, versions(LIBRARY));
