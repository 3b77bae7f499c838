// The capture loop: a local OTLP/HTTP receiver that stores every POST body to /v1/traces
// unchanged, tracer providers (one per service.name) exporting to it through the official
// OTLP/HTTP exporters, and span accounting (spans ended against spans received).
import http from 'node:http';
import { diag, DiagConsoleLogger, DiagLogLevel } from '@opentelemetry/api';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';

// --- a minimal protobuf walker, enough to count the spans of an ExportTraceServiceRequest
function readVarint(buf, pos) {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const b = buf[pos++];
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [result, pos];
    shift += 7n;
  }
}
function fields(buf) {
  const out = [];
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = readVarint(buf, pos);
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      [, pos] = readVarint(buf, pos);
    } else if (wire === 1) {
      pos += 8;
    } else if (wire === 5) {
      pos += 4;
    } else if (wire === 2) {
      let len;
      [len, pos] = readVarint(buf, pos);
      out.push([field, buf.subarray(pos, pos + Number(len))]);
      pos += Number(len);
    } else {
      throw new Error(`unexpected wire type ${wire}`);
    }
  }
  return out;
}
export function countProtoSpans(buf) {
  let n = 0;
  for (const [f1, rs] of fields(buf)) {
    if (f1 !== 1) continue;
    for (const [f2, ss] of fields(rs)) {
      if (f2 !== 2) continue;
      for (const [f3] of fields(ss)) if (f3 === 2) n++;
    }
  }
  return n;
}
export function countJsonSpans(body) {
  const req = JSON.parse(body);
  let n = 0;
  for (const rs of req.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) n += (ss.spans ?? []).length;
  return n;
}

// startReceiver: listens on 127.0.0.1 (a free port) and writes req-N.pb / req-N.json.
export async function startReceiver(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const stats = { requests: 0, spans: 0, files: [] };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = zlib.gunzipSync(body);
      const isJson = (req.headers['content-type'] ?? '').includes('json');
      const name = `req-${String(stats.requests).padStart(5, '0')}.${isJson ? 'json' : 'pb'}`;
      stats.requests++;
      stats.spans += isJson ? countJsonSpans(body.toString('utf8')) : countProtoSpans(body);
      fs.writeFileSync(path.join(dir, name), body);
      stats.files.push(name);
      res.writeHead(200, { 'content-type': isJson ? 'application/json' : 'application/x-protobuf' });
      res.end(isJson ? '{}' : Buffer.alloc(0));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/v1/traces`;
  return { url, stats, close: () => new Promise((resolve) => server.close(resolve)) };
}

// Accounting wraps the batch processor: it counts the spans ended and drops the spans a
// fleet chose to lose (the top span of a run whose parent never arrives).
export class Accounting {
  constructor(inner, counters, dropper) {
    this.inner = inner;
    this.counters = counters;
    this.dropper = dropper;
  }
  onStart(span, ctx) {
    this.dropper?.onStart(span, ctx);
    this.inner.onStart(span, ctx);
  }
  onEnd(span) {
    if (this.dropper?.drop(span)) {
      this.counters.dropped++;
      return;
    }
    this.counters.ended++;
    this.inner.onEnd(span);
  }
  forceFlush() {
    return this.inner.forceFlush();
  }
  shutdown() {
    return this.inner.shutdown();
  }
}

// BATCH is every capture's batch span processor: a queue large enough that no span is
// dropped (the default 2,048 drops spans silently), small batches sent every half second.
export const BATCH = {
  maxQueueSize: 1_000_000,
  maxExportBatchSize: 128,
  scheduledDelayMillis: 500,
  exportTimeoutMillis: 300_000,
};

// makeProviders: one provider per service, all exporting to url in the given encoding
// ('proto' or 'json'). The first provider is registered (global tracer and the
// AsyncLocalStorage context manager that carries the active span through awaits).
// makeProcessor(exporter), when given, makes each provider's processor instead of the
// BatchSpanProcessor (for a library that ships its own processor around the exporter; it
// should take BATCH as its queue settings); the counting wrapper still sits around it.
// exporter and processor troubles (a dropped batch, a failed export) are printed
diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.WARN);

export function makeProviders({ url, encoding, services, dropper = null, resourceExtra = {}, makeProcessor = null }) {
  const counters = { ended: 0, dropped: 0 };
  const providers = {};
  let first = true;
  for (const service of services) {
    // The exporter measures its deadline with Date.now(), which runs on the virtual clock:
    // a generous timeout keeps a scaled clock from expiring requests in flight.
    const opts = { url, timeoutMillis: 24 * 3600 * 1000 };
    const exporter = encoding === 'json' ? new JsonExporter(opts) : new ProtoExporter(opts);
    const bsp = makeProcessor ? makeProcessor(exporter) : new BatchSpanProcessor(exporter, BATCH);
    const provider = new NodeTracerProvider({
      resource: defaultResource().merge(resourceFromAttributes({
        'service.name': service,
        'service.version': '1.4.2',
        'deployment.environment.name': 'production',
        ...resourceExtra,
      })),
      spanProcessors: [new Accounting(bsp, counters, dropper)],
    });
    if (first) {
      provider.register();
      first = false;
    }
    providers[service] = provider;
  }
  return {
    counters,
    providers,
    tracer: (service, name = 'mayday-capture') => providers[service].getTracer(name),
    shutdown: async () => {
      for (const p of Object.values(providers)) await p.forceFlush();
      for (const p of Object.values(providers)) await p.shutdown();
    },
  };
}

function varint(n) {
  const out = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}

// assemble writes the received bodies as one fixture file: JSON lines (one request body
// per line) or length-delimited protobuf (each request after its varint length), gzipped
// when gzip is true. It returns the path written.
export function assemble(rawDir, files, outPath, { gzip }) {
  const parts = [];
  for (const name of files) {
    const body = fs.readFileSync(path.join(rawDir, name));
    if (name.endsWith('.json')) {
      const line = body.toString('utf8');
      if (line.includes('\n')) throw new Error(`${name}: a request body spans several lines`);
      parts.push(Buffer.from(line + '\n'));
    } else {
      parts.push(varint(body.length), body);
    }
  }
  let data = Buffer.concat(parts);
  if (gzip) data = zlib.gzipSync(data, { level: 9 });
  fs.mkdirSync(path.dirname(outPath), { recursive: true });
  fs.writeFileSync(outPath, data);
  return outPath;
}
