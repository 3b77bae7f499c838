// Virtual clock: every clock the libraries read (Date.now, new Date(), performance.now)
// runs `scale` times faster than the wall clock and starts at `t0Ms` (Unix ms), so a fleet
// hour passes in 3600/scale real seconds and the spans carry real-looking timestamps.
// Install it before the first span is made; sleeps (setTimeout) stay real, so a sleep of
// v virtual milliseconds is v/scale real milliseconds (see sleepVirtual).
import { performance } from 'node:perf_hooks';

const RealDate = globalThis.Date;
const realPerfNow = performance.now.bind(performance);

let state = null;

export function installClock({ t0Ms, scale }) {
  const p0 = realPerfNow();
  state = { t0Ms, scale, p0 };
  const vnow = () => t0Ms + (realPerfNow() - p0) * scale;
  class VirtualDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(vnow());
      else super(...args);
    }
    static now() {
      return Math.floor(vnow());
    }
  }
  globalThis.Date = VirtualDate;
  const origin = performance.timeOrigin;
  performance.now = () => vnow() - origin;
  // event-loop lag monitor: how late a 20 ms timer fires, the jitter every timestamp has
  state.maxLagMs = 0;
  state.lags = [];
  let last = realPerfNow();
  const timer = setInterval(() => {
    const t = realPerfNow();
    const lag = t - last - 20;
    last = t;
    state.lags.push(lag);
    if (lag > state.maxLagMs) state.maxLagMs = lag;
  }, 20);
  timer.unref();
  return state;
}

// nowNs: the virtual instant in Unix nanoseconds (as a BigInt), the unit of the truth.
// resetLag forgets the lag measured so far (module loading at start is not fleet time).
export function resetLag() {
  state.lags = [];
  state.maxLagMs = 0;
}

export function nowNs() {
  const ms = state.t0Ms + (realPerfNow() - state.p0) * state.scale;
  return BigInt(Math.round(ms * 1e6));
}

export function nowMs() {
  return state.t0Ms + (realPerfNow() - state.p0) * state.scale;
}

export function sleepVirtual(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms / state.scale));
}

export function clockInfo() {
  const lags = [...state.lags].sort((a, b) => a - b);
  const q = (f) => (lags.length ? Math.max(0, lags[Math.floor(f * (lags.length - 1))]) : 0);
  return {
    t0_unix_ms: state.t0Ms,
    t0: new RealDate(state.t0Ms).toISOString(),
    scale: state.scale,
    // event-loop lag of the capture, in virtual seconds (wall lag x scale)
    event_loop_lag_virtual_s: { p50: (q(0.5) * state.scale) / 1000, p99: (q(0.99) * state.scale) / 1000, max: (state.maxLagMs * state.scale) / 1000 },
  };
}
