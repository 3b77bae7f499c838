// Drives the Strands Agents TypeScript SDK (@strands-agents/sdk) through a scripted fleet
// and captures what its built-in OpenTelemetry tracing sends. Strands traces through the
// global OTel API (`trace.getTracer('strands-agents')` in every `Agent`): its telemetry
// module documents both `setupTracer()` (its own provider and OTLP exporter) and "your own
// provider, `provider.register()`"; the capture does the latter (makeProviders registers its
// provider, which exports through the official OTLP/protobuf exporter), so every `Agent`
// traces with no further setting. The semantic conventions are Strands' default (no
// OTEL_SEMCONV_STABILITY_OPT_IN): `gen_ai.system`, one span event per message.
//
// The agents are Strands `Agent`s (one per run: an Agent runs one invocation at a time and
// its tracer keeps the invocation's spans as state), run by `agent.invoke()`; their tools
// Strands `tool()`s (zod schemas) named in letters, digits, `_` and `-` as Strands requires
// (`docs_search`, `mcp_github_create_issue`); the model a scripted subclass of Strands'
// `Model` whose `stream()` yields the fleet's decision as Strands model stream events
// (message start, a tool-use or text block, message stop, usage metadata). A sub-agent is a
// `researcher` Agent exposed as the `Task` tool by `researcher.asTool({ name: 'Task' })`
// (Strands' AgentAsTool: a nested invocation under the tool's span). A failed tool is what
// Strands does by default: the function tool catches the error and returns an error tool
// result ("Error: <message>") to the model. A run that gives up throws AgentGaveUpError from
// its model after the model's answer (Strands wraps it in its ModelError).
//
// Nothing leaves the machine: the model is in-process, and `fetch` refuses every host (the
// count of refused requests is printed; the OTLP exporter uses node:http).
//
//   node strands.js
import { startCapture, finishCapture, versions } from './lib/run.js';
import { toolInput, toolSchemas, AgentGaveUpError } from './lib/fleet.js';
import { sleepVirtual } from './lib/clock.js';
import { refuseFetch } from './lib/openai.js';

const CONFIG = {
  fixture: 'strands-otel',
  t0: '2026-03-12T08:30:00.000Z',
  seed: 312,
  encoding: 'proto',
  file: 'traces.pb.gz',
  services: [{ name: 'sre-copilot', prefix: 'sre', investigations: Number(process.env.CAPTURE_N ?? 120) }],
  outages: [{ tool: 'WebSearch', start_min: 15, end_min: 35 }],
};
const SCALE = Number(process.env.CAPTURE_SCALE ?? 30);

delete process.env.OTEL_SEMCONV_STABILITY_OPT_IN; // Strands' default conventions
delete process.env.OTEL_SERVICE_NAME; // Strands names its tracer (scope) after it: 'strands-agents'
delete process.env.LANGFUSE_BASE_URL; // would move message content from events to attributes
delete process.env.OPENAI_API_KEY;
delete process.env.AWS_ACCESS_KEY_ID;
delete process.env.AWS_PROFILE;

const { receiver, tel, rawDir, fleet } = await startCapture(CONFIG, SCALE);

// no network at all through fetch
const refused = refuseFetch();

const { Agent, Model, tool } = await import('@strands-agents/sdk');
const { z } = await import('zod');

const currentRun = () => fleet.als.getStore().run;
// Strands allows tool names of letters, digits, `_` and `-` only
const toolName = (name) => name.replace(/[^a-zA-Z0-9_-]/g, '_');
// the Task tool (AgentAsTool) takes one `input` string; the fleet's other tools their usual arguments
const toolArgs = (name, run) => (name === 'Task' ? { input: `Look for incidents related to ${run.investigation}` } : toolInput(name, run));

// the scripted model: each stream() is one step of the run in the fleet's async context,
// answered as Strands' OpenAI chat adapter would (tool use -> stopReason toolUse)
class ScriptedModel extends Model {
  constructor(modelId) {
    super();
    this._config = { modelId, contextWindowLimit: 1_047_576 };
  }
  updateConfig(config) {
    this._config = { ...this._config, ...config };
  }
  getConfig() {
    return this._config;
  }
  async *stream() {
    const run = currentRun();
    await sleepVirtual(fleet.modelLatency(run));
    const action = fleet.nextAction(run);
    const t = fleet.tokens(run);
    yield { type: 'modelMessageStartEvent', role: 'assistant' };
    let stopReason = 'endTurn';
    if (action.type === 'tool') {
      run.pending = action;
      stopReason = 'toolUse';
      yield { type: 'modelContentBlockStartEvent', start: { type: 'toolUseStart', name: toolName(action.tool), toolUseId: action.toolCallId } };
      yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'toolUseInputDelta', input: JSON.stringify(toolArgs(action.tool, run)) } };
      yield { type: 'modelContentBlockStopEvent' };
    } else {
      const text = action.type === 'final' ? action.text : `I could not finish: ${action.reason}`;
      yield { type: 'modelContentBlockStartEvent' };
      yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'textDelta', text } };
      yield { type: 'modelContentBlockStopEvent' };
    }
    yield { type: 'modelMessageStopEvent', stopReason };
    yield { type: 'modelMetadataEvent', usage: { inputTokens: t.input, outputTokens: t.output, totalTokens: t.input + t.output } };
    // a run the fleet aborted gives up after the model's answer
    if (action.type === 'abort') throw new AgentGaveUpError(action.reason);
  }
}

const SCHEMAS = toolSchemas(z);

// the fleet's tools as Strands tools; each call is one attempt of the fleet
const fleetTool = (name) =>
  tool({
    name: toolName(name),
    description: `${name} tool`,
    inputSchema: SCHEMAS[name],
    callback: async (_input, context) => {
      return fleet.attemptPending(currentRun(), context?.toolUse?.toolUseId);
    },
  });

// the Task tool: a researcher Agent as a tool (AgentAsTool). Its stream is the fleet's Task
// attempt, whose sub-agent run is the nested invocation of the researcher (its events are
// passed on after it ends; an error result fails the sub-agent run).
function taskTool() {
  const researcher = new Agent({
    name: 'researcher',
    description: 'Researches one question for an incident investigation and reports what it found.',
    systemPrompt: 'You research one question for an incident investigation and report what you found.',
    model: new ScriptedModel('gpt-4.1-mini'),
    tools: ['WebSearch', 'docs/search', 'Bash'].map(fleetTool),
    printer: false,
  });
  const task = researcher.asTool({ name: 'Task', description: 'Delegate a research question to the researcher agent' });
  const stream = task.stream.bind(task);
  task.stream = async function* (toolContext) {
    const run = currentRun();
    const events = [];
    const result = await fleet.attempt(run, run.pending, (child) =>
      fleet.runSubagent(child, async () => {
        const gen = stream(toolContext);
        let next = await gen.next();
        while (!next.done) {
          events.push(next.value);
          next = await gen.next();
        }
        if (next.value?.status === 'error') throw next.value.error ?? new Error('sub-agent failed');
        return next.value;
      }),
    );
    yield* events;
    return result;
  };
  return task;
}

async function runInvestigation(run) {
  const agent = new Agent({
    name: 'sre-investigator',
    description: 'Investigates production incidents.',
    systemPrompt: 'You are an incident investigation agent.',
    model: new ScriptedModel('gpt-4.1'),
    tools: [...['WebSearch', 'Bash', 'docs/search', 'mcp.github.create_issue'].map(fleetTool), taskTool()],
    // Strands' documented way to tag a trace: attributes on the invoke_agent span
    traceAttributes: { 'session.id': run.investigation },
    printer: false,
  });
  return fleet.track(run, async () => {
    const result = await agent.invoke(`Investigate ${run.investigation}`);
    return result.toString();
  });
}

await fleet.runAll(runInvestigation, { concurrencyLog: true });
await new Promise((r) => setTimeout(r, 500));
console.log(JSON.stringify({ refused_requests: refused.length, refused_hosts: [...new Set(refused)] }));
await finishCapture(CONFIG, { fleet, receiver, tel, rawDir }, versions(['@strands-agents/sdk', 'zod', '@opentelemetry/api', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-proto']));
process.exit(0);
