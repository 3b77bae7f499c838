// Drives Ax (@ax-llm/ax, "DSPy for TypeScript") through a scripted fleet and captures what
// its built-in OpenTelemetry tracing sends. Ax traces through whatever `Tracer` it is given:
// `axGlobals.tracer` (the documented process-wide default, set here), the AI service's
// `options.tracer`, or a program's / a forward call's `tracer`. With a tracer set, every
// program run is an `AxGen` span (`AxGen > <traceLabel>`), every model call through an
// AxBaseAI provider an `AI Chat Request` span, and every native function call a
// `Tool: <name>` span; `AxAgent` runs add an `AxAgent` span over an `AxFlow` span.
//
// The agents are Ax programs with native function calling: `ax(signature, { functions,
// traceLabel })` run by `forward(llm, values, { sessionId, maxSteps })`, Ax's tool-calling
// loop (each step one chat call, then the functions the model asked for). Ax 24's `AxAgent`
// (`agent(...)`) is a different thing: an RLM pipeline (distiller, executor, responder) whose
// model writes JavaScript that calls the functions as runtime globals in a worker, and those
// calls are not traced at all (no span, no event), so it would carry none of the fleet's
// tool attempts; see the fixture's README. The model is Ax's OpenAI provider
// (`ai({ name: 'openai', apiURL })`, chat completions, not streaming) pointed at the local fake
// OpenAI-compatible server (lib/openai.js), which answers each request with the fleet's step
// for the run its x-run-id header names. A sub-agent is the `Task` function running a nested
// `researcher` program (same trace, under the `Tool: Task` span). A failed tool: a function
// that throws a plain Error fails the whole `forward` in Ax (AxGenerateError), so the fleet's
// tools throw Ax's own recoverable `AxFunctionError` (the error text becomes the function
// result the model sees, and the model calls the tool again). A run that gives up throws
// AgentGaveUpError from a thin wrapper around the AI service's `chat` after the model's answer.
//
// Nothing leaves the machine: `fetch` refuses every host but the fake model server (the count
// of refused requests is printed; the OTLP exporter uses node:http).
//
//   node ax.js
import { startCapture, finishCapture, versions } from './lib/run.js';
import { startFakeOpenAI, guardFetch } from './lib/openai.js';
import { AgentGaveUpError } from './lib/fleet.js';

const CONFIG = {
  fixture: 'ax-otel',
  t0: '2026-03-29T09:30:00.000Z',
  seed: 2429,
  encoding: 'proto',
  file: 'traces.pb.gz',
  services: [{ name: 'incident-desk', prefix: 'inc', investigations: Number(process.env.CAPTURE_N ?? 120) }],
  outages: [{ tool: 'Bash', start_min: 20, end_min: 40 }],
};
const SCALE = Number(process.env.CAPTURE_SCALE ?? 30);

delete process.env.OPENAI_API_KEY;
delete process.env.OPENAI_APIKEY;

const { receiver, tel, rawDir, fleet } = await startCapture(CONFIG, SCALE);

const runsById = new Map();
// Ax sends the model the functions under their own names (`docs/search`,
// `mcp.github.create_issue`), so the fake server calls them by the fleet's names; its
// arguments are {"q": <investigation>}
const fake = await startFakeOpenAI(fleet, runsById);
// no network but the fake model server; a request carries its run (x-run-id)
const refused = guardFetch(fleet, fake.origin);

const { ai, ax, axGlobals, AxFunctionError } = await import('@ax-llm/ax');
const { trace } = await import('@opentelemetry/api');

// Ax's process-wide tracer: the capture's registered provider (Ax has no tracer name of its
// own; the scope is the name given here)
axGlobals.tracer = trace.getTracer('ax');

const currentRun = () => fleet.als.getStore().run;
const subagentOf = (child, fn) => fleet.runSubagent(child, fn, runsById);

// the model: Ax's OpenAI provider on the fake server; after the model's answer, a run the
// fleet aborted gives up (the agent's code throws)
const llm = ai({
  name: 'openai',
  apiKey: 'sk-test',
  apiURL: `${fake.origin}/v1`,
  config: { model: 'gpt-4.1', stream: false },
});
const chat = llm.chat.bind(llm);
llm.chat = async (...args) => {
  const resp = await chat(...args);
  const run = fleet.als.getStore()?.run;
  if (run?.aborted) throw new AgentGaveUpError(run.aborted);
  return resp;
};

const PARAMS = { type: 'object', properties: { q: { type: 'string', description: 'What to look up' } }, required: ['q'] };

// a fleet tool as an Ax function; each call is one attempt of the fleet. A failure is
// reported to the model the way Ax lets a function report one without failing the run.
const fleetFn = (name, runSubagent = () => Promise.reject(new Error('no sub-agent'))) => ({
  name,
  description: `${name} tool`,
  parameters: PARAMS,
  func: async () => {
    const run = currentRun();
    try {
      return await fleet.attempt(run, run.pending, runSubagent);
    } catch (e) {
      if (name === 'Task') throw e;
      throw new AxFunctionError([{ field: 'q', message: `${e.name}: ${e.message}` }]);
    }
  },
});

const researcher = ax('question:string "A research question" -> report:string "What was found"', {
  description: 'Researches one question for an incident investigation and reports what it found.',
  functions: ['WebSearch', 'docs/search', 'Bash'].map((n) => fleetFn(n)),
  traceLabel: 'researcher',
});

// the Task function: its call is the fleet's Task attempt, whose sub-agent run is a forward
// of `researcher` (inside the Tool: Task span, so in the same trace)
const task = fleetFn('Task', (child) =>
  subagentOf(child, async () => {
    const out = await researcher.forward(llm, { question: `Look for incidents related to ${child.investigation}` }, { model: 'gpt-4.1-mini', sessionId: child.runId, maxSteps: 40 });
    return out.report;
  }),
);
task.description = 'Delegate a research question to the researcher agent';

const investigator = ax('investigation:string "The incident to investigate" -> findings:string "What the investigation found"', {
  description: 'Investigates production incidents.',
  functions: [...['WebSearch', 'Bash', 'docs/search', 'mcp.github.create_issue'].map((n) => fleetFn(n)), task],
  traceLabel: 'sre-investigator',
});

async function runInvestigation(run) {
  runsById.set(run.runId, run);
  return fleet.track(run, async () => {
    const out = await investigator.forward(llm, { investigation: `Investigate ${run.investigation}` }, { sessionId: run.investigation, maxSteps: 40 });
    return out.findings;
  });
}

await fleet.runAll(runInvestigation, { concurrencyLog: !!process.env.CAPTURE_VERBOSE });
await new Promise((r) => setTimeout(r, 500));
fake.close();
console.log(JSON.stringify({ refused_requests: refused.length, refused_hosts: [...new Set(refused.map((u) => { try { return new URL(u).host; } catch { return u; } }))] }));
await finishCapture(CONFIG, { fleet, receiver, tel, rawDir }, versions(['@ax-llm/ax', '@opentelemetry/api', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-proto']));
process.exit(0);
