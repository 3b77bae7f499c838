// Shared driver scaffolding: clock, receiver, providers, the top-span dropper, and the
// final accounting (spans ended == spans received) and files.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installClock } from './clock.js';
import { startReceiver, makeProviders, assemble } from './capture.js';
import { Fleet } from './fleet.js';

export const HERE = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
// CAPTURE_FIXTURES writes the fixtures elsewhere (to try a capture without touching the repo)
export const FIXTURES = process.env.CAPTURE_FIXTURES ?? path.resolve(HERE, '../../analysis/testdata/libraries');

export function versions(names) {
  const out = {};
  for (const n of names) {
    const [alias, real] = n.split('=');
    const pkg = JSON.parse(fs.readFileSync(path.join(HERE, 'node_modules', alias, 'package.json'), 'utf8'));
    out[real ?? alias] = pkg.version;
  }
  out.node = process.version;
  return out;
}

// topSpanDropper marks, as its spans start, the top span (no parent) of each run the fleet
// marked dropTop, and drop(span) says whether a span is one: the span is ended but never
// sent, so its children arrive with a parent that never comes. Spans are known by their
// span id, since a library's own processor may hand the exporter other span objects.
// hasParent(span) says whether a span has a parent (sdk-trace-base 2.x spans carry
// parentSpanContext; a library's 1.x copy gives parentSpanId instead).
export function topSpanDropper(fleetOf, hasParent = (span) => span.parentSpanContext) {
  const marked = new Set();
  return {
    onStart(span) {
      const run = fleetOf()?.als.getStore()?.run;
      if (run?.dropTop && !hasParent(span) && !run.topMarked) {
        run.topMarked = true;
        marked.add(span.spanContext().spanId);
      }
    },
    drop: (span) => marked.has(span.spanContext().spanId),
  };
}

// setup starts the clock and the receiver and makes the providers. fleet.als carries the
// current run; the top span (no parent) of a run marked dropTop is ended but never sent.
// dropAtEnd(span, fleet), when given, decides instead at the span's end (for libraries that
// start spans outside the run's async context, such as LangChain's callback handlers).
// makeProcessor(exporter), when given, is each provider's span processor (see makeProviders).
export async function setup({ fixture, t0, scale, encoding, services, fleetRef, resourceExtra, dropAtEnd, makeProcessor }) {
  installClock({ t0Ms: Date.parse(t0), scale });
  const rawDir = path.join(HERE, 'out', path.basename(fixture)); // a fixture named by a path (an unmapped one) still writes its raw bodies under out/
  const receiver = await startReceiver(rawDir);
  const top = topSpanDropper(() => fleetRef.fleet);
  const dropper = dropAtEnd
    ? { onStart() {}, drop: (span) => dropAtEnd(span, fleetRef.fleet) }
    : top;
  const tel = makeProviders({ url: receiver.url, encoding, services, dropper, resourceExtra, makeProcessor });
  return { receiver, tel, rawDir };
}

// clearOtlpEnv removes the OTLP endpoint variables, so that no library exporter sends
// anywhere but where the capture tells it (startCapture and startOwnCapture call it before
// the script imports its library).
export function clearOtlpEnv() {
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
}

// startCapture starts a capture from its CONFIG (fixture, t0, encoding, services, seed,
// outages) at the virtual clock's scale: the receiver, the providers (setup; extra adds
// setup's options, as resourceExtra, dropAtEnd or makeProcessor) and the fleet.
export async function startCapture(CONFIG, scale, extra = {}) {
  clearOtlpEnv();
  const fleetRef = {};
  const cap = await setup({
    fixture: CONFIG.fixture,
    t0: CONFIG.t0,
    scale,
    encoding: CONFIG.encoding,
    services: CONFIG.services.map((s) => s.name),
    fleetRef,
    ...extra,
  });
  const fleet = new Fleet({ fixture: CONFIG.fixture, seed: CONFIG.seed, services: CONFIG.services, outages: CONFIG.outages });
  fleetRef.fleet = fleet;
  return { ...cap, fleet };
}

// startOwnCapture starts a capture from its CONFIG for a library that brings its own tracer
// provider or span processor (the capture makes none): the virtual clock at scale, the
// receiver (its raw bodies under out/) and the fleet. It returns what finishCapture takes but
// tel, which the script makes around the library's processor.
export async function startOwnCapture(CONFIG, scale) {
  clearOtlpEnv();
  installClock({ t0Ms: Date.parse(CONFIG.t0), scale });
  const rawDir = path.join(HERE, 'out', path.basename(CONFIG.fixture));
  const receiver = await startReceiver(rawDir);
  const fleet = new Fleet({ fixture: CONFIG.fixture, seed: CONFIG.seed, services: CONFIG.services, outages: CONFIG.outages });
  return { receiver, rawDir, fleet };
}

// ownTel is the tel (for finishCapture) of a capture whose library owns its span processor:
// the counters of the counting wrapper around it, and the library's shutdown, the steps
// (functions, each awaited) in order.
export function ownTel(counters, ...shutdownSteps) {
  return {
    counters,
    shutdown: async () => {
      for (const step of shutdownSteps) await step();
    },
  };
}

// finishCapture ends a capture started by startCapture (or startOwnCapture, with its tel): the gzipped trace file and the
// truth in the fixture's folder, with the library's versions.
export async function finishCapture(CONFIG, { fleet, receiver, tel, rawDir }, library) {
  await finish({ fixture: CONFIG.fixture, fleet, receiver, tel, rawDir, file: CONFIG.file, gzip: true, library });
}

export async function finish({ fixture, fleet, receiver, tel, rawDir, library, file, gzip }) {
  await tel.shutdown();
  await new Promise((r) => setTimeout(r, 200));
  await receiver.close();
  const spans = {
    ended: tel.counters.ended,
    dropped_top_spans: tel.counters.dropped,
    received: receiver.stats.spans,
    requests: receiver.stats.requests,
  };
  const out = path.join(FIXTURES, fixture);
  fs.mkdirSync(out, { recursive: true });
  const written = assemble(rawDir, receiver.stats.files, path.join(out, file), { gzip });
  const truth = fleet.truth({ library, spans });
  truth.file = file;
  fs.writeFileSync(path.join(out, 'truth.json'), JSON.stringify(truth, null, 1) + '\n');
  const size = fs.statSync(written).size;
  console.log(JSON.stringify({ fixture, file: written, bytes: size, spans, summary: truth.summary }, null, 1));
  if (spans.ended !== spans.received) {
    console.error(`spans ended ${spans.ended} != received ${spans.received}`);
    process.exit(1);
  }
}
