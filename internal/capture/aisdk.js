// Drives the Vercel AI SDK (generateText with tools, scripted mock models) through a
// scripted fleet and captures the OTLP bodies its OpenTelemetry integration sends.
//
//   node aisdk.js legacy   # ai@6, experimental_telemetry: { isEnabled: true } (ai.* spans), protobuf
//   node aisdk.js genai    # ai@7 + @ai-sdk/otel OpenTelemetry (invoke_agent / chat / execute_tool), JSON lines
import { Fleet } from './lib/fleet.js';
import { sleepVirtual } from './lib/clock.js';
import { setup, finish, versions } from './lib/run.js';

const form = process.argv[2];
if (form !== 'legacy' && form !== 'genai') {
  console.error('usage: node aisdk.js legacy|genai');
  process.exit(2);
}

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
}[form];

const SCALE = Number(process.env.CAPTURE_SCALE ?? 60);
const fleetRef = {};
const { receiver, tel, rawDir } = await setup({
  fixture: CONFIG.fixture,
  t0: CONFIG.t0,
  scale: SCALE,
  encoding: CONFIG.encoding,
  services: CONFIG.services.map((s) => s.name),
  fleetRef,
});

const ai = form === 'legacy' ? await import('ai6') : await import('ai');
const aiTest = form === 'legacy' ? await import('ai6/test') : await import('ai/test');
const Mock = form === 'legacy' ? aiTest.MockLanguageModelV3 : aiTest.MockLanguageModelV4;
const otel = form === 'genai' ? await import('@ai-sdk/otel') : null;
const integrations = {};
if (otel) {
  for (const s of CONFIG.services) {
    integrations[s.name] = new otel.OpenTelemetry({ tracer: tel.tracer(s.name, 'ai'), agentSpanName: 'functionId', runtimeContext: true, usage: true });
  }
}

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
    provider: 'anthropic.messages',
    modelId: run.kind === 'subagent' ? 'claude-haiku-4-5' : 'claude-sonnet-4-5',
    doGenerate: async () => {
      await sleepVirtual(fleet.modelLatency(run));
      const action = fleet.nextAction(run);
      const t = fleet.tokens(run);
      if (action.type === 'abort') throw new AgentGaveUpError(action.reason);
      if (action.type === 'final') {
        return {
          content: [{ type: 'text', text: action.text }],
          finishReason: { unified: 'stop', raw: 'end_turn' },
          usage: usage(t),
          warnings: [],
          response: { id: `msg_${run.r.hex(24)}`, modelId: model.modelId },
        };
      }
      run.pending = action;
      return {
        content: [{ type: 'tool-call', toolCallId: action.toolCallId, toolName: action.tool, input: JSON.stringify(toolInput(action.tool, run)) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_use' },
        usage: usage(t),
        warnings: [],
        response: { id: `msg_${run.r.hex(24)}`, modelId: model.modelId },
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
  const common = {
    model,
    tools,
    system: 'You are an incident investigation agent.',
    prompt: `Investigate ${run.investigation}`,
    stopWhen: ai.stepCountIs(40),
    maxRetries: 0,
  };
  const telemetry =
    form === 'legacy'
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
await finish({
  fixture: CONFIG.fixture,
  fleet,
  receiver,
  tel,
  rawDir,
  file: CONFIG.file,
  gzip: true,
  library: versions(form === 'legacy' ? ['ai6=ai', '@opentelemetry/sdk-trace-node', `@opentelemetry/exporter-trace-otlp-proto`] : ['ai', '@ai-sdk/otel', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http']),
});
