// Drives an agent instrumented with Langfuse's JS tracing SDK (@langfuse/tracing 5, built on
// OpenTelemetry) through a scripted fleet and captures what a user who sends Langfuse-
// instrumented traces to an OTLP endpoint (not the Langfuse cloud) gets: the capture's
// NodeTracerProvider, BatchSpanProcessor and OTLP/HTTP protobuf exporter, handed to Langfuse
// with `setLangfuseTracerProvider` (its docs' way to use an isolated provider).
//
// The agent is written the way Langfuse's docs show a hand-written agent loop: the run is an
// `agent` observation (`startActiveObservation(..., { asType: 'agent' })`) inside
// `propagateAttributes({ sessionId, userId, traceName, metadata })`; a short `span`
// observation loads the incident context; each model call is a `generation` observation with
// `model`, `modelParameters`, `usageDetails` and the assistant message (its tool calls) as
// output; each tool is a function wrapped by `observe(fn, { name, asType: 'tool' })`, called
// with the model's arguments and `{ toolCallId }` as the AI SDK's tools are (observe records
// both as the input). A failed tool is what `observe` records on a throw: `level: 'ERROR'`,
// `statusMessage` the error's message and the output `{ error: String(error) }`; the agent
// sends the model the error and the model calls the tool again (a new tool call id). A run
// that gives up throws AgentGaveUpError from the model after its answer; the agent catches it
// at the top, updates its observation with `level: 'ERROR'` and `statusMessage`, and
// rethrows (startActiveObservation then sets the OTel status ERROR). A sub-agent is a
// `researcher` agent observation inside the `Task` tool observation (the same trace).
//
// Nothing leaves the machine: no Langfuse span processor or client is made (no keys, no
// LANGFUSE_* variables), `fetch` refuses every host (the count is printed: 0).
//
//   node langfuse.js
import { toolInput, AgentGaveUpError } from './lib/fleet.js';
import { refuseFetch } from './lib/openai.js';
import { sleepVirtual } from './lib/clock.js';
import { startCapture, finishCapture, versions } from './lib/run.js';

const CONFIG = {
  fixture: 'langfuse-otel',
  t0: '2026-03-25T13:00:00.000Z',
  seed: 25,
  encoding: 'proto',
  file: 'traces.pb.gz',
  services: [{ name: 'incident-desk', prefix: 'desk', investigations: Number(process.env.CAPTURE_N ?? 130) }],
  outages: [{ tool: 'WebSearch', start_min: 25, end_min: 45 }],
};
const SCALE = Number(process.env.CAPTURE_SCALE ?? 30);

for (const k of Object.keys(process.env)) if (k.startsWith('LANGFUSE_') || k.startsWith('OTEL_EXPORTER_OTLP')) delete process.env[k];

const { receiver, tel, rawDir, fleet } = await startCapture(CONFIG, SCALE);

const refused = refuseFetch();

const { startActiveObservation, observe, propagateAttributes, setLangfuseTracerProvider } = await import('@langfuse/tracing');
setLangfuseTracerProvider(tel.providers['incident-desk']);

const currentRun = () => fleet.als.getStore().run;

// callModel: one model call as a generation observation; the scripted model's answer is the
// fleet's decision for the run (an OpenAI-style assistant message).
async function callModel(model, messages) {
  return startActiveObservation(
    `${model} chat`,
    async (generation) => {
      const run = currentRun();
      generation.update({ model, modelParameters: { temperature: 0, max_tokens: 4096 }, input: messages });
      await sleepVirtual(fleet.modelLatency(run));
      const action = fleet.nextAction(run);
      const t = fleet.tokens(run);
      generation.update({ usageDetails: { input: t.input, output: t.output, total: t.input + t.output } });
      if (action.type === 'abort') {
        const err = new AgentGaveUpError(action.reason);
        generation.update({ level: 'ERROR', statusMessage: `${err.name}: ${err.message}` });
        throw err;
      }
      let message;
      if (action.type === 'final') {
        message = { role: 'assistant', content: action.text };
      } else {
        run.pending = action;
        message = {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: action.toolCallId, type: 'function', function: { name: action.tool, arguments: JSON.stringify(toolInput(action.tool, run)) } }],
        };
      }
      generation.update({ output: message, metadata: { finish_reason: action.type === 'final' ? 'stop' : 'tool_calls' } });
      return message;
    },
    { asType: 'generation' },
  );
}

// the tools: each a function wrapped by observe(), called with the model's arguments and the
// call's id
function makeTool(name) {
  return observe(
    async (_args, { toolCallId }) => {
      const run = currentRun();
      const action = run.pending;
      if (toolCallId !== action.toolCallId) throw new Error(`scripted call ${action.toolCallId} != ${toolCallId}`);
      return fleet.attempt(run, action, runSubagent);
    },
    { name, asType: 'tool' },
  );
}
const TOOLS = Object.fromEntries(['WebSearch', 'Bash', 'docs/search', 'mcp.github.create_issue', 'Task'].map((n) => [n, makeTool(n)]));

// runAgent: the agent loop of one run (an investigation or a sub-agent) as an agent observation
async function runAgent(run, name, model) {
  return startActiveObservation(
    name,
    async (agent) => {
      const input = `Investigate ${run.investigation}`;
      agent.update({ input, metadata: { run_id: run.runId, ...(run.parent ? { parent_run: run.parent } : {}) } });
      try {
        await startActiveObservation(
          'load-incident-context',
          async (span) => {
            span.update({ input: { investigation: run.investigation } });
            await sleepVirtual(50);
            span.update({ output: { service: 'checkout', severity: 'SEV2' } });
          },
          { asType: 'span' },
        );
        const messages = [{ role: 'system', content: `You are ${name}.` }, { role: 'user', content: input }];
        for (;;) {
          const msg = await callModel(model, messages);
          messages.push(msg);
          if (!msg.tool_calls) {
            agent.update({ output: msg.content });
            fleet.endRun(run, 'completed');
            return msg.content;
          }
          for (const call of msg.tool_calls) {
            let content;
            try {
              content = JSON.stringify(await TOOLS[call.function.name](JSON.parse(call.function.arguments), { toolCallId: call.id }));
            } catch (e) {
              content = `Error: ${e.name}: ${e.message}`;
            }
            messages.push({ role: 'tool', tool_call_id: call.id, content });
          }
        }
      } catch (e) {
        agent.update({ level: 'ERROR', statusMessage: `${e.name}: ${e.message}` });
        fleet.endRun(run, 'failed');
        throw e;
      }
    },
    { asType: 'agent' },
  );
}

async function runSubagent(child) {
  return fleet.als.run({ run: child }, () => runAgent(child, 'researcher', 'claude-haiku-4-5'));
}

await fleet.runAll((run) =>
  propagateAttributes(
    { sessionId: run.investigation, userId: 'oncall-bot', traceName: 'incident-desk', metadata: { investigation: run.investigation } },
    () => runAgent(run, 'incident-desk', 'claude-sonnet-4-5'),
  ),
);
console.error(`fetch requests refused: ${refused.length}`);
await finishCapture(CONFIG, { fleet, receiver, tel, rawDir }, versions(['@langfuse/tracing', '@langfuse/core', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-proto']));
