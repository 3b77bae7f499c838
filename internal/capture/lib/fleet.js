// A scripted agent fleet with known parameters, independent of the agent library that
// runs it: arrivals, each run's plan (which tools in which order, whether it spawns a
// sub-agent), every tool attempt's latency and outcome, the agent's retry policy, the
// outage window, and the truth written as the fleet runs.
import { AsyncLocalStorage } from 'node:async_hooks';
import { rng } from './prng.js';
import { nowNs, nowMs, sleepVirtual, clockInfo, resetLag } from './clock.js';

export const TOOL_PARAMS = {
  // latencies in virtual seconds: success ~ lognormal(median, sigma); a timeout waits
  // `timeout` then fails; a transient failure (503) ~ lognormal(0.4 s, 0.5)
  WebSearch: { median: 12, sigma: 0.25, timeout: 30, p_transient: 0.06, p_timeout: 0.04, p_policy: 0 },
  Bash: { median: 2.5, sigma: 0.8, timeout: 20, p_transient: 0.04, p_timeout: 0.03, p_policy: 0.03 },
  'docs/search': { median: 0.8, sigma: 0.5, timeout: 10, p_transient: 0.03, p_timeout: 0.01, p_policy: 0 },
  'mcp.github.create_issue': { median: 1.6, sigma: 0.4, timeout: 15, p_transient: 0.08, p_timeout: 0.02, p_policy: 0 },
};

export const DEFAULTS = {
  arrival_minutes: 60, // investigations arrive as a Poisson process over this many virtual minutes
  max_attempts: 3, // an agent calls a failed tool again at its next step, up to this many attempts
  p_abort_on_give_up: 0.5, // after the last failed attempt: the run is aborted (fails), else it answers without the tool
  p_subagent: 0.15, // an investigation spawns one sub-agent (a Task tool call) with this probability
  p_drop_top_span: 0.03, // the top span of an investigation is never sent (missing parent)
  ops_min: 2,
  ops_max: 5,
  tool_weights: [['WebSearch', 0.35], ['Bash', 0.3], ['docs/search', 0.2], ['mcp.github.create_issue', 0.15]],
  subagent_tools: [['WebSearch', 0.5], ['docs/search', 0.3], ['Bash', 0.2]],
  model: { median: 1.8, sigma: 0.4 }, // model call latency, virtual seconds
  transient: { median: 0.4, sigma: 0.5 },
  outage_fail: { median: 0.3, sigma: 0.4 },
  tools: TOOL_PARAMS,
};

function hashSeed(seed, s) {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x9e3779b1) >>> 0;
  return h;
}

const ns = (b) => b.toString();

export class Fleet {
  // services: [{ name, prefix, investigations }]; outages: [{ tool, start_min, end_min }]
  constructor({ fixture, seed, services, outages, params = {} }) {
    this.fixture = fixture;
    this.seed = seed;
    this.services = services;
    this.params = { ...DEFAULTS, ...params };
    this.outagesMin = outages;
    this.als = new AsyncLocalStorage();
    this.runs = [];
    this.attempts = [];
    this.operations = new Map();
    this.planInvestigations();
  }

  planInvestigations() {
    const p = this.params;
    this.investigations = [];
    for (const svc of this.services) {
      const r = rng(hashSeed(this.seed, svc.name));
      // n arrivals of a Poisson process conditioned on n: uniform times, sorted
      const times = Array.from({ length: svc.investigations }, () => r.next() * p.arrival_minutes * 60).sort((a, b) => a - b);
      times.forEach((t, i) => {
        const id = `${svc.prefix}-${String(i + 1).padStart(4, '0')}`;
        this.investigations.push({ id, service: svc.name, arrival_s: t });
      });
    }
    this.investigations.sort((a, b) => a.arrival_s - b.arrival_s);
  }

  // newRun draws a run's plan from its own stream, so concurrency does not change the draw.
  newRun({ investigation, service, parent = null, runId }) {
    const p = this.params;
    const r = rng(hashSeed(this.seed, runId));
    const nOps = parent ? r.int(1, 3) : r.int(p.ops_min, p.ops_max);
    const weights = parent ? p.subagent_tools : p.tool_weights;
    const ops = [];
    for (let i = 0; i < nOps; i++) ops.push({ tool: r.pick(weights) });
    if (!parent && r.next() < p.p_subagent) {
      ops.splice(r.int(0, Math.max(0, ops.length - 1)), 0, { tool: 'Task' });
    }
    const run = {
      runId,
      investigation,
      service,
      parent,
      kind: parent ? 'subagent' : 'investigation',
      r,
      ops,
      i: 0,
      attempt: 0,
      last: null, // outcome of the last attempt of the current op
      abortOnGiveUp: !parent && r.next() < p.p_abort_on_give_up,
      dropTop: !parent && r.next() < p.p_drop_top_span,
      aborted: null,
      subagents: 0,
      step: 0,
      start: nowNs(),
      end: null,
      outcome: null,
    };
    this.runs.push(run);
    return run;
  }

  endRun(run, outcome) {
    run.end = nowNs();
    run.outcome = outcome;
  }

  // track runs fn, the agent run of run, and ends run completed, or failed when fn throws
  // (rethrown).
  async track(run, fn) {
    try {
      const out = await fn();
      this.endRun(run, 'completed');
      return out;
    } catch (e) {
      this.endRun(run, 'failed');
      throw e;
    }
  }

  // runSubagent runs fn as the sub-agent run child (made by attempt for a Task call): in the
  // child's async context, ended completed, or failed when fn throws (track). runsById, when
  // given, maps the child's run id to it first (for a fake model server that answers by
  // x-run-id).
  // attemptPending is the attempt of the run's pending action, called by a library's tool
  // with the call id the library gave it (checked against the scripted one when it gives
  // one); runSubagent runs a Task's sub-agent (by default there is none).
  attemptPending(run, callId, runSubagent = () => Promise.reject(new Error('no sub-agent'))) {
    const action = run.pending;
    if (callId && callId !== action.toolCallId) throw new Error(`scripted call ${action.toolCallId} != ${callId}`);
    return this.attempt(run, action, runSubagent);
  }

  runSubagent(child, fn, runsById = null) {
    return this.als.run({ run: child }, () => {
      runsById?.set(child.runId, child);
      return this.track(child, fn);
    });
  }

  opId(run) {
    return `${run.runId}/op${run.i + 1}`;
  }

  // nextAction: the scripted model's decision at a step, from the run's plan and the
  // outcome of its last tool attempt. Returns { type: 'tool', tool, opId, attempt },
  // { type: 'final', text } or { type: 'abort', reason }.
  nextAction(run) {
    const p = this.params;
    run.step++;
    if (run.last) {
      const { status, failure_class: cls } = run.last;
      const op = this.operations.get(this.opId(run));
      if (status === 'ok') {
        op.outcome = op.first_failed ? 'recovered' : 'succeeded';
        run.i++;
        run.attempt = 0;
      } else if (cls === 'policy_violation') {
        op.outcome = 'refused'; // a refusal is not retried: the agent moves on
        run.i++;
        run.attempt = 0;
      } else if (run.attempt < p.max_attempts) {
        // retry at this step: a new tool call of the same operation
      } else {
        op.outcome = 'gave_up';
        if (run.abortOnGiveUp) {
          run.aborted = `gave up: ${op.tool} failed ${run.attempt} times`;
          return { type: 'abort', reason: run.aborted };
        }
        run.i++;
        run.attempt = 0;
      }
      run.last = null;
    }
    if (run.i >= run.ops.length) {
      return { type: 'final', text: `Investigation ${run.investigation}: findings summarised.` };
    }
    const tool = run.ops[run.i].tool;
    run.attempt++;
    const opId = this.opId(run);
    if (!this.operations.has(opId)) {
      this.operations.set(opId, {
        op_id: opId,
        run_id: run.runId,
        investigation: run.investigation,
        service: run.service,
        tool,
        attempts: 0,
        first_failed: false,
        outcome: 'in_flight',
      });
    }
    return { type: 'tool', tool, opId, attempt: run.attempt, toolCallId: `call_${run.r.hex(24)}` };
  }

  modelLatency(run) {
    return run.r.lognormal(this.params.model.median, this.params.model.sigma) * 1000;
  }

  tokens(run) {
    return { input: 900 + 350 * run.step + run.r.int(0, 200), output: run.r.int(40, 220) };
  }

  inOutage(tool, ms) {
    const t0 = clockInfo().t0_unix_ms;
    return this.outagesMin.some((o) => o.tool === tool && ms >= t0 + o.start_min * 60e3 && ms < t0 + o.end_min * 60e3);
  }

  // attempt runs one tool attempt of run: it waits the drawn latency and returns the
  // tool's output or throws the drawn error. Every attempt is written to the truth.
  async attempt(run, { tool, opId, attempt, toolCallId }, runSubagent) {
    const p = this.params;
    const r = run.r;
    const start = nowNs();
    const rec = {
      investigation: run.investigation,
      run_id: run.runId,
      service: run.service,
      op_id: opId,
      tool,
      tool_call_id: toolCallId,
      attempt,
      start_unix_ns: null,
      end_unix_ns: null,
      status: null,
      failure_class: null,
      error: null,
      in_outage: false,
    };
    const op = this.operations.get(opId);
    op.attempts++;
    let outcome;
    let latency;
    if (tool === 'Task') {
      outcome = 'ok';
    } else if (this.inOutage(tool, nowMs())) {
      outcome = 'transient';
      rec.in_outage = true;
      latency = r.lognormal(p.outage_fail.median, p.outage_fail.sigma);
    } else {
      const tp = p.tools[tool];
      const u = r.next();
      if (u < tp.p_policy) {
        outcome = 'policy_violation';
        latency = 0.4;
      } else if (u < tp.p_policy + tp.p_timeout) {
        outcome = 'uncertain_completion';
        latency = tp.timeout;
      } else if (u < tp.p_policy + tp.p_timeout + tp.p_transient) {
        outcome = 'transient';
        latency = r.lognormal(p.transient.median, p.transient.sigma);
      } else {
        outcome = 'ok';
        latency = r.lognormal(tp.median, tp.sigma);
      }
    }
    let result;
    let error = null;
    if (tool === 'Task') {
      const child = this.newRun({ investigation: run.investigation, service: run.service, parent: run.runId, runId: `${run.runId}.sub${++run.subagents}` });
      result = await runSubagent(child);
    } else {
      await sleepVirtual(latency * 1000);
      if (outcome === 'ok') {
        result = this.toolOutput(tool, r);
      } else if (outcome === 'transient') {
        error = new Error('503 Service Unavailable');
      } else if (outcome === 'uncertain_completion') {
        error = new Error(`${tool} timed out after ${p.tools[tool].timeout * 1000} ms`);
        error.name = 'TimeoutError';
      } else {
        error = new Error('policy refusal: this command is not allowed by the sandbox policy');
        error.name = 'PolicyViolationError';
      }
    }
    const end = nowNs();
    rec.start_unix_ns = ns(start);
    rec.end_unix_ns = ns(end);
    rec.status = outcome === 'ok' ? 'ok' : outcome === 'uncertain_completion' ? 'timeout' : 'error';
    rec.failure_class = outcome === 'ok' ? null : outcome;
    rec.error = error ? `${error.name}: ${error.message}` : null;
    if (attempt === 1 && error) op.first_failed = true;
    this.attempts.push(rec);
    run.last = rec;
    if (error) throw error;
    return result;
  }

  toolOutput(tool, r) {
    switch (tool) {
      case 'WebSearch':
        return { results: [{ title: 'Postmortem: elevated 5xx on checkout', url: `https://status.example.com/incidents/${r.hex(8)}` }] };
      case 'Bash':
        return { exit_code: 0, stdout: `pod/checkout-${r.hex(5)} Running\n` };
      case 'docs/search':
        return { hits: 3, top: 'runbooks/checkout.md#rollback' };
      case 'mcp.github.create_issue':
        return { number: r.int(1000, 9999), url: 'https://github.com/acme/checkout/issues/' };
      default:
        return {};
    }
  }

  // fleet run helper: start each investigation at its arrival (virtual) and wait for all
  async runAll(runInvestigation, { concurrencyLog = false } = {}) {
    const all = [];
    resetLag();
    for (const inv of this.investigations) {
      const t = clockInfo().t0_unix_ms + inv.arrival_s * 1000;
      const wait = t - nowMs();
      if (wait > 0) await sleepVirtual(wait);
      const run = this.newRun({ investigation: inv.id, service: inv.service, runId: inv.id });
      all.push(
        this.als.run({ run }, () => runInvestigation(run)).catch((e) => {
          if (concurrencyLog) console.error(inv.id, e.message);
        }),
      );
    }
    await Promise.all(all);
  }

  truth({ library, spans }) {
    const attempts = [...this.attempts].sort((a, b) => (BigInt(a.start_unix_ns) < BigInt(b.start_unix_ns) ? -1 : 1));
    const ops = [...this.operations.values()];
    const runs = this.runs.map((r) => ({
      run_id: r.runId,
      investigation: r.investigation,
      service: r.service,
      kind: r.kind,
      parent_run: r.parent,
      start_unix_ns: ns(r.start),
      end_unix_ns: r.end ? ns(r.end) : null,
      outcome: r.outcome,
      top_span_dropped: r.dropTop,
      tools_planned: r.ops.map((o) => o.tool),
    }));
    const t0 = clockInfo();
    const summarise = (filter) => {
      const a = attempts.filter(filter);
      const o = ops.filter(filter);
      const rs = runs.filter(filter);
      const episodes = o.filter((x) => x.first_failed);
      const perClass = {};
      for (const x of a) if (x.failure_class) perClass[x.failure_class] = (perClass[x.failure_class] ?? 0) + 1;
      const oNoTask = o.filter((x) => x.tool !== 'Task');
      const aNoTask = a.filter((x) => x.tool !== 'Task');
      return {
        investigations: rs.filter((x) => x.kind === 'investigation').length,
        investigations_completed: rs.filter((x) => x.kind === 'investigation' && x.outcome === 'completed').length,
        investigations_failed: rs.filter((x) => x.kind === 'investigation' && x.outcome === 'failed').length,
        subagents: rs.filter((x) => x.kind === 'subagent').length,
        top_spans_dropped: rs.filter((x) => x.top_span_dropped).length,
        attempts: a.length,
        operations: o.length,
        retry_amplification: o.length ? a.length / o.length : null,
        retry_amplification_without_task: oNoTask.length ? aNoTask.length / oNoTask.length : null,
        recovery_episodes: episodes.length,
        episodes_recovered: episodes.filter((x) => x.outcome === 'recovered').length,
        episodes_gave_up: episodes.filter((x) => x.outcome === 'gave_up').length,
        episodes_refused: episodes.filter((x) => x.outcome === 'refused').length,
        failed_attempts: a.filter((x) => x.status !== 'ok').length,
        failures_per_class: perClass,
        outage_attempts: a.filter((x) => x.in_outage).length,
      };
    };
    const perService = {};
    for (const s of this.services) perService[s.name] = summarise((x) => x.service === s.name);
    return {
      fixture: this.fixture,
      library,
      clock: {
        t0: t0.t0,
        t0_unix_ns: ns(BigInt(t0.t0_unix_ms) * 1000000n),
        scale: t0.scale,
        event_loop_lag_virtual_s: t0.event_loop_lag_virtual_s,
        note: 'virtual time = t0 + scale x wall-clock time since the start; every timestamp below and in the spans is virtual',
      },
      seed: this.seed,
      params: { ...this.params, services: this.services },
      outages: this.outagesMin.map((o) => ({
        tool: o.tool,
        services: 'all',
        start_unix_ns: ns(BigInt(t0.t0_unix_ms + o.start_min * 60e3) * 1000000n),
        end_unix_ns: ns(BigInt(t0.t0_unix_ms + o.end_min * 60e3) * 1000000n),
        start: new Date(t0.t0_unix_ms + o.start_min * 60e3).toISOString(),
        end: new Date(t0.t0_unix_ms + o.end_min * 60e3).toISOString(),
      })),
      spans,
      summary: summarise(() => true),
      per_service: perService,
      runs,
      operations: ops,
      retry_chains: ops.filter((o) => o.attempts > 1).map((o) => ({
        op_id: o.op_id,
        tool: o.tool,
        attempts: attempts.filter((a) => a.op_id === o.op_id).map((a) => ({ tool_call_id: a.tool_call_id, attempt: a.attempt, status: a.status, failure_class: a.failure_class })),
        outcome: o.outcome,
      })),
      attempts,
    };
  }
}

// toolInput is the arguments the scripted model gives a call of the fleet's tool name in run
// (every attempt of a run's calls of one tool has the same; a Task call starts a sub-agent).
export function toolInput(name, run) {
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

// toolSchemas is the fleet's tools' arguments (those toolInput gives) as zod object schemas,
// made with the z a script imports (the libraries want different zod versions).
export function toolSchemas(z) {
  return {
    WebSearch: z.object({ query: z.string() }),
    Bash: z.object({ command: z.string() }),
    'docs/search': z.object({ query: z.string() }),
    'mcp.github.create_issue': z.object({ repo: z.string(), title: z.string() }),
    Task: z.object({ description: z.string(), subagent_type: z.string() }),
  };
}

// AgentGaveUpError is what a scripted model throws when the fleet's run gives up.
export class AgentGaveUpError extends Error {
  constructor(msg) {
    super(msg);
    this.name = 'AgentGaveUpError';
  }
}
