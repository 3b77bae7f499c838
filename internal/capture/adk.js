// Drives Google's Agent Development Kit for TypeScript (@google/adk: an LlmAgent with
// FunctionTools run by an InMemoryRunner, a scripted BaseLlm) through a scripted fleet and
// captures the OTLP bodies its own tracing sends. ADK traces through the global tracer
// provider ("gcp.vertex.agent"), so the fixture has one service. A sub-agent is a second
// LlmAgent run by its own runner inside the Task tool (as ADK's AgentTool does).
//
//   node adk.js
import { toolInput, AgentGaveUpError } from './lib/fleet.js';
import { sleepVirtual } from './lib/clock.js';
import { startCapture, finishCapture, versions } from './lib/run.js';

const CONFIG = {
  fixture: 'adk',
  t0: '2026-03-20T11:00:00.000Z',
  seed: 20,
  encoding: 'proto',
  file: 'traces.pb.gz',
  services: [{ name: 'sre-agent', prefix: 'sre', investigations: 140 }],
  outages: [{ tool: 'WebSearch', start_min: 15, end_min: 35 }],
};
const SCALE = Number(process.env.CAPTURE_SCALE ?? 40);
const { receiver, tel, rawDir, fleet } = await startCapture(CONFIG, SCALE);

const adk = await import('@google/adk');

const TOOL_SCHEMAS = {
  WebSearch: { query: { type: 'STRING' } },
  Bash: { command: { type: 'STRING' } },
  'docs/search': { query: { type: 'STRING' } },
  'mcp.github.create_issue': { repo: { type: 'STRING' }, title: { type: 'STRING' } },
  Task: { description: { type: 'STRING' }, subagent_type: { type: 'STRING' } },
};

// ScriptedLlm: a BaseLlm whose every answer is the fleet's scripted decision for the run.
class ScriptedLlm extends adk.BaseLlm {
  constructor(model, run) {
    super({ model });
    this.run = run;
  }
  async *generateContentAsync() {
    const run = this.run;
    await sleepVirtual(fleet.modelLatency(run));
    const action = fleet.nextAction(run);
    const t = fleet.tokens(run);
    const usageMetadata = { promptTokenCount: t.input, candidatesTokenCount: t.output, totalTokenCount: t.input + t.output };
    if (action.type === 'abort') throw new AgentGaveUpError(action.reason);
    if (action.type === 'final') {
      yield { content: { role: 'model', parts: [{ text: action.text }] }, usageMetadata, finishReason: 'STOP', turnComplete: true };
      return;
    }
    run.pending = action;
    yield {
      content: { role: 'model', parts: [{ functionCall: { id: action.toolCallId, name: action.tool, args: toolInput(action.tool, run) } }] },
      usageMetadata,
      finishReason: 'STOP',
      turnComplete: true,
    };
  }
  async connect() {
    throw new Error('live connections are not scripted');
  }
}

async function runAgent(run) {
  const names = run.kind === 'subagent' ? ['WebSearch', 'Bash', 'docs/search'] : Object.keys(TOOL_SCHEMAS);
  const tools = names.map(
    (name) =>
      new adk.FunctionTool({
        name,
        description: `${name} tool`,
        parameters: { type: 'OBJECT', properties: TOOL_SCHEMAS[name] },
        execute: async (_input, toolContext) => {
          const action = run.pending;
          if (action.toolCallId !== toolContext.functionCallId) throw new Error(`scripted call ${action.toolCallId} != ${toolContext.functionCallId}`);
          return fleet.attempt(run, action, async (child) => runAgent(child));
        },
      }),
  );
  const name = run.kind === 'subagent' ? 'researcher' : 'sre_agent';
  const agent = new adk.LlmAgent({
    name,
    description: run.kind === 'subagent' ? 'looks for related incidents' : 'investigates production incidents',
    model: new ScriptedLlm(run.kind === 'subagent' ? 'gemini-2.5-flash' : 'gemini-2.5-pro', run),
    instruction: 'You are an incident investigation agent.',
    tools,
  });
  const runner = new adk.InMemoryRunner({ agent, appName: run.service });
  const session = await runner.sessionService.createSession({ appName: run.service, userId: 'oncall', sessionId: run.runId });
  let text = '';
  let error = null;
  for await (const ev of runner.runAsync({ userId: 'oncall', sessionId: session.id, newMessage: { role: 'user', parts: [{ text: `Investigate ${run.investigation}` }] } })) {
    if (ev.errorCode) error = new AgentGaveUpError(ev.errorMessage ?? ev.errorCode);
    for (const p of ev.content?.parts ?? []) if (p.text) text = p.text;
  }
  if (error) {
    fleet.endRun(run, 'failed');
    throw error;
  }
  fleet.endRun(run, 'completed');
  return { text };
}

await fleet.runAll(runAgent);
await finishCapture(CONFIG, { fleet, receiver, tel, rawDir }, versions(['@google/adk', '@google/genai', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-proto']));
