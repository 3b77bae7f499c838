// A fake OpenAI-compatible server for the drivers that call the official OpenAI client:
// /v1/chat/completions (and /v1/responses, the Responses API the OpenAI Agents SDK uses by
// default) answers each request with the fleet's scripted step for the run its x-run-id
// header names, after the fleet's model latency on the virtual clock.
import http from 'node:http';
import { sleepVirtual } from './clock.js';
import { AgentGaveUpError } from './fleet.js';

// startFakeOpenAI listens on a free local port and returns the server: origin
// (http://127.0.0.1:PORT) and close(); runsById maps the x-run-id header to the fleet's run.
// toolName maps a fleet tool to the name the client gave the model for it (a library that
// rewrites tool names, as the OpenAI Agents SDK does, is called by the name it sent).
// finalTool, when given, names the tool through which a library's agent gives its final
// answer (BeeAI's `final_answer`, arguments `{"response": text}`): the final answer and a
// give-up are then a call of that tool rather than a text message (chat completions only).
export async function startFakeOpenAI(fleet, runsById, { toolName = (name) => name, finalTool = null } = {}) {
  const fake = http.createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      const run = runsById.get(req.headers['x-run-id']);
      await sleepVirtual(fleet.modelLatency(run));
      const action = fleet.nextAction(run);
      const t = fleet.tokens(run);
      const model = run.kind === 'subagent' ? 'gpt-4.1-mini-2025-04-14' : 'gpt-4.1-2025-04-14';
      if (req.url === '/v1/responses') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(responsesAnswer(run, action, t, model, toolName)));
        return;
      }
      let message;
      let finish = 'stop';
      if (action.type === 'tool') {
        run.pending = action;
        finish = 'tool_calls';
        message = { role: 'assistant', content: null, tool_calls: [{ id: action.toolCallId, type: 'function', function: { name: toolName(action.tool), arguments: JSON.stringify({ q: run.investigation }) } }] };
      } else if (finalTool) {
        finish = 'tool_calls';
        const text = action.type === 'final' ? action.text : `I could not finish: ${action.reason}`;
        message = { role: 'assistant', content: null, tool_calls: [{ id: `call_${run.r.hex(24)}`, type: 'function', function: { name: finalTool, arguments: JSON.stringify({ response: text }) } }] };
      } else {
        message = { role: 'assistant', content: action.type === 'final' ? action.text : `I could not finish: ${action.reason}` };
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        id: `chatcmpl-${run.r.hex(24)}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [{ index: 0, message, finish_reason: finish }],
        usage: { prompt_tokens: t.input, completion_tokens: t.output, total_tokens: t.input + t.output },
      }));
    });
  });
  return listenLocal(fake);
}

// listenLocal starts a fake server on a free local port and returns { origin, close() }.
export async function listenLocal(server) {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { origin: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

// responsesAnswer: the step as a Responses API object (one function_call item, or one
// assistant message); usage in the Responses names (input_tokens, output_tokens).
function responsesAnswer(run, action, t, model, toolName) {
  const id = run.r.hex(24);
  let item;
  if (action.type === 'tool') {
    run.pending = action;
    item = { type: 'function_call', id: `fc_${id}`, call_id: action.toolCallId, name: toolName(action.tool), arguments: JSON.stringify({ q: run.investigation }), status: 'completed' };
  } else {
    const text = action.type === 'final' ? action.text : `I could not finish: ${action.reason}`;
    item = { type: 'message', id: `msg_${id}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
  }
  return {
    id: `resp_${id}`,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    model,
    output: [item],
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage: {
      input_tokens: t.input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: t.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: t.input + t.output,
    },
  };
}


export const TOOLS = ['WebSearch', 'Bash', 'docs/search', 'mcp.github.create_issue', 'Task'].map((name) => ({
  type: 'function',
  function: { name, description: `${name} tool`, parameters: { type: 'object', properties: { q: { type: 'string' } } } },
}));

// agentLoop is one run's agent loop with the OpenAI client: a model call at each step (the
// fake server answers with the fleet's step), then each tool call it asks for through
// callTool(call), which wraps the fleet's attempt in the library's own tool span and
// returns its result; a failed call is reported to the model as "Error: ...". It ends the
// fleet's run, completed or failed (a run the fleet aborted throws AgentGaveUpError).
export async function agentLoop({ fleet, client, run, callTool }) {
  const messages = [
    { role: 'system', content: 'You are an incident investigation agent.' },
    { role: 'user', content: `Investigate ${run.investigation}` },
  ];
  try {
    for (let step = 0; step < 40; step++) {
      const resp = await client.chat.completions.create(
        { model: run.kind === 'subagent' ? 'gpt-4.1-mini' : 'gpt-4.1', messages, tools: TOOLS },
        { headers: { 'x-run-id': run.runId } },
      );
      const msg = resp.choices[0].message;
      messages.push(msg);
      if (run.aborted) throw new AgentGaveUpError(run.aborted);
      if (!msg.tool_calls?.length) {
        fleet.endRun(run, 'completed');
        return msg.content;
      }
      for (const call of msg.tool_calls) {
        let content;
        try {
          content = JSON.stringify(await callTool(call));
        } catch (e) {
          content = `Error: ${e.message}`;
        }
        messages.push({ role: 'tool', tool_call_id: call.id, content });
      }
    }
    fleet.endRun(run, 'completed');
  } catch (e) {
    fleet.endRun(run, 'failed');
    throw e;
  }
}

// guardFetch lets fetch reach only the fake model server at origin, each request carrying
// the run it belongs to (x-run-id, from the fleet's async context) so that the server
// answers with that run's scripted step; it returns the addresses it refused. With no
// origin it refuses every request (refuseFetch).
export function guardFetch(fleet, origin = null) {
  const realFetch = globalThis.fetch;
  const refused = [];
  globalThis.fetch = (input, init = {}) => {
    const url = String(input?.url ?? input);
    if (origin === null || !url.startsWith(origin + '/')) {
      refused.push(url);
      return Promise.reject(new TypeError(`capture: no network (${url})`));
    }
    const run = fleet.als.getStore()?.run;
    const headers = new Headers(init.headers ?? input?.headers);
    if (run) headers.set('x-run-id', run.runId);
    return realFetch(input, { ...init, headers });
  };
  return refused;
}

// refuseFetch: no network at all through fetch (for a capture whose model is in-process; the
// OTLP exporters use node:http). It returns the addresses it refused.
export function refuseFetch() {
  return guardFetch(null);
}
