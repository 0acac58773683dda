/**
 * Ingestion bounds on `observatory dev` (legacy write mode, so every accepted span and event is
 * readable back at once through the public API), driven by the real OTel exporters and plain HTTP:
 * an export past a per-export limit is refused whole with a 4xx naming the limit, a span past a
 * per-span limit beside valid ones is left out and counted in OTLP's partial success, values the store would keep
 * as something else (times out of range, negative usage and cost) are refused naming the field,
 * a deeply nested body is a 400, and a body over the size limit gets a 413 the client can read.
 */

import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  exportTraceServiceRequestType,
  exportTraceServiceResponseType,
} from '../../server/features/otel/otlp-proto.ts';
import { type DevService, devAuth, startDev } from '../fixtures/dev.ts';
import { removeDirSync } from '../fixtures/processes.ts';
import { LEGACY_ENV } from '../fixtures/service.ts';

let dev: DevService;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'obs-ingest-limits-'));
  dev = await startDev(dataDir, { ...LEGACY_ENV });
});

afterAll(async () => {
  await dev?.stop();
  if (dataDir) removeDirSync(dataDir);
});

const OTLP = () => `${dev.url}/api/public/otel/v1/traces`;

/** The fields of the answers read here: the error message, and the 207 envelope of a batch. */
interface Answer {
  message: string;
  successes: { id: string; status: number }[];
  errors: { id: string; status: number; message: string; error?: string }[];
}

async function post(path: string, body: unknown): Promise<{ status: number; body: Answer }> {
  const res = await fetch(`${dev.url}${path}`, {
    method: 'POST',
    headers: { authorization: devAuth(dev), 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as Answer };
  } catch {
    return { status: res.status, body: { message: text, successes: [], errors: [] } };
  }
}

async function get(path: string): Promise<number> {
  const res = await fetch(`${dev.url}${path}`, {
    headers: { authorization: devAuth(dev) },
    signal: AbortSignal.timeout(30_000),
  });
  await res.arrayBuffer();
  return res.status;
}

/** One span exported by a real OTel exporter (the SDK's own limits raised, as producers do); its export result. */
async function exportSpan(
  kind: 'proto' | 'json',
  attributes: Record<string, string | number>,
  options: { startTime?: Date } = {},
): Promise<{ result: ExportResult; spanId: string }> {
  const options_ = { url: OTLP(), headers: { Authorization: devAuth(dev) }, timeoutMillis: 60_000 };
  const exporter = kind === 'proto' ? new OtlpProtoExporter(options_) : new OtlpJsonExporter(options_);
  let settled!: (r: ExportResult) => void;
  const result = new Promise<ExportResult>((resolve) => {
    settled = resolve;
  });
  const capturing: SpanExporter = {
    export: (spans: ReadableSpan[], done) =>
      exporter.export(spans, (r) => {
        settled(r);
        done(r);
      }),
    shutdown: () => exporter.shutdown(),
  };
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'ingest-limits' }),
    spanLimits: { attributeCountLimit: 1_000_000, attributeValueLengthLimit: Number.POSITIVE_INFINITY },
    spanProcessors: [new SimpleSpanProcessor(capturing)],
  });
  const span = provider.getTracer('limits').startSpan('big', {
    attributes,
    ...(options.startTime ? { startTime: options.startTime } : {}),
  });
  span.end(options.startTime);
  const spanId = span.spanContext().spanId;
  const r = await result;
  await provider.shutdown();
  return { result: r, spanId };
}

const manyAttributes = (n: number) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`attr.${i}`, `v${i}`]));

/** The HTTP status and body the exporter saw, from its error (OTLPExporterError carries both). */
const failure = (r: ExportResult) => r.error as (Error & { code?: number; data?: string }) | undefined;

describe('OTLP exports past a limit (or whose only span is) are refused whole, naming the limit', () => {
  it('a span with 100 000 attributes (issue 24, hole 1) is a 400 naming the attributes-per-span limit', async () => {
    const { result, spanId } = await exportSpan('proto', manyAttributes(100_000));
    expect(result.code).toBe(1);
    expect(failure(result)?.code).toBe(400);
    expect(failure(result)?.data).toContain('limit of 4096 attributes per span');
    expect(await get(`/api/public/observations/${spanId}`)).toBe(404);
  });

  it('a span at the limit of 4096 attributes is stored with every attribute', async () => {
    const { result, spanId } = await exportSpan('proto', manyAttributes(4096 - 1));
    expect(result.code).toBe(0);
    const res = await fetch(`${dev.url}/api/public/observations/${spanId}`, {
      headers: { authorization: devAuth(dev) },
    });
    const observation = (await res.json()) as { metadata: { attributes: unknown } };
    const stored = observation.metadata.attributes;
    expect(typeof stored === 'string' ? JSON.parse(stored) : stored).toEqual(manyAttributes(4096 - 1));
  });

  it('more than 8192 spans in one export is a 400 naming the spans-per-export limit', async () => {
    const spans = Array.from({ length: 8193 }, (_, i) => ({
      traceId: '1'.repeat(32),
      spanId: (i + 1).toString(16).padStart(16, '0'),
      name: 's',
      startTimeUnixNano: '1700000000000000000',
    }));
    const r = await post('/api/public/otel/v1/traces', { resourceSpans: [{ scopeSpans: [{ spans }] }] });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('limit of 8192 spans per export');
  });

  it('an attribute value longer than 4 MiB is a 400 naming the value limit', async () => {
    const { result } = await exportSpan('json', {
      'langfuse.observation.input': 'x'.repeat(4 * 1024 * 1024 + 1),
    });
    expect(failure(result)?.code).toBe(400);
    expect(failure(result)?.data).toContain('limit of 4194304 per attribute value');
  });

  it('attribute values nested 5000 deep are a 400 naming the nesting limit', async () => {
    // Written as text: a recursive JSON.stringify would run out of stack first.
    const value = `${'{"kvlistValue":{"values":[{"key":"k","value":'.repeat(5000)}{"stringValue":"leaf"}${'}]}}'.repeat(5000)}`;
    const span = `{"traceId":"${'2'.repeat(32)}","spanId":"${'2'.repeat(16)}","name":"deep","attributes":[{"key":"a","value":${value}}]}`;
    const r = await post(
      '/api/public/otel/v1/traces',
      `{"resourceSpans":[{"scopeSpans":[{"spans":[${span}]}]}]}`,
    );
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('limit of 128 levels');
  });
});

/** Spans made by the SDK and sent in one export by a real OTel exporter; the result and the span ids. */
async function exportTogether(
  kind: 'proto' | 'json',
  attributeSets: Record<string, string | number>[],
): Promise<{ result: ExportResult; spanIds: string[] }> {
  const options = { url: OTLP(), headers: { Authorization: devAuth(dev) }, timeoutMillis: 60_000 };
  const exporter = kind === 'proto' ? new OtlpProtoExporter(options) : new OtlpJsonExporter(options);
  const ended: ReadableSpan[] = [];
  const collecting: SpanExporter = {
    export: (spans, done) => {
      ended.push(...spans);
      done({ code: 0 });
    },
    shutdown: async () => {},
  };
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'ingest-limits' }),
    spanLimits: { attributeCountLimit: 1_000_000 },
    spanProcessors: [new SimpleSpanProcessor(collecting)],
  });
  const spanIds = attributeSets.map((attributes, i) => {
    const span = provider.getTracer('limits').startSpan(`partial-${i}`, { attributes });
    span.end();
    return span.spanContext().spanId;
  });
  const result = await new Promise<ExportResult>((resolve) => exporter.export(ended, resolve));
  await Promise.all([exporter.shutdown(), provider.shutdown()]);
  return { result, spanIds };
}

/** Two spans in one hand-built export, the first past the attributes-per-span limit. */
function mixedExport() {
  const ids = ['a1', 'a2'].map((p) => p.repeat(8));
  const attributes = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ key: `attr.${i}`, value: { stringValue: 'v' } }));
  const span = (spanId: string, n: number) => ({
    traceId: '3'.repeat(32),
    spanId,
    name: 'mixed',
    startTimeUnixNano: '1700000000000000000',
    attributes: attributes(n),
  });
  return {
    ids,
    body: { resourceSpans: [{ scopeSpans: [{ spans: [span(ids[0]!, 4097), span(ids[1]!, 3)] }] }] },
  };
}

describe('OTLP partial success: a span refused on its own leaves the others stored', () => {
  it.each(['proto', 'json'] as const)(
    'the %s exporter sees success; the valid span is stored, the one past the limit is not',
    async (kind) => {
      const { result, spanIds } = await exportTogether(kind, [manyAttributes(4097), { fine: 'yes' }]);
      expect(result.code).toBe(0);
      expect(await get(`/api/public/observations/${spanIds[1]}`)).toBe(200);
      expect(await get(`/api/public/observations/${spanIds[0]}`)).toBe(404);
    },
  );

  it('protobuf: 200 with ExportTraceServiceResponse.partial_success naming the limit', async () => {
    const { ids, body } = mixedExport();
    const type = exportTraceServiceRequestType();
    const proto = {
      resourceSpans: body.resourceSpans.map((rs) => ({
        scopeSpans: rs.scopeSpans.map((ss) => ({
          spans: ss.spans.map((s) => ({
            ...s,
            traceId: Buffer.from(s.traceId, 'hex'),
            spanId: Buffer.from(s.spanId, 'hex'),
          })),
        })),
      })),
    };
    const res = await fetch(OTLP(), {
      method: 'POST',
      headers: { authorization: devAuth(dev), 'content-type': 'application/x-protobuf' },
      body: new Uint8Array(type.encode(type.fromObject(proto)).finish()),
      signal: AbortSignal.timeout(60_000),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-protobuf');
    const answer = exportTraceServiceResponseType().toObject(
      exportTraceServiceResponseType().decode(new Uint8Array(await res.arrayBuffer())),
      { longs: Number },
    ) as { partialSuccess?: { rejectedSpans: number; errorMessage: string } };
    expect(answer.partialSuccess?.rejectedSpans).toBe(1);
    expect(answer.partialSuccess?.errorMessage).toContain('limit of 4096 attributes per span');
    expect(await get(`/api/public/observations/${ids[1]}`)).toBe(200);
    expect(await get(`/api/public/observations/${ids[0]}`)).toBe(404);
  });

  it('JSON: 200 with partialSuccess naming the limit; a malformed body is still a 400', async () => {
    const { ids, body } = mixedExport();
    const other = (id: string) => `b${id.slice(1)}`;
    for (const rs of body.resourceSpans)
      for (const ss of rs.scopeSpans) for (const s of ss.spans) s.spanId = other(s.spanId);
    const r = await post('/api/public/otel/v1/traces', body);
    expect(r.status).toBe(200);
    const partial = (r.body as unknown as { partialSuccess: { rejectedSpans: string; errorMessage: string } })
      .partialSuccess;
    expect(partial.rejectedSpans).toBe('1');
    expect(partial.errorMessage).toContain('limit of 4096 attributes per span');
    expect(await get(`/api/public/observations/${other(ids[1]!)}`)).toBe(200);
    expect((await post('/api/public/otel/v1/traces', { resourceSpans: 'nope' })).status).toBe(400);
  });
});

describe('times the store would keep as other dates are refused', () => {
  it('an OTLP span in year 9999 is a 400 naming startTimeUnixNano', async () => {
    const { result, spanId } = await exportSpan('proto', {}, { startTime: new Date('9999-06-01T00:00:00Z') });
    expect(failure(result)?.code).toBe(400);
    expect(failure(result)?.data).toContain('startTimeUnixNano is outside the accepted time range');
    expect(await get(`/api/public/observations/${spanId}`)).toBe(404);
  });

  it('an OTLP/JSON time before 1970 (negative) is a 400, not stored as now', async () => {
    const span = {
      traceId: '3'.repeat(32),
      spanId: '3'.repeat(16),
      name: 'old',
      startTimeUnixNano: '-1000000000',
    };
    const r = await post('/api/public/otel/v1/traces', {
      resourceSpans: [{ scopeSpans: [{ spans: [span] }] }],
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('startTimeUnixNano is not a timestamp');
  });

  it('an OTLP/protobuf time before 1970 (a negative int64 sent as fixed64) is a 400 naming the field', async () => {
    // 1700-01-01 in nanoseconds is negative; as fixed64 it reads as an unsigned value of at least 2^63.
    const unsigned = BigInt(Date.UTC(1700, 0, 1)) * 1_000_000n + 2n ** 64n;
    expect(unsigned >= 2n ** 63n).toBe(true);
    const spanId = '4'.repeat(16);
    const type = exportTraceServiceRequestType();
    const span = {
      traceId: Buffer.from('4'.repeat(32), 'hex'),
      spanId: Buffer.from(spanId, 'hex'),
      name: 'before-1970',
      startTimeUnixNano: unsigned.toString(),
      endTimeUnixNano: unsigned.toString(),
    };
    const res = await fetch(OTLP(), {
      method: 'POST',
      headers: { authorization: devAuth(dev), 'content-type': 'application/x-protobuf' },
      body: new Uint8Array(
        type.encode(type.fromObject({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] })).finish(),
      ),
      signal: AbortSignal.timeout(60_000),
    });
    expect(res.status).toBe(400);
    const message = ((await res.json()) as Answer).message;
    expect(message).toContain('resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano is outside');
    expect(message).toContain('a time before 1970');
    expect(await get(`/api/public/observations/${spanId}`)).toBe(404);
  });

  it('a batch event in year 275760 is its own 400 in the 207, the other event stored', async () => {
    const r = await post('/api/public/ingestion', {
      batch: [
        { id: 'far', type: 'trace-create', timestamp: '+275760-09-13T00:00:00.000Z', body: { id: 't-far' } },
        { id: 'ok', type: 'trace-create', timestamp: new Date().toISOString(), body: { id: 't-ok-time' } },
      ],
    });
    expect(r.status).toBe(207);
    expect(r.body.successes).toEqual([{ id: 'ok', status: 201 }]);
    expect(r.body.errors).toHaveLength(1);
    expect(r.body.errors[0]).toMatchObject({ id: 'far', status: 400 });
    expect(JSON.stringify(r.body.errors[0])).toContain('timestamp');
    expect(await get('/api/public/traces/t-ok-time')).toBe(200);
  });
});

describe('negative or NaN usage and cost are refused naming the field', () => {
  it('batch: totalCost -1 and negative usage counts, nested ones too, are per-event 400s', async () => {
    const now = new Date().toISOString();
    const generation = (id: string, body: object) => ({
      id,
      type: 'generation-create',
      timestamp: now,
      body: { id, traceId: 't-usage', startTime: now, ...body },
    });
    const r = await post('/api/public/ingestion', {
      batch: [
        generation('g-cost', { usage: { input: 1, output: 1, totalCost: -1 } }),
        generation('g-usage', { usageDetails: { input: -5 } }),
        generation('g-cached', { usage: { input: 9, prompt_tokens_details: { cached_tokens: -5 } } }),
        generation('g-cost-details', { costDetails: { total: -0.5 } }),
        generation('g-fine', { usageDetails: { input: 5 }, costDetails: { total: 0.5 } }),
      ],
    });
    expect(r.status).toBe(207);
    expect(r.body.successes).toEqual([{ id: 'g-fine', status: 201 }]);
    const errors = Object.fromEntries(
      r.body.errors.map((e) => [e.id, `${e.status} ${e.message} ${e.error ?? ''}`]),
    );
    expect(errors['g-cost']).toMatch(/^400 .*totalCost/);
    expect(errors['g-usage']).toMatch(/^400 .*usageDetails\.input/);
    expect(errors['g-cached']).toMatch(/^400 .*usage\.prompt_tokens_details\.cached_tokens/);
    expect(errors['g-cost-details']).toMatch(/^400 .*costDetails\.total/);
  });

  it.each([
    ['gen_ai.usage.input_tokens', -5, 'gen_ai.usage / llm.token_count.input'],
    ['langfuse.observation.usage_details', '{"input":"NaN"}', 'langfuse.observation.usage_details.input'],
    ['langfuse.observation.cost_details', '{"total":-1}', 'langfuse.observation.cost_details.total'],
  ])('OTLP: %s = %s is a 400 naming %s', async (key, value, field) => {
    const { result, spanId } = await exportSpan('proto', { [key]: value });
    expect(failure(result)?.code).toBe(400);
    expect(failure(result)?.data).toContain(field);
    expect(await get(`/api/public/observations/${spanId}`)).toBe(404);
  });
});

describe('bodies', () => {
  it('5000-deep JSON in any public body is a 400 naming the depth limit', async () => {
    const deep = `${'{"a":'.repeat(5000)}"leaf"${'}'.repeat(5000)}`;
    const now = new Date().toISOString();
    const batch = await post(
      '/api/public/ingestion',
      `{"batch":[{"id":"deep","type":"trace-create","timestamp":"${now}","body":{"id":"t-deep","metadata":${deep}}}]}`,
    );
    const score = await post(
      '/api/public/scores',
      `{"name":"s","traceId":"t-deep","value":1,"metadata":${deep}}`,
    );
    for (const r of [batch, score]) {
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body)).toContain('limit of 128 levels');
    }
  });

  it('fetch sending 32 MiB to the batch endpoint reads the 413', async () => {
    const res = await fetch(`${dev.url}/api/public/ingestion`, {
      method: 'POST',
      headers: { authorization: devAuth(dev), 'content-type': 'application/json' },
      body: new Uint8Array(32 * 1024 * 1024).fill(0x20),
      signal: AbortSignal.timeout(60_000),
    });
    expect(res.status).toBe(413);
    expect(await res.text()).toContain('Request body too large');
  });

  it("Python's http.client, which sends the whole body before reading, reads the 413", () => {
    // No third-party package: the standard library's client is what requests/urllib3 build on.
    const script = [
      'import http.client, sys, urllib.parse',
      'u = urllib.parse.urlparse(sys.argv[1])',
      'c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)',
      "c.request('POST', '/api/public/ingestion', body=b' ' * (16 * 1024 * 1024),",
      "          headers={'authorization': sys.argv[2], 'content-type': 'application/json'})",
      'r = c.getresponse()',
      'print(r.status, r.read().decode())',
    ].join('\n');
    const out = execFileSync('python3', ['-c', script, dev.url, devAuth(dev)], {
      timeout: 60_000,
    }).toString();
    expect(out).toMatch(/^413 .*Request body too large/);
  });

  it('an OTel exporter sending an export over the size limit sees the 413 (which it does not retry)', async () => {
    const big = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`part.${i}`, 'y'.repeat(3_500_000)]));
    const { result } = await exportSpan('json', big);
    expect(result.code).toBe(1);
    expect(failure(result)?.code).toBe(413);
  });
});

describe('property: random and malformed ingestion never answers 5xx and loses nothing it accepted', () => {
  // Ids that read back through a URL path as they are; other ids still go in, for the 5xx check.
  const plainId = fc.stringMatching(/^[A-Za-z0-9_-]{1,24}$/);
  const anyId = fc.oneof(plainId, fc.string({ maxLength: 30 }), fc.constant(''));
  const time = fc.oneof(
    fc
      .date({ min: new Date(-8.64e15), max: new Date(8.64e15), noInvalidDate: true })
      .map((d) => d.toISOString()),
    fc
      .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString()),
    fc.string({ maxLength: 30 }),
  );
  const number = fc.oneof(fc.double(), fc.integer({ min: -1e9, max: 1e9 }), fc.string({ maxLength: 5 }));
  const json = fc.jsonValue({ maxDepth: 4 });
  const usage = fc.dictionary(
    fc.constantFrom('input', 'output', 'total', 'totalCost', 'inputCost', 'promptTokens'),
    number,
  );
  const event = fc.record({
    id: anyId,
    type: fc.constantFrom(
      'trace-create',
      'span-create',
      'generation-create',
      'event-create',
      'score-create',
      'bogus',
    ),
    timestamp: time,
    body: fc.record(
      {
        id: fc.oneof(plainId, anyId),
        traceId: fc.oneof(plainId, anyId),
        name: fc.string({ maxLength: 20 }),
        startTime: time,
        endTime: time,
        metadata: json,
        input: json,
        usage,
        usageDetails: fc.dictionary(fc.string({ maxLength: 8 }), number),
        costDetails: fc.dictionary(fc.string({ maxLength: 8 }), number),
        value: number,
      },
      { requiredKeys: [] },
    ),
  });

  const hex = (bytes: number) =>
    fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString('hex'));
  const anyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.record({ stringValue: fc.string({ maxLength: 40 }) }),
      fc.record({ intValue: fc.oneof(fc.bigInt().map(String), fc.string({ maxLength: 8 })) }),
      fc.record({ doubleValue: fc.oneof(fc.double(), fc.constantFrom('NaN', 'Infinity', '-1')) }),
      fc.record({ boolValue: fc.boolean() }),
      fc.record({ arrayValue: fc.record({ values: fc.array(tie('value'), { maxLength: 3 }) }) }),
      fc.record({
        kvlistValue: fc.record({
          values: fc.array(fc.record({ key: fc.string(), value: tie('value') }), { maxLength: 3 }),
        }),
      }),
      fc.anything(),
    ),
  })).value;
  const attributeKey = fc.oneof(
    fc.constantFrom(
      'langfuse.observation.usage_details',
      'langfuse.observation.cost_details',
      'gen_ai.usage.input_tokens',
      'llm.token_count.prompt',
      'langfuse.observation.completion_start_time',
      'langfuse.observation.metadata.x',
      'langfuse.trace.metadata',
      'gen_ai.prompt.0.content',
      'langfuse.observation.type',
      'ai.response.msToFirstChunk',
      '__proto__',
    ),
    fc.string({ maxLength: 20 }),
  );
  const attributes = fc.array(
    fc.record({
      key: attributeKey,
      value: fc.oneof(
        anyValue,
        fc.jsonValue({ maxDepth: 2 }).map((v) => ({ stringValue: JSON.stringify(v) })),
      ),
    }),
    { maxLength: 8 },
  );
  const nanos = fc.oneof(
    fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
    fc.bigInt({ min: 946684800n * 10n ** 9n, max: 4102444800n * 10n ** 9n }).map(String),
    fc.string({ maxLength: 10 }),
    fc.integer({ min: -1e6, max: 1e6 }),
  );
  const span = fc.record(
    {
      traceId: fc.oneof(hex(16), fc.string({ maxLength: 32 })),
      spanId: fc.oneof(hex(8), hex(8), fc.string({ maxLength: 16 })),
      parentSpanId: fc.oneof(hex(8), fc.constant('')),
      name: fc.string({ maxLength: 20 }),
      startTimeUnixNano: nanos,
      endTimeUnixNano: nanos,
      attributes,
      events: fc.array(fc.record({ name: fc.string({ maxLength: 20 }), timeUnixNano: nanos, attributes }), {
        maxLength: 2,
      }),
      status: fc.record({ code: fc.integer({ min: -1, max: 3 }), message: fc.string({ maxLength: 10 }) }),
    },
    { requiredKeys: ['traceId', 'spanId'] },
  );

  const accepted: { kind: 'traces' | 'observations'; id: string }[] = [];
  /** The span ids of each export answered with a partial success: one of each at least was stored. */
  const partlyAccepted: string[][] = [];
  const isPlain = (id: unknown): id is string => typeof id === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(id);

  it('batch ingestion', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 1, maxLength: 5 }), async (batch) => {
        const r = await post('/api/public/ingestion', { batch });
        expect(r.status, JSON.stringify(r.body)).toBeLessThan(500);
        if (r.status !== 207) return;
        for (const ok of r.body.successes) {
          const e = batch.find((b) => b.id === ok.id);
          if (!e || !isPlain(e.body.id)) continue;
          if (e.type === 'trace-create') accepted.push({ kind: 'traces', id: e.body.id });
          else if (e.type.endsWith('-create') && e.type !== 'score-create')
            accepted.push({ kind: 'observations', id: e.body.id });
        }
      }),
      { numRuns: 100 },
    );
  });

  it('OTLP/JSON exports', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(span, { minLength: 1, maxLength: 4 }),
        attributes,
        async (spans, resourceAttributes) => {
          const body = {
            resourceSpans: [
              {
                resource: { attributes: resourceAttributes },
                scopeSpans: [{ scope: { name: 'fuzz' }, spans }],
              },
            ],
          };
          const r = await post('/api/public/otel/v1/traces', body);
          expect(r.status, JSON.stringify(r.body)).toBeLessThan(500);
          if (r.status !== 200) return;
          const partial = (r.body as { partialSuccess?: { rejectedSpans: string; errorMessage: string } })
            .partialSuccess;
          if (!partial) {
            for (const s of spans) accepted.push({ kind: 'observations', id: String(s.spanId) });
            return;
          }
          // Some spans refused on their own: at least one was stored, and the answer says why.
          expect(Number(partial.rejectedSpans)).toBeGreaterThan(0);
          expect(Number(partial.rejectedSpans)).toBeLessThan(spans.length);
          expect(partial.errorMessage).not.toBe('');
          partlyAccepted.push(spans.map((s) => String(s.spanId)));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('everything accepted above reads back', async () => {
    expect(accepted.length).toBeGreaterThan(0);
    const missing: string[] = [];
    for (const { kind, id } of accepted) {
      if ((await get(`/api/public/${kind}/${encodeURIComponent(id)}`)) !== 200) missing.push(`${kind}/${id}`);
    }
    expect(missing).toEqual([]);
    for (const ids of partlyAccepted) {
      const stored = await Promise.all(
        ids.map(async (id) => (await get(`/api/public/observations/${encodeURIComponent(id)}`)) === 200),
      );
      expect(stored, ids.join(', ')).toContain(true);
    }
  });
});

describe('shutdown', () => {
  it('after serving OTLP exports, SIGTERM ends the process by itself (exit 0, not the grace period kill)', async () => {
    // Runs last: the exports above started the decoding thread, which must not hold the process.
    const exit = await dev.process.kill('SIGTERM', 20_000);
    expect(exit).toEqual({ code: 0, signal: null });
  });
});
