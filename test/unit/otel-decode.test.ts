import { gzipSync } from 'node:zlib';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { decodeTraceExport } from '../../server/features/otel/decode.ts';
import { OtlpDecodeError, type OtlpDecodeErrorKind } from '../../server/features/otel/errors.ts';
import { jsonIdToHex } from '../../server/features/otel/ids.ts';
import type { ExportTraceServiceRequest, OtlpSpan } from '../../server/features/otel/otlp-types.ts';
import { isoToMicros, microsToIso, nanosToMicros } from '../../server/features/otel/time.ts';

/** Real spans from the OpenTelemetry SDK: a root and a child with every attribute type, an event, a link, an error. */
function recordSpans(): ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'checkout', 'deployment.environment.name': 'qa' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('test-scope', '0.0.1');
  const root = tracer.startSpan('root', { kind: SpanKind.SERVER, startTime: [1_700_000_000, 123_456_789] });
  const child = tracer.startSpan(
    'child',
    {
      kind: SpanKind.CLIENT,
      startTime: [1_700_000_001, 1],
      links: [{ context: root.spanContext(), attributes: { why: 'because' } }],
      attributes: {
        str: 'text',
        int: 42,
        negative: -7,
        big: 2 ** 53 - 1,
        dbl: 0.25,
        yes: true,
        no: false,
        strs: ['a', 'b'],
        nums: [1, 2.5],
        empty: '',
      },
    },
    trace.setSpan(context.active(), root),
  );
  child.addEvent('gen_ai.choice', { index: 0 }, [1_700_000_001, 500_000_000]);
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'boom' });
  child.end([1_700_000_002, 0]);
  root.end([1_700_000_003, 999_999_999]);
  return exporter.getFinishedSpans();
}

const spans = recordSpans();
const protobufBody = Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!);
const jsonBody = Buffer.from(JsonTraceSerializer.serializeRequest(spans)!);

function allSpans(req: ExportTraceServiceRequest): OtlpSpan[] {
  return req.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
}

function decodeError(fn: () => unknown): OtlpDecodeError {
  try {
    fn();
  } catch (err) {
    if (err instanceof OtlpDecodeError) return err;
    throw err;
  }
  throw new Error('expected an OtlpDecodeError');
}

describe('decodeTraceExport round trips through the real OpenTelemetry serializers', () => {
  const fromProtobuf = decodeTraceExport(protobufBody, 'application/x-protobuf', undefined);
  const fromJson = decodeTraceExport(jsonBody, 'application/json', undefined);

  it('protobuf and JSON decode to the same object', () => {
    expect(fromProtobuf).toEqual(fromJson);
  });

  it('keeps ids, parent, kind, timestamps (nanoseconds), status, events and links', () => {
    const root = spans.find((s) => s.name === 'root')!;
    const child = spans.find((s) => s.name === 'child')!;
    const [decodedChild, decodedRoot] = ['child', 'root'].map(
      (n) => allSpans(fromProtobuf).find((s) => s.name === n)!,
    );
    expect(decodedRoot).toMatchObject({
      traceId: root.spanContext().traceId,
      spanId: root.spanContext().spanId,
      parentSpanId: '',
      kind: 2,
      startTimeUnixNano: '1700000000123456789',
      endTimeUnixNano: '1700000003999999999',
    });
    expect(decodedChild).toMatchObject({
      traceId: root.spanContext().traceId,
      spanId: child.spanContext().spanId,
      parentSpanId: root.spanContext().spanId,
      kind: 3,
      startTimeUnixNano: '1700000001000000001',
      status: { code: 2, message: 'boom' },
      events: [
        { name: 'gen_ai.choice', timeUnixNano: '1700000001500000000', attributes: [{ key: 'index' }] },
      ],
      links: [{ traceId: root.spanContext().traceId, spanId: root.spanContext().spanId }],
    });
  });

  it('keeps every attribute type with int64 as decimal strings', () => {
    const child = allSpans(fromProtobuf).find((s) => s.name === 'child')!;
    expect(Object.fromEntries(child.attributes.map((kv) => [kv.key, kv.value]))).toEqual({
      str: { stringValue: 'text' },
      int: { intValue: '42' },
      negative: { intValue: '-7' },
      big: { intValue: String(2 ** 53 - 1) },
      dbl: { doubleValue: 0.25 },
      yes: { boolValue: true },
      no: { boolValue: false },
      strs: { arrayValue: { values: [{ stringValue: 'a' }, { stringValue: 'b' }] } },
      nums: { arrayValue: { values: [{ intValue: '1' }, { doubleValue: 2.5 }] } },
      empty: { stringValue: '' },
    });
  });

  it('keeps resource and scope', () => {
    expect(fromProtobuf.resourceSpans[0]!.resource.attributes).toContainEqual({
      key: 'service.name',
      value: { stringValue: 'checkout' },
    });
    expect(fromProtobuf.resourceSpans[0]!.scopeSpans[0]!.scope).toMatchObject({
      name: 'test-scope',
      version: '0.0.1',
    });
  });

  it('is JSON-serializable without loss (what is stored is what is mapped)', () => {
    expect(JSON.parse(JSON.stringify(fromProtobuf))).toEqual(fromProtobuf);
  });
});

describe('content encodings', () => {
  const plain = decodeTraceExport(protobufBody, 'application/x-protobuf', undefined);
  it.each([
    { name: 'gzip protobuf', body: gzipSync(protobufBody), type: 'application/x-protobuf', encoding: 'gzip' },
    { name: 'gzip JSON', body: gzipSync(jsonBody), type: 'application/json', encoding: 'gzip' },
    {
      name: 'x-gzip, upper case',
      body: gzipSync(protobufBody),
      type: 'application/x-protobuf',
      encoding: 'X-GZIP',
    },
    { name: 'identity', body: protobufBody, type: 'application/x-protobuf', encoding: 'identity' },
    {
      name: 'gzip without header (magic bytes)',
      body: gzipSync(protobufBody),
      type: 'application/x-protobuf',
    },
    { name: 'content type with parameters', body: jsonBody, type: 'application/json; charset=utf-8' },
    { name: 'content type in upper case', body: protobufBody, type: 'Application/X-Protobuf' },
  ])('$name decodes to the same export', ({ body, type, encoding }) => {
    expect(decodeTraceExport(body, type, encoding)).toEqual(plain);
  });
});

describe('decode errors are typed and name the problem', () => {
  const bomb = gzipSync(Buffer.alloc(8 * 1024 * 1024)); // ~8 KiB that inflates to 8 MiB
  const cases: {
    name: string;
    body: Buffer;
    type: string | undefined;
    encoding?: string;
    maxBytes?: number;
    kind: OtlpDecodeErrorKind;
    message: RegExp;
  }[] = [
    {
      name: 'missing content type',
      body: jsonBody,
      type: undefined,
      kind: 'no-content-type',
      message: /^Content-Type is required: application\/x-protobuf or application\/json$/,
    },
    {
      name: 'text/plain',
      body: jsonBody,
      type: 'text/plain',
      kind: 'content-type',
      message: /got "text\/plain"/,
    },
    {
      name: 'grpc',
      body: protobufBody,
      type: 'application/grpc',
      kind: 'content-type',
      message: /Invalid content type/,
    },
    {
      name: 'brotli',
      body: protobufBody,
      type: 'application/x-protobuf',
      encoding: 'br',
      kind: 'content-encoding',
      message: /"br"/,
    },
    {
      name: 'gzip header on a plain body',
      body: protobufBody,
      type: 'application/x-protobuf',
      encoding: 'gzip',
      kind: 'gzip',
      message: /^Invalid gzip body/,
    },
    {
      name: 'truncated gzip',
      body: gzipSync(protobufBody).subarray(0, 20),
      type: 'application/x-protobuf',
      encoding: 'gzip',
      kind: 'gzip',
      message: /^Invalid gzip body/,
    },
    {
      name: 'zip bomb',
      body: bomb,
      type: 'application/json',
      encoding: 'gzip',
      maxBytes: 1024 * 1024,
      kind: 'too-large',
      message: /exceeds the limit of 1048576 bytes/,
    },
    {
      name: 'plain body over the limit',
      body: protobufBody,
      type: 'application/x-protobuf',
      maxBytes: 10,
      kind: 'too-large',
      message: /limit of 10 bytes/,
    },
    {
      name: 'truncated protobuf',
      body: protobufBody.subarray(0, protobufBody.length - 7),
      type: 'application/x-protobuf',
      kind: 'protobuf',
      message: /^Failed to parse OTel Protobuf Trace: /,
    },
    {
      name: 'protobuf length beyond the body',
      body: Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f]),
      type: 'application/x-protobuf',
      kind: 'protobuf',
      message: /^Failed to parse OTel Protobuf Trace: /,
    },
    {
      name: 'protobuf invalid wire type',
      body: Buffer.from([0x0f, 0x01]),
      type: 'application/x-protobuf',
      kind: 'protobuf',
      message: /wire type/,
    },
    {
      name: 'JSON syntax error',
      body: Buffer.from('{"resourceSpans": ['),
      type: 'application/json',
      kind: 'json',
      message: /^Failed to parse OTel JSON Trace: /,
    },
    {
      name: 'JSON array instead of object',
      body: Buffer.from('[]'),
      type: 'application/json',
      kind: 'json',
      message: /expected a JSON object/,
    },
    {
      name: 'protobuf sent as JSON',
      body: protobufBody,
      type: 'application/json',
      kind: 'json',
      message: /^Failed to parse OTel JSON Trace/,
    },
  ];
  it.each(cases)('$name → $kind', ({ body, type, encoding, maxBytes, kind, message }) => {
    const err = decodeError(() => decodeTraceExport(body, type, encoding, maxBytes ? { maxBytes } : {}));
    expect(err.kind).toBe(kind);
    expect(err.message).toMatch(message);
  });
});

describe('OTLP/JSON leniency', () => {
  const traceHex = '5b8efff798038103d269b633813fc60c';
  const spanHex = 'eee19b7ec3c1b174';
  const decodeOne = (span: Record<string, unknown>) =>
    allSpans(
      decodeTraceExport(
        Buffer.from(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] })),
        'application/json',
        undefined,
      ),
    )[0]!;

  it('an empty object is an empty export', () => {
    expect(decodeTraceExport(Buffer.from('{}'), 'application/json', undefined)).toEqual({
      resourceSpans: [],
    });
  });

  it('accepts base64 ids, numeric timestamps and int64, enum names, and fills defaults', () => {
    const span = decodeOne({
      traceId: Buffer.from(traceHex, 'hex').toString('base64'),
      spanId: Buffer.from(spanHex, 'hex').toString('base64'),
      kind: 'SPAN_KIND_CLIENT',
      startTimeUnixNano: 1_700_000_000_000_000_000,
      attributes: [{ key: 'n', value: { intValue: 5 } }],
      status: { code: 'STATUS_CODE_ERROR' },
    });
    expect(span).toMatchObject({
      traceId: traceHex,
      spanId: spanHex,
      parentSpanId: '',
      name: '',
      kind: 3,
      startTimeUnixNano: '1700000000000000000',
      endTimeUnixNano: '0',
      attributes: [{ key: 'n', value: { intValue: '5' } }],
      events: [],
      status: { code: 2, message: '' },
    });
  });

  it('keeps hex ids exactly as given', () => {
    const span = decodeOne({ traceId: traceHex.toUpperCase(), spanId: spanHex });
    expect(span.traceId).toBe(traceHex.toUpperCase());
  });

  it('keeps structurally wrong values for validation to report', () => {
    const span = decodeOne({ traceId: traceHex, spanId: spanHex, attributes: { not: 'an array' } });
    expect(span.attributes).toEqual({ not: 'an array' });
  });
});

describe('jsonIdToHex', () => {
  const id16 = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
  it.each([
    {
      name: 'hex of the right length',
      value: '00112233445566778899aabbccddeeff',
      bytes: 16,
      out: '00112233445566778899aabbccddeeff',
    },
    { name: 'base64 of 16 bytes', value: id16.toString('base64'), bytes: 16, out: id16.toString('hex') },
    {
      name: 'base64url of 16 bytes',
      value: id16.toString('base64url'),
      bytes: 16,
      out: id16.toString('hex'),
    },
    {
      name: 'base64 of 8 bytes',
      value: id16.subarray(0, 8).toString('base64'),
      bytes: 8,
      out: '0011223344556677',
    },
    {
      name: 'base64 of the wrong length stays',
      value: id16.toString('base64'),
      bytes: 8,
      out: id16.toString('base64'),
    },
    { name: 'short hex stays', value: 'abc', bytes: 8, out: 'abc' },
    { name: 'non-string stays', value: 12, bytes: 8, out: 12 },
  ])('$name', ({ value, bytes, out }) => {
    expect(jsonIdToHex(value, bytes)).toEqual(out);
  });
});

describe('time conversion keeps microseconds', () => {
  it.each([
    { nanos: '1700000000123456789', iso: '2023-11-14T22:13:20.123456Z' },
    { nanos: '1000', iso: '1970-01-01T00:00:00.000001Z' },
    { nanos: '1700000000000000999', iso: '2023-11-14T22:13:20.000000Z' },
  ])('$nanos → $iso', ({ nanos, iso }) => {
    expect(microsToIso(nanosToMicros(nanos)!)).toBe(iso);
  });

  it.each(['0', '', 'abc', '-5', undefined])('%s nanoseconds is no time', (nanos) => {
    expect(nanosToMicros(nanos)).toBeNull();
  });

  it.each([
    { iso: '2025-10-01T08:45:26.112648Z', out: '2025-10-01T08:45:26.112648Z' },
    { iso: '2025-10-01T10:45:26.112648+02:00', out: '2025-10-01T08:45:26.112648Z' },
    { iso: '2025-10-01T08:45:26.1126489Z', out: '2025-10-01T08:45:26.112648Z' },
    { iso: '2025-10-01T08:45:26Z', out: '2025-10-01T08:45:26.000000Z' },
    { iso: '2025-10-01T08:45:26.5', out: '2025-10-01T08:45:26.500000Z' },
    { iso: '2025-10-01 08:45:26.5+0000', out: '2025-10-01T08:45:26.500000Z' },
  ])('ISO $iso → $out', ({ iso, out }) => {
    expect(microsToIso(isoToMicros(iso)!)).toBe(out);
  });

  it.each(['yesterday', '2025-13-01T00:00:00Z', '', '"2025-10-01T08:45:26Z"'])(
    '%s is not a date-time',
    (value) => {
      expect(isoToMicros(value)).toBeNull();
    },
  );
});
