// A fake Anthropic Messages API server for the drivers that call the official Anthropic SDK
// (@anthropic-ai/sdk): POST /v1/messages answers each request with the fleet's scripted step
// for the run its x-run-id header names (guardFetch of lib/openai.js sets it), after the
// fleet's model latency on the virtual clock. A tool step is one `tool_use` content block
// whose id is the fleet's tool call id (stop_reason `tool_use`); the final answer, and a
// give-up's last answer, is one `text` block (stop_reason `end_turn`). No streaming.
import http from 'node:http';
import { sleepVirtual } from './clock.js';
import { toolInput } from './fleet.js';
import { listenLocal } from './openai.js';

export const CLAUDE_MODELS = {
  // request name -> the dated name the API answers with
  'claude-sonnet-4-5': 'claude-sonnet-4-5-20250929',
  'claude-haiku-4-5': 'claude-haiku-4-5-20251001',
};

// startFakeAnthropic listens on a free local port and returns { origin, close() }; runsById
// maps the x-run-id header to the fleet's run. toolName maps a fleet tool to the name the
// client declared for it (the API allows letters, digits, `_` and `-` only). The response
// model is the dated name of the requested model. Each response carries a `request-id`
// header, as the API's do.
export async function startFakeAnthropic(fleet, runsById, { toolName = (name) => name } = {}) {
  const fake = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      if (req.method !== 'POST' || !req.url.startsWith('/v1/messages')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `no route ${req.url}` } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const run = runsById.get(req.headers['x-run-id']);
      if (!run) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'capture: request without a known x-run-id' } }));
        return;
      }
      await sleepVirtual(fleet.modelLatency(run));
      const action = fleet.nextAction(run);
      const t = fleet.tokens(run);
      let content;
      let stop;
      if (action.type === 'tool') {
        run.pending = action;
        stop = 'tool_use';
        content = [{ type: 'tool_use', id: action.toolCallId, name: toolName(action.tool), input: toolInput(action.tool, run) }];
      } else {
        stop = 'end_turn';
        const text = action.type === 'final' ? action.text : `I could not finish: ${action.reason}`;
        content = [{ type: 'text', text }];
      }
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${run.r.hex(24)}` });
      res.end(JSON.stringify({
        id: `msg_${run.r.hex(24)}`,
        type: 'message',
        role: 'assistant',
        model: CLAUDE_MODELS[body.model] ?? body.model,
        content,
        stop_reason: stop,
        stop_sequence: null,
        usage: {
          input_tokens: t.input,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: t.output,
          service_tier: 'standard',
        },
      }));
    });
  });
  return listenLocal(fake);
}
