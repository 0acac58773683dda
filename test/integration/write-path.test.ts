/**
 * The version 4 write path on real datastores, driven as users drive it: the npm `langfuse` 3.x
 * SDK, OpenTelemetry exporters (protobuf and JSON) and raw HTTP against `observatory web` in each
 * write mode, with PostgreSQL from Debian and the ClickHouse engine behind `analytics-server`.
 */

import { request } from 'node:http';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpHttpExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Langfuse } from 'langfuse';
import { beforeAll, describe, expect, it } from 'vitest';
import { exchange } from '../../cluster/exchange.ts';
import { modeWebsForSuite } from '../fixtures/mode-webs.ts';
import { basicAuth, MODE_ENV } from '../fixtures/service.ts';

const MODES = MODE_ENV;
type Mode = keyof typeof MODES;

// One web per mode on the same stores (the legacy web applies the migrations), a project each.
const s = modeWebsForSuite('p');
const { webs, projects } = s;

async function count(table: string, projectId: string, where = '1'): Promise<number> {
  const rs = await s.stores.ch.client.query({
    query: `SELECT count() AS n FROM ${table} FINAL WHERE project_id = {p:String} AND ${where}`,
    query_params: { p: projectId },
    format: 'JSONEachRow',
  });
  return Number((await rs.json<{ n: string }>())[0]!.n);
}

async function rows<T = Record<string, unknown>>(
  query: string,
  params: Record<string, unknown>,
): Promise<T[]> {
  const rs = await s.stores.ch.client.query({ query, query_params: params, format: 'JSONEachRow' });
  return rs.json<T>();
}

/** What the langfuse 3.x SDK sends for one trace: a span, a generation and a score. */
async function sendWithOldSdk(mode: Mode, traceId: string) {
  const sdk = new Langfuse({
    publicKey: projects[mode].publicKey,
    secretKey: projects[mode].secretKey,
    baseUrl: webs[mode].url,
    flushAt: 100,
  });
  const responses: { status: number; body: unknown }[] = [];
  sdk.on('error', (e: unknown) => responses.push({ status: -1, body: e }));
  const trace = sdk.trace({
    id: traceId,
    name: 'chat',
    userId: 'user-1',
    sessionId: 'session-1',
    tags: ['t1'],
    metadata: { plan: 'pro' },
  });
  const span = trace.span({ name: 'retrieve', input: { q: 'hello' } });
  span.end({ output: { docs: 2 } });
  const generation = trace.generation({
    name: 'answer',
    model: 'gpt-4o',
    input: [{ role: 'user', content: 'hello' }],
    usage: { input: 12, output: 30 },
  });
  generation.end({ output: 'hi there' });
  sdk.score({ traceId, name: 'quality', value: 0.9 });
  await sdk.flushAsync();
  await sdk.shutdownAsync();
  return { span, generation };
}

describe.each(['legacy', 'dual'] as const)('the langfuse 3.x SDK in %s', (mode) => {
  it('writes traces, observations and scores, and stages them in dual', async () => {
    const traceId = `old-sdk-${mode}`;
    const { generation } = await sendWithOldSdk(mode, traceId);
    const p = projects[mode].projectId;
    expect(await count('traces', p, `id = '${traceId}'`)).toBe(1);
    expect(await count('observations', p, `trace_id = '${traceId}'`)).toBe(2);
    expect(await count('scores', p, `trace_id = '${traceId}'`)).toBe(1);
    expect(await count('events_full', p)).toBe(0);
    const [trace] = await rows(
      'SELECT name, user_id, session_id, tags, metadata FROM traces FINAL WHERE id = {id:String}',
      { id: traceId },
    );
    expect(trace).toMatchObject({
      name: 'chat',
      user_id: 'user-1',
      session_id: 'session-1',
      tags: ['t1'],
      metadata: { plan: 'pro' },
    });
    const [gen] = await rows<Record<string, unknown>>(
      'SELECT type, provided_model_name, usage_details, output, end_time FROM observations FINAL WHERE id = {id:String}',
      { id: generation.id },
    );
    // A string output is stored as sent; other JSON values are serialized.
    expect(gen).toMatchObject({ type: 'GENERATION', provided_model_name: 'gpt-4o', output: 'hi there' });
    expect(gen!['usage_details']).toMatchObject({ input: 12, output: 30, total: 42 });
    expect(gen!['end_time']).not.toBeNull();
    const staged = await count('observations_batch_staging', p, `trace_id = '${traceId}'`);
    if (mode === 'legacy') expect(staged).toBe(0);
    else {
      expect(staged).toBe(3);
      const [root] = await rows(
        'SELECT type, parent_observation_id, name FROM observations_batch_staging FINAL WHERE id = {id:String}',
        {
          id: `t-${traceId}`,
        },
      );
      expect(root).toEqual({ type: 'SPAN', parent_observation_id: null, name: 'chat' });
    }
  });
});

describe('events_only', () => {
  it('answers the old SDK batch with 207 and 400 per non-score event, and stores the score', async () => {
    const p = projects.events_only;
    const ts = new Date().toISOString();
    const res = await fetch(`${webs.events_only.url}/api/public/ingestion`, {
      method: 'POST',
      headers: {
        authorization: basicAuth(p),
        'content-type': 'application/json',
        'x-langfuse-sdk-name': 'javascript',
      },
      body: JSON.stringify({
        batch: [
          { id: 'a', type: 'trace-create', timestamp: ts, body: { id: 'eo-trace', name: 'x' } },
          { id: 'b', type: 'span-create', timestamp: ts, body: { id: 'eo-span', traceId: 'eo-trace' } },
          { id: 'c', type: 'sdk-log', timestamp: ts, body: { log: 'hi' } },
          {
            id: 'd',
            type: 'score-create',
            timestamp: ts,
            body: { id: 'eo-score', traceId: 'eo-trace', name: 'q', value: 1 },
          },
        ],
      }),
    });
    expect(res.status).toBe(207);
    const body = (await res.json()) as {
      successes: { id: string }[];
      errors: { id: string; status: number; message: string; error: string }[];
    };
    expect(body.successes.map((s) => s.id)).toEqual(['d']);
    expect(body.errors.map((e) => [e.id, e.status])).toEqual([
      ['a', 400],
      ['b', 400],
      ['c', 400],
    ]);
    expect(body.errors[0]!.error).toMatch(/events_only.*OpenTelemetry/);
    expect(await count('scores', p.projectId, "id = 'eo-score'")).toBe(1);
    expect(await count('traces', p.projectId)).toBe(0);
    expect(await count('observations', p.projectId)).toBe(0);
  });

  it('names the refused SDK and its version (Python 2.x sends its headers with underscores)', async () => {
    const p = projects.events_only;
    const res = await fetch(`${webs.events_only.url}/api/public/ingestion`, {
      method: 'POST',
      headers: {
        authorization: basicAuth(p),
        'content-type': 'application/json',
        x_langfuse_sdk_name: 'python',
        x_langfuse_sdk_version: '2.60.10',
      },
      body: JSON.stringify({
        batch: [
          {
            id: 'py2-trace-event',
            type: 'trace-create',
            timestamp: new Date().toISOString(),
            body: { id: 'py2-trace', name: 't' },
          },
        ],
      }),
    });
    expect(res.status).toBe(207);
    const body = (await res.json()) as { errors: { id: string; status: number; error: string }[] };
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]).toMatchObject({ id: 'py2-trace-event', status: 400 });
    expect(body.errors[0]!.error).toMatch(/^Python SDK 2\.60\.10 is not supported in write mode events_only/);
    expect(await count('traces', p.projectId, "id = 'py2-trace'")).toBe(0);
  });

  it('also refuses the real old SDK, whose score still lands', async () => {
    await sendWithOldSdk('events_only', 'old-sdk-eo');
    const p = projects.events_only.projectId;
    expect(await count('scores', p, "trace_id = 'old-sdk-eo'")).toBe(1);
    expect(await count('traces', p, "id = 'old-sdk-eo'")).toBe(0);
  });

  it.each([
    ['POST', '/api/public/traces'],
    ['POST', '/api/public/spans'],
    ['PATCH', '/api/public/spans'],
    ['POST', '/api/public/generations'],
    ['PATCH', '/api/public/generations'],
    ['POST', '/api/public/events'],
  ])('%s %s answers 404', async (method, path) => {
    const res = await fetch(`${webs.events_only.url}${path}`, {
      method,
      headers: { authorization: basicAuth(projects.events_only), 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'x', traceId: 'y' }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { message: string }).message).toContain('events_only');
  });
});

describe('legacy write endpoints in legacy and dual', () => {
  it.each(['legacy', 'dual'] as const)(
    '%s: POST /traces, POST+PATCH /spans and /generations, POST /events',
    async (mode) => {
      const p = projects[mode];
      const call = async (method: string, path: string, body: object) => {
        const res = await fetch(`${webs[mode].url}${path}`, {
          method,
          headers: { authorization: basicAuth(p), 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        expect(res.status, `${method} ${path}`).toBe(200);
        return res.json() as Promise<{ id: string }>;
      };
      const traceId = `legacy-endpoints-${mode}`;
      expect((await call('POST', '/api/public/traces', { id: traceId, name: 'via-endpoint' })).id).toBe(
        traceId,
      );
      await call('POST', '/api/public/spans', { id: `${traceId}-s`, traceId, name: 'span' });
      await call('PATCH', '/api/public/spans', { id: `${traceId}-s`, traceId, output: 'done' });
      await call('POST', '/api/public/generations', { id: `${traceId}-g`, traceId, model: 'm' });
      await call('PATCH', '/api/public/generations', {
        id: `${traceId}-g`,
        traceId,
        usage: { input: 1, output: 2 },
      });
      await call('POST', '/api/public/events', { id: `${traceId}-e`, traceId, name: 'evt' });
      expect(await count('observations', p.projectId, `trace_id = '${traceId}'`)).toBe(3);
      const [span] = await rows('SELECT output, name FROM observations FINAL WHERE id = {id:String}', {
        id: `${traceId}-s`,
      });
      expect(span).toEqual({ output: 'done', name: 'span' });
    },
  );
});

function otelProvider(mode: Mode, kind: 'proto' | 'json', headers: Record<string, string> = {}) {
  const options = {
    url: `${webs[mode].url}/api/public/otel/v1/traces`,
    headers: { Authorization: basicAuth(projects[mode]), ...headers },
  };
  const exporter = kind === 'proto' ? new OtlpProtoExporter(options) : new OtlpHttpExporter(options);
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'otel-test' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
}

async function sendOtel(mode: Mode, kind: 'proto' | 'json', headers: Record<string, string> = {}) {
  const provider = otelProvider(mode, kind, headers);
  const tracer = provider.getTracer('my-app');
  const root = tracer.startSpan('agent', {
    attributes: { 'langfuse.user.id': 'otel-user', 'langfuse.session.id': 'otel-session' },
  });
  const child = tracer.startSpan(
    'llm-call',
    {
      attributes: {
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.usage.input_tokens': 5,
        'gen_ai.usage.output_tokens': 7,
      },
    },
    trace.setSpan(ROOT_CONTEXT, root),
  );
  child.end();
  root.end();
  const traceId = root.spanContext().traceId;
  await provider.forceFlush();
  await provider.shutdown();
  return traceId;
}

describe('OpenTelemetry exporters', () => {
  // [mode, exporter, header?, expected tables]
  const cases = [
    ['legacy', 'proto', false, { legacy: true, staging: false, events: false }],
    ['legacy', 'json', true, { legacy: true, staging: false, events: false }],
    ['dual', 'proto', false, { legacy: true, staging: true, events: false }],
    ['dual', 'json', true, { legacy: true, staging: false, events: true }],
    ['events_only', 'proto', false, { legacy: false, staging: false, events: true }],
    ['events_only', 'json', true, { legacy: false, staging: false, events: true }],
  ] as const;
  it.each(cases)('%s, %s exporter, version header %s', async (mode, kind, header, expected) => {
    const traceId = await sendOtel(mode, kind, header ? { 'x-service-ingestion-version': '4' } : {});
    const p = projects[mode].projectId;
    const where = `trace_id = '${traceId}'`;
    expect(await count('observations', p, where)).toBe(expected.legacy ? 2 : 0);
    expect(await count('traces', p, `id = '${traceId}'`)).toBe(expected.legacy ? 1 : 0);
    // The spans only: an OTLP trace keeps its root span as its root (no virtual root is staged).
    expect(await count('observations_batch_staging', p, where)).toBe(expected.staging ? 2 : 0);
    expect(await count('events_full', p, where)).toBe(expected.events ? 2 : 0);
    if (expected.events) {
      const events = await rows<Record<string, unknown>>(
        'SELECT span_id, parent_span_id, type, provided_model_name, user_id, session_id, usage_details, source FROM events_full FINAL WHERE trace_id = {t:String} ORDER BY parent_span_id',
        { t: traceId },
      );
      expect(events[0]).toMatchObject({
        parent_span_id: '',
        user_id: 'otel-user',
        session_id: 'otel-session',
        source: 'otel',
      });
      expect(events[1]).toMatchObject({ type: 'GENERATION', provided_model_name: 'gpt-4o-mini' });
      expect(events[1]!['usage_details']).toMatchObject({ input: 5, output: 7 });
      expect(await count('events_core', p, where)).toBe(2);
    }
    if (expected.legacy) {
      const [trace] = await rows('SELECT name, user_id, session_id FROM traces FINAL WHERE id = {t:String}', {
        t: traceId,
      });
      expect(trace).toEqual({ name: 'agent', user_id: 'otel-user', session_id: 'otel-session' });
    }
  });
});

describe("full SDK exports: one request of 512 spans, the SDKs' default batch", () => {
  // Where each mode keeps an OTLP span, read back by span id.
  const stored = {
    legacy:
      'SELECT id FROM observations FINAL WHERE project_id = {p:String} AND trace_id IN {t:Array(String)}',
    dual: 'SELECT id FROM observations_batch_staging WHERE project_id = {p:String} AND trace_id IN {t:Array(String)}',
    events_only:
      'SELECT span_id AS id FROM events_full FINAL WHERE project_id = {p:String} AND trace_id IN {t:Array(String)}',
  } as const;
  it.each(['legacy', 'dual', 'events_only'] as const)('%s stores every span once', async (mode) => {
    const exporter = new OtlpProtoExporter({
      url: `${webs[mode].url}/api/public/otel/v1/traces`,
      headers: { Authorization: basicAuth(projects[mode]) },
    });
    let exported = 0;
    const counting = {
      export: (spans: Parameters<typeof exporter.export>[0], done: Parameters<typeof exporter.export>[1]) =>
        exporter.export(spans, (result) => {
          if (result.code === 0) exported += spans.length;
          done(result);
        }),
      shutdown: () => exporter.shutdown(),
    };
    // The batch processor's defaults (512 spans per export) are what the Langfuse SDKs ship.
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'full-export' }),
      spanProcessors: [new BatchSpanProcessor(counting, { maxQueueSize: 2048 })],
    });
    const tracer = provider.getTracer('my-app');
    const spanIds: string[] = [];
    const traceIds: string[] = [];
    for (let t = 0; t < 128; t++) {
      const root = tracer.startSpan(`agent-${t}`);
      for (let i = 0; i < 3; i++) {
        const child = tracer.startSpan(`step-${i}`, {}, trace.setSpan(ROOT_CONTEXT, root));
        child.end();
        spanIds.push(child.spanContext().spanId);
      }
      root.end();
      spanIds.push(root.spanContext().spanId);
      traceIds.push(root.spanContext().traceId);
    }
    await provider.forceFlush();
    await provider.shutdown();
    expect(exported).toBe(512);
    const ids = await rows<{ id: string }>(stored[mode], { p: projects[mode].projectId, t: traceIds });
    expect(ids.map((r) => r.id).sort()).toEqual(spanIds.sort());
  });

  it('dual merges a batch of more ids than one read statement carries into what was stored', async () => {
    // 6 000 events a batch, twice: the second batch's read-merge-write reads back the first
    // batch's rows in two statements, and a row missed by either would lose its first values.
    const send = async (events: (t: number) => object[]) => {
      const res = await fetch(`${webs.dual.url}/api/public/ingestion`, {
        method: 'POST',
        headers: { authorization: basicAuth(projects.dual), 'content-type': 'application/json' },
        body: JSON.stringify({ batch: Array.from({ length: 3000 }, (_, t) => events(t)).flat() }),
      });
      const answer = (await res.json()) as { successes: unknown[]; errors: unknown[] };
      expect([res.status, answer.errors, answer.successes.length]).toEqual([207, [], 6000]);
    };
    const now = new Date().toISOString();
    const event = (id: string, type: string, body: object) => ({ id, type, timestamp: now, body });
    await send((t) => [
      event(`c-t${t}`, 'trace-create', { id: `big-t${t}`, name: 'big' }),
      event(`c-s${t}`, 'span-create', {
        id: `big-s${t}`,
        traceId: `big-t${t}`,
        name: 'step',
        startTime: now,
      }),
    ]);
    await send((t) => [
      event(`u-t${t}`, 'trace-create', { id: `big-t${t}`, userId: 'u' }),
      event(`u-s${t}`, 'span-update', { id: `big-s${t}`, traceId: `big-t${t}`, output: 'done' }),
    ]);
    const p = projects.dual.projectId;
    const traces = await rows(
      "SELECT id, name, user_id FROM traces FINAL WHERE project_id = {p:String} AND startsWith(id, 'big-t') ORDER BY id",
      { p },
    );
    const spans = await rows(
      "SELECT id, name, output FROM observations FINAL WHERE project_id = {p:String} AND startsWith(id, 'big-s') ORDER BY id",
      { p },
    );
    const ids = (prefix: string) => Array.from({ length: 3000 }, (_, t) => `${prefix}${t}`).sort();
    expect(traces).toEqual(ids('big-t').map((id) => ({ id, name: 'big', user_id: 'u' })));
    expect(spans).toEqual(ids('big-s').map((id) => ({ id, name: 'step', output: 'done' })));
  });
});

describe('SDK version headers decide, in dual with dual_write, between direct and staged', () => {
  // The spec's Limits table: Python >= 4.7.0 and JS/TS >= 5.4.0 are real-time; older ones are staged.
  const cases: [Record<string, string>, 'direct' | 'staged'][] = [
    [{ 'x-langfuse-sdk-name': 'python', 'x-langfuse-sdk-version': '4.6.1' }, 'staged'],
    [{ 'x-langfuse-sdk-name': 'python', 'x-langfuse-sdk-version': '4.7.0rc1' }, 'staged'],
    [{ 'x-langfuse-sdk-name': 'python', 'x-langfuse-sdk-version': '4.7.1' }, 'direct'],
    [{ x_langfuse_sdk_name: 'python', x_langfuse_sdk_version: '4.6.9' }, 'staged'],
    [{ x_langfuse_sdk_name: 'python', x_langfuse_sdk_version: '4.7.0' }, 'direct'],
    [{ 'x-service-sdk-name': 'javascript', 'x-service-sdk-version': '5.3.9' }, 'staged'],
    [{ 'x-service-sdk-name': 'javascript', 'x-service-sdk-version': '5.4.0-rc.1' }, 'staged'],
    [{ 'x-service-sdk-name': 'javascript', 'x-service-sdk-version': '5.4.0' }, 'direct'],
    [{ 'x-langfuse-sdk-name': 'python', 'x-langfuse-sdk-version': 'garbage' }, 'staged'],
  ];
  it.each(cases)('%j -> %s', async (headers, expected) => {
    const traceId = await sendOtel('dual', 'proto', headers);
    const p = projects.dual.projectId;
    const where = `trace_id = '${traceId}'`;
    expect(await count('observations', p, where)).toBe(2);
    // Both spans, and no virtual root: an OTLP trace keeps its own root span.
    expect(await count('observations_batch_staging', p, where)).toBe(expected === 'staged' ? 2 : 0);
    expect(await count('events_full', p, where)).toBe(expected === 'direct' ? 2 : 0);
  });
});

describe('authentication and isolation', () => {
  const batch = (id: string) => ({
    batch: [
      {
        id,
        type: 'score-create',
        timestamp: new Date().toISOString(),
        body: { id, traceId: 'iso', name: 'n', value: 1 },
      },
    ],
  });
  it.each([
    ['no header', undefined],
    ['wrong secret', `Basic ${Buffer.from('pk-obs-x:sk-obs-y').toString('base64')}`],
    ['bearer', 'Bearer abc'],
  ])('%s gets 401 without echoing credentials', async (_, auth) => {
    const res = await fetch(`${webs.legacy.url}/api/public/ingestion`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
      body: JSON.stringify(batch('unauth')),
    });
    expect(res.status).toBe(401);
    expect(await res.text()).not.toMatch(/sk-obs/);
  });

  it('a key writes into its own project only', async () => {
    const a = projects.legacy;
    const res = await fetch(`${webs.legacy.url}/api/public/ingestion`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: basicAuth(a) },
      body: JSON.stringify({ ...batch('iso-score'), projectId: projects.dual.projectId }),
    });
    expect(res.status).toBe(207);
    expect(await count('scores', a.projectId, "id = 'iso-score'")).toBe(1);
    expect(await count('scores', projects.dual.projectId, "id = 'iso-score'")).toBe(0);
  });
});

/**
 * A raw POST that settles even when the server answers before the body is sent (as it does for an
 * oversized body) and closes the connection: the result then carries the socket error.
 */
function post(path: string, body: string | Buffer | undefined, headers: Record<string, string>) {
  const req = request(`${webs.dual.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: basicAuth(projects.dual),
      'content-length': body === undefined ? 0 : Buffer.byteLength(body),
      ...headers,
    },
  });
  return exchange(req, body);
}

describe('bad input keeps accepted data intact', () => {
  beforeAll(async () => {
    const accepted = await post(
      '/api/public/traces',
      JSON.stringify({ id: 'accepted-before-bad-input', name: 'kept' }),
      { 'content-type': 'application/json' },
    );
    expect(accepted.status).toBe(200);
  });

  it.each([
    ['malformed JSON', '/api/public/ingestion', '{"batch": [', { 'content-type': 'application/json' }, 400],
    [
      'batch not an array',
      '/api/public/ingestion',
      '{"batch": 5}',
      { 'content-type': 'application/json' },
      400,
    ],
    [
      'corrupt protobuf',
      '/api/public/otel/v1/traces',
      Buffer.from([0x0a, 0xff, 0xff, 0x01, 0x02]),
      { 'content-type': 'application/x-protobuf' },
      400,
    ],
    ['unknown content type', '/api/public/otel/v1/traces', 'hello', { 'content-type': 'text/plain' }, 415],
    ['no content type', '/api/public/otel/v1/traces', Buffer.from('{}'), {}, 400],
    [
      'invalid span id',
      '/api/public/otel/v1/traces',
      JSON.stringify({
        resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 'zz', spanId: '01', name: 'x' }] }] }],
      }),
      { 'content-type': 'application/json' },
      400,
    ],
    [
      'ingestion version 5',
      '/api/public/otel/v1/traces',
      '{"resourceSpans":[]}',
      { 'content-type': 'application/json', 'x-langfuse-ingestion-version': '5' },
      400,
    ],
    [
      'ingestion version not an integer',
      '/api/public/otel/v1/traces',
      '{"resourceSpans":[]}',
      { 'content-type': 'application/json', 'x-service-ingestion-version': 'four' },
      400,
    ],
  ] as const)('%s is refused with a message', async (_, path, body, headers, status) => {
    const before = await count('traces', projects.dual.projectId);
    const res = await post(path, body, headers);
    expect(res).toMatchObject({ status });
    expect(res.body.length).toBeGreaterThan(10);
    expect(await count('traces', projects.dual.projectId)).toBe(before);
    expect(before).toBeGreaterThan(0);
  });

  it('an oversized batch is refused with a message from its Content-Length alone', async () => {
    const before = await count('traces', projects.dual.projectId);
    // Only the headers are sent: the answer cannot race a connection reset on the unread body.
    const declared = await post('/api/public/ingestion', undefined, {
      'content-type': 'application/json',
      'content-length': String(4 * 1024 * 1024),
    });
    expect(declared).toMatchObject({ status: 413 });
    expect(JSON.parse(declared.body).message).toMatch(/too large/i);
    // Sending the whole body: the server reads and discards it before closing, so the client reads the 413.
    const sent = await post(
      '/api/public/ingestion',
      JSON.stringify({ batch: [{ x: 'y'.repeat(4 * 1024 * 1024) }] }),
      { 'content-type': 'application/json' },
    );
    expect([sent.error, sent.status]).toEqual([undefined, 413]);
    expect(await count('traces', projects.dual.projectId)).toBe(before);
  });

  it('wrong types get 400 with the field path: per event in a batch, whole on a legacy endpoint', async () => {
    const ts = new Date().toISOString();
    const batch = await post(
      '/api/public/ingestion',
      JSON.stringify({
        batch: [
          { id: 'wt-1', type: 'trace-create', timestamp: ts, body: { id: 'wt', name: 5 } },
          {
            id: 'wt-2',
            type: 'score-create',
            timestamp: 'yesterday',
            body: { traceId: 'wt', name: 'n', value: 1 },
          },
          {
            id: 'wt-3',
            type: 'score-create',
            timestamp: ts,
            body: { id: 'wt-score', traceId: 'wt', name: 'n', value: 1 },
          },
        ],
      }),
      { 'content-type': 'application/json' },
    );
    expect(batch.status).toBe(207);
    const body = JSON.parse(batch.body) as {
      successes: { id: string }[];
      errors: { id: string; status: number; error: string }[];
    };
    expect(body.successes.map((s) => s.id)).toEqual(['wt-3']);
    expect(body.errors.map((e) => [e.id, e.status])).toEqual([
      ['wt-1', 400],
      ['wt-2', 400],
    ]);
    expect(body.errors[0]!.error).toContain('body.name');
    expect(body.errors[1]!.error).toContain('timestamp');
    const single = await post('/api/public/traces', JSON.stringify({ id: 'wt-x', tags: 'not-an-array' }), {
      'content-type': 'application/json',
    });
    expect(single.status).toBe(400);
    expect(single.body).toContain('body.tags');
    expect(await count('traces', projects.dual.projectId, "id IN ('wt', 'wt-x')")).toBe(0);
  });

  it('an empty OTLP export gets 200', async () => {
    const res = await post('/api/public/otel/v1/traces', '{"resourceSpans":[]}', {
      'content-type': 'application/json',
    });
    expect(res.status).toBe(200);
  });
});
