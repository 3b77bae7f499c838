// Drives the Vercel AI SDK (`ai` 6, generateText with tools, scripted mock models) through a
// scripted fleet with its telemetry on (`experimental_telemetry: { isEnabled: true }`, the
// `ai.*` spans of `node aisdk.js legacy`), exported the way Arize Phoenix users send AI SDK
// traces: OpenInference's `OpenInferenceBatchSpanProcessor` (@arizeai/openinference-vercel)
// wrapping the OTLP/HTTP JSON exporter, so each span carries both the AI SDK's `ai.*`
// attributes and the OpenInference ones (`openinference.span.kind`, `llm.*`, `tool.*`,
// `input.value`, ...) it adds at the span's end. The processor is the one of its README's
// standalone example (no span filter, no reparenting; context attributes propagated, its
// default), given the capture's queue settings; the capture's counting wrapper sits around it.
//
// @arizeai/openinference-vercel 3.x says it targets AI SDK 7 (`@ai-sdk/otel`); it still maps
// the `ai.*` spans of AI SDK 6 by their `operation.name` (ai.generateText -> AGENT,
// ai.generateText.doGenerate -> LLM, ai.toolCall -> TOOL), which is what this fixture shows.
// Nothing leaves the machine: the model is in-process and `fetch` refuses every host (the
// count of refused requests is printed).
//
//   node aisdk-openinference.js
import { Fleet } from './lib/fleet.js';
import { sleepVirtual } from './lib/clock.js';
import { BATCH } from './lib/capture.js';
import { setup, finish, versions } from './lib/run.js';

const CONFIG = {
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
};
const SCALE = Number(process.env.CAPTURE_SCALE ?? 60);

delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
delete process.env.PHOENIX_COLLECTOR_ENDPOINT;
delete process.env.PHOENIX_API_KEY;

// no network at all through fetch (the model is in-process; the OTLP exporter uses node:http)
const refused = [];
globalThis.fetch = (input) => {
  const url = String(input?.url ?? input);
  refused.push(url);
  return Promise.reject(new TypeError(`capture: no network (${url})`));
};

const { OpenInferenceBatchSpanProcessor } = await import('@arizeai/openinference-vercel');

const fleetRef = {};
const { receiver, tel, rawDir } = await setup({
  fixture: CONFIG.fixture,
  t0: CONFIG.t0,
  scale: SCALE,
  encoding: CONFIG.encoding,
  services: CONFIG.services.map((s) => s.name),
  fleetRef,
  // the Phoenix project, as OpenInference's README sets it on the resource
  resourceExtra: { 'openinference.project.name': 'incident-response' },
  makeProcessor: (exporter) => new OpenInferenceBatchSpanProcessor({ exporter, config: BATCH }),
});

const ai = await import('ai6');
const { MockLanguageModelV3: Mock } = await import('ai6/test');

const fleet = new Fleet({ fixture: CONFIG.fixture, seed: CONFIG.seed, services: CONFIG.services, outages: CONFIG.outages });
fleetRef.fleet = fleet;

const TOOL_SCHEMAS = {
  WebSearch: { query: { type: 'string' } },
  Bash: { command: { type: 'string' } },
  'docs/search': { query: { type: 'string' } },
  'mcp.github.create_issue': { repo: { type: 'string' }, title: { type: 'string' } },
  Task: { description: { type: 'string' }, subagent_type: { type: 'string' } },
};
function toolInput(name, run) {
  switch (name) {
    case 'WebSearch':
      return { query: `checkout 5xx spike ${run.investigation}` };
    case 'Bash':
      return { command: 'kubectl get pods -n checkout' };
    case 'docs/search':
      return { query: 'rollback runbook' };
    case 'mcp.github.create_issue':
      return { repo: 'acme/checkout', title: `Incident ${run.investigation}` };
    case 'Task':
      return { description: 'look for related incidents', subagent_type: 'researcher' };
  }
}

function usage(t) {
  return {
    inputTokens: { total: t.input, noCache: t.input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: t.output, text: t.output, reasoning: 0 },
  };
}

class AgentGaveUpError extends Error {
  constructor(msg) {
    super(msg);
    this.name = 'AgentGaveUpError';
  }
}

async function runAgent(run) {
  const model = new Mock({
    provider: 'openai.chat',
    modelId: run.kind === 'subagent' ? 'gpt-4.1-mini' : 'gpt-4.1',
    doGenerate: async () => {
      await sleepVirtual(fleet.modelLatency(run));
      const action = fleet.nextAction(run);
      const t = fleet.tokens(run);
      if (action.type === 'abort') throw new AgentGaveUpError(action.reason);
      if (action.type === 'final') {
        return {
          content: [{ type: 'text', text: action.text }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage: usage(t),
          warnings: [],
          response: { id: `chatcmpl-${run.r.hex(24)}`, modelId: `${model.modelId}-2025-04-14` },
        };
      }
      run.pending = action;
      return {
        content: [{ type: 'tool-call', toolCallId: action.toolCallId, toolName: action.tool, input: JSON.stringify(toolInput(action.tool, run)) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: usage(t),
        warnings: [],
        response: { id: `chatcmpl-${run.r.hex(24)}`, modelId: `${model.modelId}-2025-04-14` },
      };
    },
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
  try {
    const res = await ai.generateText({
      model,
      tools,
      system: 'You are an incident investigation agent.',
      prompt: `Investigate ${run.investigation}`,
      stopWhen: ai.stepCountIs(40),
      maxRetries: 0,
      experimental_telemetry: {
        isEnabled: true,
        functionId,
        metadata: { investigation_id: run.investigation, run_id: run.runId },
        tracer: tel.tracer(run.service, 'ai'),
      },
    });
    fleet.endRun(run, 'completed');
    return res;
  } catch (e) {
    fleet.endRun(run, 'failed');
    throw e;
  }
}

await fleet.runAll(runAgent);
console.log(JSON.stringify({ refused_requests: refused.length }));
await finish({
  fixture: CONFIG.fixture,
  fleet,
  receiver,
  tel,
  rawDir,
  file: CONFIG.file,
  gzip: true,
  library: versions(['ai6=ai', '@arizeai/openinference-vercel', '@arizeai/openinference-core', '@arizeai/openinference-semantic-conventions', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http']),
});
