// Drives a hand-written agent loop around the official Anthropic SDK (@anthropic-ai/sdk)
// through a scripted fleet, traced as an Arize Phoenix user traces it: the model calls by
// OpenInference's Anthropic instrumentation (@arizeai/openinference-instrumentation-anthropic),
// the agent and its tools by OpenInference's own span wrappers (`traceAgent`, `traceTool` of
// @arizeai/openinference-core), as their READMEs show.
//
// An investigation is `traceAgent(loop, { name: 'incident-investigator' })` called with the
// question, inside `setSession(ctx, { sessionId: <investigation> })`. The loop is the usual
// Messages API tool loop: `client.messages.create({ model, system, tools, messages })`; for
// each `tool_use` block of the answer, the tool's function (a `traceTool(fn, { name })` per
// tool, called with the block's `input`) runs the fleet's attempt; its result, or the error
// as `is_error: true`, goes back as a `tool_result` block with the block's `tool_use_id`;
// repeat until the model answers without a tool call. The SDK is pointed at a local fake
// Messages API (lib/anthropic.js) by `baseURL`; it answers the fleet's step as one `tool_use`
// block whose id is the fleet's tool call id, or a final `text` block. A failed tool call is
// retried by the model (the fleet's policy: a new `tool_use` block at the next step). A
// sub-agent is the `Task` tool running the same loop as `traceAgent(loop, { name:
// 'researcher' })` (same trace, under the Task tool span). A run that gives up throws
// AgentGaveUpError from the loop after the model's answer (the AGENT span ends in error).
//
// The SDK 1.x traces its own API calls with OpenTelemetry by default (a CLIENT span
// `anthropic.messages.create` through the global tracer provider); the script leaves that as
// shipped (the `ANTHROPIC_OPEN_TELEMETRY*` variables are removed), so each model call has the
// OpenInference LLM span and, under it, the SDK's span.
//
// Nothing leaves the machine: `fetch` refuses every host but the fake server (the count of
// refused requests is printed); the OTLP exporter uses node:http.
//
//   node anthropic-diy.js
import { startCapture, finishCapture, versions } from './lib/run.js';
import { guardFetch } from './lib/openai.js';
import { startFakeAnthropic } from './lib/anthropic.js';
import { AgentGaveUpError } from './lib/fleet.js';

const CONFIG = {
  fixture: 'anthropic-openinference',
  t0: '2026-03-29T10:00:00.000Z',
  seed: 29,
  encoding: 'proto',
  file: 'traces.pb.gz',
  services: [{ name: 'claude-responder', prefix: 'cr', investigations: Number(process.env.CAPTURE_N ?? 120) }],
  outages: [{ tool: 'docs/search', start_min: 10, end_min: 30 }],
};
const SCALE = Number(process.env.CAPTURE_SCALE ?? 30);

for (const k of Object.keys(process.env)) {
  if (k.startsWith('ANTHROPIC_') || k.startsWith('OTEL_EXPORTER_OTLP_') || k.startsWith('OPENINFERENCE_')) delete process.env[k];
}

const { receiver, tel, rawDir, fleet } = await startCapture(CONFIG, SCALE, {
  resourceExtra: { 'openinference.project.name': 'incident-response' },
});
const service = CONFIG.services[0].name;

const runsById = new Map();
// the Messages API allows tool names of letters, digits, `_` and `-` only, so the fleet's
// tools are declared so (`docs/search` is `docs_search`) and the fake model calls them so
const toolName = (name) => name.replace(/[^a-zA-Z0-9_-]/g, '_');
const fake = await startFakeAnthropic(fleet, runsById, { toolName });
// installed before the client is made: the SDK keeps the global fetch it finds then
const refused = guardFetch(fleet, fake.origin);

const { default: Anthropic } = await import('@anthropic-ai/sdk');
const { AnthropicInstrumentation } = await import('@arizeai/openinference-instrumentation-anthropic');
const { traceAgent, traceTool, setSession } = await import('@arizeai/openinference-core');
const { context } = await import('@opentelemetry/api');

// OpenInference as its README says for ESM: manuallyInstrument the SDK's module
const instrumentation = new AnthropicInstrumentation({ tracerProvider: tel.providers[service] });
instrumentation.manuallyInstrument(Anthropic);

const client = new Anthropic({ apiKey: 'sk-ant-capture-0000', baseURL: fake.origin, maxRetries: 0 });

const currentRun = () => fleet.als.getStore().run;

// the tools as the Messages API declares them (input schemas of the fleet's arguments)
const SCHEMAS = {
  WebSearch: ['Search the web', { query: { type: 'string' } }, ['query']],
  Bash: ['Run a shell command in the incident sandbox', { command: { type: 'string' } }, ['command']],
  'docs/search': ['Search the internal runbooks and docs', { query: { type: 'string' } }, ['query']],
  'mcp.github.create_issue': ['Create a GitHub issue', { repo: { type: 'string' }, title: { type: 'string' } }, ['repo', 'title']],
  Task: ['Delegate a research question to the researcher sub-agent', { description: { type: 'string' }, subagent_type: { type: 'string' } }, ['description']],
};
const toolDef = (name) => {
  const [description, properties, required] = SCHEMAS[name];
  return { name: toolName(name), description, input_schema: { type: 'object', properties, required } };
};
const INVESTIGATOR_TOOLS = ['WebSearch', 'Bash', 'docs/search', 'mcp.github.create_issue', 'Task'].map(toolDef);
const RESEARCHER_TOOLS = ['WebSearch', 'docs/search', 'Bash'].map(toolDef);

// each tool's implementation, wrapped by traceTool (a TOOL span named after the tool, its
// input the tool's arguments): one attempt of the fleet; Task runs the researcher sub-agent
const TOOL_FNS = {};
for (const name of ['WebSearch', 'Bash', 'docs/search', 'mcp.github.create_issue', 'Task']) {
  TOOL_FNS[toolName(name)] = traceTool(
    async (input) => {
      const run = currentRun();
      return fleet.attempt(run, run.pending, (child) =>
        fleet.als.run({ run: child }, () => runAgent(child, `Research: ${input.description}`)),
      );
    },
    { name: toolName(name) },
  );
}

// the hand-written agent loop
async function agentLoop(run, question) {
  const sub = run.kind === 'subagent';
  const messages = [{ role: 'user', content: question }];
  for (let turn = 0; turn < 40; turn++) {
    const msg = await client.messages.create({
      model: sub ? 'claude-haiku-4-5' : 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: sub
        ? 'You research one question for an incident investigation and report what you found.'
        : 'You are an incident investigation agent. Use the tools to find the cause and file an issue.',
      tools: sub ? RESEARCHER_TOOLS : INVESTIGATOR_TOOLS,
      messages,
    });
    // the agent's own code gives up after the model's answer
    if (run.aborted) throw new AgentGaveUpError(run.aborted);
    messages.push({ role: 'assistant', content: msg.content });
    if (msg.stop_reason !== 'tool_use') {
      return msg.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n');
    }
    const results = [];
    for (const block of msg.content) {
      if (block.type !== 'tool_use') continue;
      try {
        const out = await TOOL_FNS[block.name](block.input);
        results.push({ type: 'tool_result', tool_use_id: block.id, content: typeof out === 'string' ? out : JSON.stringify(out) });
      } catch (e) {
        results.push({ type: 'tool_result', tool_use_id: block.id, content: `${e.name}: ${e.message}`, is_error: true });
      }
    }
    messages.push({ role: 'user', content: results });
  }
  throw new Error('agent: too many turns');
}

const investigator = traceAgent((question) => agentLoop(currentRun(), question), { name: 'incident-investigator' });
const researcher = traceAgent((question) => agentLoop(currentRun(), question), { name: 'researcher' });

function runAgent(run, question) {
  runsById.set(run.runId, run);
  return fleet.track(run, () => (run.kind === 'subagent' ? researcher : investigator)(question));
}

await fleet.runAll(
  (run) => context.with(setSession(context.active(), { sessionId: run.investigation }), () => runAgent(run, `Investigate incident ${run.investigation}: checkout is returning 5xx.`)),
  { concurrencyLog: !!process.env.CAPTURE_VERBOSE },
);
await new Promise((r) => setTimeout(r, 500));
fake.close();
console.log(JSON.stringify({ refused_requests: refused.length, refused_hosts: [...new Set(refused.map((u) => new URL(u).host))] }));
await finishCapture(
  CONFIG,
  { fleet, receiver, tel, rawDir },
  versions(['@anthropic-ai/sdk', '@arizeai/openinference-instrumentation-anthropic', '@arizeai/openinference-core', '@arizeai/openinference-semantic-conventions', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-proto']),
);
process.exit(0);
