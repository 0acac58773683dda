import { describe, expect, it } from 'vitest';
import { decodeTraceExport } from '../../server/features/otel/decode.ts';
import { OtlpValidationError } from '../../server/features/otel/errors.ts';
import {
  checkTraceExport,
  parseIngestionVersionHeader,
  validateTraceExport,
} from '../../server/features/otel/validate.ts';
import { MAX_ATTRIBUTES_PER_SPAN } from '../../server/features/write-model/limits.ts';

const TRACE = '5b8efff798038103d269b633813fc60c';
const SPAN = 'eee19b7ec3c1b174';
const good = () => ({ traceId: TRACE, spanId: SPAN, name: 'ok', attributes: [], events: [] });

/** Decodes like the HTTP route does, so the paths refer to what a client actually sent. */
function validateJson(body: unknown) {
  return validateTraceExport(
    decodeTraceExport(Buffer.from(JSON.stringify(body)), 'application/json', undefined),
  );
}

function oneSpan(span: Record<string, unknown>) {
  return { resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] };
}

const SPAN0 = 'resourceSpans[0].scopeSpans[0].spans[0]';

describe('validateTraceExport accepts well-formed exports', () => {
  it.each([
    { name: 'empty export', body: {} },
    { name: 'empty resourceSpans', body: { resourceSpans: [] } },
    { name: 'one good span', body: oneSpan(good()) },
    { name: 'omitted repeated fields', body: oneSpan({ traceId: TRACE, spanId: SPAN }) },
    { name: 'root with empty parent', body: oneSpan({ ...good(), parentSpanId: '' }) },
  ])('$name', ({ body }) => {
    expect(validateJson(body)).toBeNull();
  });
});

describe('validateTraceExport rejects the whole export and names the first offending path', () => {
  it.each([
    {
      name: 'missing traceId',
      body: oneSpan({ spanId: SPAN }),
      path: `${SPAN0}.traceId`,
      reason: /is missing/,
    },
    {
      name: 'all-zero traceId',
      body: oneSpan({ ...good(), traceId: '0'.repeat(32) }),
      path: `${SPAN0}.traceId`,
      reason: /not a valid trace id/,
    },
    {
      name: 'short traceId',
      body: oneSpan({ ...good(), traceId: TRACE.slice(2) }),
      path: `${SPAN0}.traceId`,
      reason: /32 hex characters/,
    },
    {
      name: 'numeric spanId',
      body: oneSpan({ ...good(), spanId: 42 }),
      path: `${SPAN0}.spanId`,
      reason: /not a valid span id: number/,
    },
    {
      name: 'non-hex spanId',
      body: oneSpan({ ...good(), spanId: 'zzzzzzzzzzzzzzzz' }),
      path: `${SPAN0}.spanId`,
      reason: /16 hex characters/,
    },
    {
      name: 'all-zero spanId',
      body: oneSpan({ ...good(), spanId: '0000000000000000' }),
      path: `${SPAN0}.spanId`,
      reason: /not all zero/,
    },
    {
      name: 'attributes not an array',
      body: oneSpan({ ...good(), attributes: { a: 1 } }),
      path: `${SPAN0}.attributes`,
      reason: /is not an array/,
    },
    {
      name: 'events not an array',
      body: oneSpan({ ...good(), events: 'x' }),
      path: `${SPAN0}.events`,
      reason: /is not an array/,
    },
    {
      name: 'attribute without key',
      body: oneSpan({ ...good(), attributes: [{ value: {} }] }),
      path: `${SPAN0}.attributes[0].key`,
      reason: /is not a string/,
    },
    {
      name: 'event attributes not an array',
      body: oneSpan({ ...good(), events: [{ name: 'e', attributes: 3 }] }),
      path: `${SPAN0}.events[0].attributes`,
      reason: /is not an array/,
    },
    {
      name: 'span not an object',
      body: { resourceSpans: [{ scopeSpans: [{ spans: ['x'] }] }] },
      path: SPAN0,
      reason: /is not an object/,
    },
    {
      name: 'spans not an array',
      body: { resourceSpans: [{ scopeSpans: [{ spans: {} }] }] },
      path: 'resourceSpans[0].scopeSpans[0].spans',
      reason: /is not an array/,
    },
    {
      name: 'scopeSpans not an array',
      body: { resourceSpans: [{ scopeSpans: 1 }] },
      path: 'resourceSpans[0].scopeSpans',
      reason: /is not an array/,
    },
    {
      name: 'resource attributes not an array',
      body: { resourceSpans: [{ resource: { attributes: {} } }] },
      path: 'resourceSpans[0].resource.attributes',
      reason: /is not an array/,
    },
    {
      name: 'scope attributes not an array',
      body: { resourceSpans: [{ scopeSpans: [{ scope: { attributes: 'a' } }] }] },
      path: 'resourceSpans[0].scopeSpans[0].scope.attributes',
      reason: /is not an array/,
    },
    {
      name: 'resourceSpans not an array',
      body: { resourceSpans: 'all' },
      path: 'resourceSpans',
      reason: /is not an array/,
    },
  ])('$name → $path', ({ body, path, reason }) => {
    const err = validateJson(body);
    expect(err).toBeInstanceOf(OtlpValidationError);
    expect(err?.kind).toBe('export');
    expect(err?.path).toBe(path);
    expect(err?.message).toContain(`Invalid OTLP trace export: ${path} `);
    expect(err?.message).toMatch(reason);
    expect(err?.message).toContain('The entire export was rejected');
  });

  it('reports the first bad span of a mixed batch, deep in the export', () => {
    const spans = [good(), good(), good(), { ...good(), traceId: 'nope' }, { spanId: SPAN }];
    const err = validateJson({ resourceSpans: [{ scopeSpans: [{ spans: [good()] }, { spans }] }] });
    expect(err?.path).toBe('resourceSpans[0].scopeSpans[1].spans[3].traceId');
    expect(err?.message).toBe(
      'Invalid OTLP trace export: resourceSpans[0].scopeSpans[1].spans[3].traceId is not a valid trace id: "nope" ' +
        '(expected 32 hex characters, not all zero). The entire export was rejected; no spans were ingested.',
    );
  });

  it('rejects protobuf ids of the wrong byte length', () => {
    // A protobuf span with a 3-byte trace id: field 1 (resource_spans) > field 2 (scope_spans) > field 2 (spans).
    const span = Buffer.from([0x0a, 0x03, 0x01, 0x02, 0x03, 0x12, 0x08, ...Buffer.from(SPAN, 'hex')]);
    const scopeSpans = Buffer.concat([Buffer.from([0x12, span.length]), span]);
    const resourceSpans = Buffer.concat([Buffer.from([0x12, scopeSpans.length]), scopeSpans]);
    const body = Buffer.concat([Buffer.from([0x0a, resourceSpans.length]), resourceSpans]);
    const err = validateTraceExport(decodeTraceExport(body, 'application/x-protobuf', undefined));
    expect(err?.path).toBe(`${SPAN0}.traceId`);
    expect(err?.message).toContain('"010203"');
  });

  it('rejects something that is not an export at all', () => {
    expect(validateTraceExport(null)?.path).toBe('(root)');
  });
});

describe('parseIngestionVersionHeader', () => {
  it.each([
    { value: undefined, out: null },
    { value: '', out: null },
    { value: '  ', out: null },
    { value: '4', out: 4 },
    { value: ' 3 ', out: 3 },
    { value: '1', out: 1 },
    { value: '0', out: 0 },
    { value: ['4'], out: 4 },
  ])('$value → $out', ({ value, out }) => {
    expect(parseIngestionVersionHeader(value)).toBe(out);
  });

  it.each(['5', '40', '4.0', '4.5', 'four', 'v4', '4, 4', '99999999999999999999'])(
    '%s is refused',
    (value) => {
      const result = parseIngestionVersionHeader(value);
      expect(result).toBeInstanceOf(OtlpValidationError);
      expect((result as OtlpValidationError).message).toBe(
        `Unsupported x-service-ingestion-version: "${value}". Maximum supported: "4".`,
      );
    },
  );

  it('names the header the client actually used', () => {
    const result = parseIngestionVersionHeader('7', 'x-langfuse-ingestion-version') as OtlpValidationError;
    expect(result.message).toBe('Unsupported x-langfuse-ingestion-version: "7". Maximum supported: "4".');
    expect(result.kind).toBe('ingestion-version');
  });
});

describe('checkTraceExport: a span refused on its own, or the export refused whole (OTLP partial success)', () => {
  const span = (n: number, extra: Record<string, unknown> = {}) => ({
    ...good(),
    spanId: `${'0'.repeat(15)}${n}`,
    ...extra,
  });
  const attrs = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ key: `a${i}`, value: { stringValue: 'v' } }));
  const check = (spans: Record<string, unknown>[], resourceAttrs: unknown[] = []) =>
    checkTraceExport(
      decodeTraceExport(
        Buffer.from(
          JSON.stringify({
            resourceSpans: [{ resource: { attributes: resourceAttrs }, scopeSpans: [{ spans }] }],
          }),
        ),
        'application/json',
        undefined,
      ),
    );

  it.each([
    // [what, spans, refused span indexes, first problem names]
    [
      'one over the attribute limit',
      [span(1), span(2, { attributes: attrs(MAX_ATTRIBUTES_PER_SPAN + 1) })],
      [1],
      'attributes per span',
    ],
    ['a bad span id', [span(1, { spanId: 'zz' }), span(2)], [0], 'spans[0].spanId'],
    [
      'a time past the range',
      [span(1), span(2, { endTimeUnixNano: '99999999999999999999' })],
      [1],
      'time range',
    ],
    ['none', [span(1), span(2)], [], null],
  ] as const)('%s', (_what, spans, refused, named) => {
    const c = check([...spans]);
    expect(c.error).toBeNull();
    expect(c.refusedSpans.size).toBe(refused.length);
    if (named === null) expect(c.firstSpanProblem).toBeNull();
    else expect(c.firstSpanProblem?.message).toContain(named);
  });

  it('a problem of the resource is the whole export', () => {
    const c = check([span(1)], attrs(MAX_ATTRIBUTES_PER_SPAN + 1));
    expect(c.error?.message).toMatch(/resource\.attributes .*The entire export was rejected/);
  });

  it('validateTraceExport still names the first refused span as a whole-export error', () => {
    const body = { resourceSpans: [{ scopeSpans: [{ spans: [good(), { ...good(), spanId: 'zz' }] }] }] };
    expect(validateJson(body)?.path).toBe('resourceSpans[0].scopeSpans[0].spans[1].spanId');
  });
});
