/**
 * Masking on every path, on the real stores (PostgreSQL, Redis, the embedded ClickHouse engine, an
 * S3 server) and the real processes (`observatory web` in dual with the ingestion log, whose files
 * the worker drains): the same secrets (an email address, a card number, an API key and a
 * customer id of a custom RE2 rule) are sent through the batch SDK (`langfuse` 3.x), a legacy
 * endpoint, `@langfuse/otel` 5.x over OTLP, the OTel JS SDKs' traces and GenAI log events over
 * OTLP/HTTP and OTLP/gRPC, the scores API and a dataset item; afterwards no
 * table of either database, no object in any bucket (the ingestion log's files, the exports) and
 * no line either process logged holds any of them, while the rows read back hold the replacements.
 */
import { randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { ClickHouseClient } from '@clickhouse/client';
import { startActiveObservation } from '@langfuse/tracing';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Langfuse } from 'langfuse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INGESTION_LOG_ENV } from '../../server/contract/env.ts';
import { runExportPass } from '../../server/features/exports/job.ts';
import { loadConfig } from '../../server/kernel/config/env.ts';
import { s3BlobStore } from '../../server/platform/blobs/s3.ts';
import { createAnalyticsClient } from '../../server/platform/datastores/clickhouse.ts';
import { api, eventually, type ModeServer } from '../conformance/env.ts';
import { exporters } from '../fixtures/otel-producers.ts';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';
import { withSdkTracer } from '../fixtures/sdk-tracer.ts';
import {
  type AnalyticsServer,
  createProject,
  DUAL_ENV,
  startAnalyticsServer,
  startWeb,
  type WebServer,
} from '../fixtures/service.ts';
import {
  type Given,
  type ServiceSuite,
  startServiceSuite,
  stopServiceSuite,
} from '../fixtures/service-suite.ts';

const EMAIL = 'jane.doe@example.org';
const CARD = '4111 1111 1111 1111';
const KEY = 'sk-proj-4fK9x2LmP0qRsT7uVwXyZ1aBcD3eFgH5';
const CUSTOMER = 'ACME-482913';
/** Every form a secret could be stored in. */
const SECRETS = [EMAIL, CARD, CARD.replaceAll(' ', ''), KEY, CUSTOMER];
const TEXT = `contact ${EMAIL}, card ${CARD}, key ${KEY}, customer ${CUSTOMER}`;
const MASKED =
  'contact [REDACTED EMAIL], card [REDACTED CARD NUMBER], key [REDACTED SECRET], customer [CUSTOMER]';
/** A card that only the card rule would mask, which does not apply to dataset items. */
const DATASET_CARD = '5555 5555 5555 4444';

const LOG_BUCKET = 'ingestion-log';
const EXPORT_BUCKET = 'exports';
const WAIT_MS = 120_000;

let suite: ServiceSuite & Given<{ worker: true; buckets: string[] }>;
let analytics: ClickHouseClient;
let server: ModeServer;

beforeAll(async () => {
  suite = await startServiceSuite({
    project: 'masking',
    worker: true,
    buckets: [LOG_BUCKET, EXPORT_BUCKET],
    env: ({ s3 }) => ({
      ...s3.env('ingestionLog', LOG_BUCKET),
      ...s3.env('export', EXPORT_BUCKET),
      ...DUAL_ENV,
      SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER: 'false',
      // Every write goes through a log file and the worker's drain.
      [INGESTION_LOG_ENV.waitForStore]: 'false',
    }),
  });
  server = { url: suite.web.url, ...suite.project };
  analytics = createAnalyticsClient({ url: suite.ch.url });
}, 300_000);
afterAll(async () => {
  await analytics?.close();
  await stopServiceSuite(suite);
});

/**
 * A chat span and its GenAI log events from the OTel JS SDKs, over OTLP/HTTP or OTLP/gRPC: the
 * span's metadata and the logs' bodies carry the secrets. Resolves to the trace id.
 */
async function sendOtelChat(grpc: boolean): Promise<string> {
  const exporter = exporters(suite.web, server, grpc ? suite.web.grpcAddress : undefined);
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter.traces)],
  });
  const loggerProvider = new LoggerProvider({
    processors: [new SimpleLogRecordProcessor({ exporter: exporter.logs })],
  });
  const span = tracerProvider.getTracer('masking').startSpan('chat', {
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o-mini',
      'langfuse.observation.metadata.contact': EMAIL,
    },
  });
  const context = trace.setSpan(ROOT_CONTEXT, span);
  span.end();
  await tracerProvider.forceFlush();
  const logger = loggerProvider.getLogger('opentelemetry.instrumentation.openai_v2');
  logger.emit({ eventName: 'gen_ai.user.message', context, body: { content: TEXT } });
  logger.emit({
    context,
    severityNumber: SeverityNumber.WARN,
    severityText: 'WARN',
    body: `retried with ${KEY}`,
  });
  await loggerProvider.forceFlush();
  await Promise.all([tracerProvider.shutdown(), loggerProvider.shutdown()]);
  return span.spanContext().traceId;
}

const rows = async <T>(query: string, query_params: Record<string, unknown> = {}) =>
  (await analytics.query({ query, query_params, format: 'JSONEachRow' })).json<T>();

describe('masking rules', () => {
  it('are created, listed and refused with the field named, through the unstable API', async () => {
    const rules = [
      { name: 'emails', detector: 'email', datasetItems: true },
      { name: 'cards', detector: 'card_number' },
      { name: 'keys', detector: 'api_key', datasetItems: true },
      {
        name: 'customers',
        detector: 'custom',
        pattern: String.raw`ACME-\d{6}`,
        replacement: '[CUSTOMER]',
        datasetItems: true,
      },
    ];
    for (const rule of rules) {
      const res = await api(server, 'POST', '/api/public/unstable/masking-rules', rule);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const list = await api<{ data: { name: string }[]; meta: { totalItems: number } }>(
      server,
      'GET',
      '/api/public/unstable/masking-rules',
    );
    expect(list.body.data.map((r) => r.name)).toEqual(rules.map((r) => r.name));

    const bad = await api<{ code: string; details: { issues: { path: string[] }[] } }>(
      server,
      'POST',
      '/api/public/unstable/masking-rules',
      { name: 'bad', detector: 'custom', pattern: '(?=x)' },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.details.issues[0]!.path).toEqual(['pattern']);
    const taken = await api(server, 'POST', '/api/public/unstable/masking-rules', rules[0]);
    expect(taken.status).toBe(409);
  });

  it('mask what every path sends before it is stored anywhere', async () => {
    // The hour the rows are sent in: the export below starts there even when an hour turns meanwhile.
    const sentFrom = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    const auth = `Basic ${Buffer.from(`${server.publicKey}:${server.secretKey}`).toString('base64')}`;
    // The batch SDK: a trace and a generation.
    const batchTrace = randomUUID();
    const lf = new Langfuse({
      publicKey: server.publicKey,
      secretKey: server.secretKey,
      baseUrl: suite.web.url,
    });
    const trace = lf.trace({
      id: batchTrace,
      name: 'batch',
      input: { q: TEXT },
      metadata: { contact: EMAIL },
    });
    trace.generation({ name: 'gen', input: [{ role: 'user', content: TEXT }], output: TEXT });
    await lf.shutdownAsync();

    // A legacy endpoint.
    const legacyTrace = randomUUID();
    const legacy = await fetch(`${suite.web.url}/api/public/traces`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ id: legacyTrace, name: 'legacy', output: TEXT }),
    });
    expect(legacy.status).toBeLessThan(300);

    // OTLP from the OpenTelemetry-based SDK (direct to events_full in dual, and to the legacy tables).
    const otelTrace = await withSdkTracer(server, suite.web.url, () =>
      startActiveObservation('otel', async (span) => {
        span.update({ input: TEXT, output: { answer: TEXT }, metadata: { key: KEY } });
        return span.traceId;
      }),
    );

    // The OTel JS SDKs: a span and its GenAI log events, over HTTP and over gRPC.
    const otelHttpTrace = await sendOtelChat(false);
    const otelGrpcTrace = await sendOtelChat(true);

    // The scores API.
    const score = await api(server, 'POST', '/api/public/scores', {
      traceId: batchTrace,
      name: 'quality',
      value: 1,
      comment: `reviewed by ${EMAIL}`,
      metadata: { reviewer: EMAIL },
    });
    expect(score.status, JSON.stringify(score.body)).toBe(200);

    // A dataset item: the rules that ask for it apply.
    expect((await api(server, 'POST', '/api/public/v2/datasets', { name: 'ds' })).status).toBe(200);
    const item = await api<{ id: string; input: unknown }>(server, 'POST', '/api/public/dataset-items', {
      datasetName: 'ds',
      input: { q: `${EMAIL} ${CUSTOMER} ${KEY}`, card: DATASET_CARD },
    });
    expect(item.status, JSON.stringify(item.body)).toBe(200);
    expect(item.body.input).toEqual({
      q: '[REDACTED EMAIL] [CUSTOMER] [REDACTED SECRET]',
      card: DATASET_CARD,
    });

    // Everything drained and written: the rows hold the replacements.
    await eventually(
      'every log file drained',
      async () =>
        (await suite.pool.query('SELECT count(*)::int AS n FROM ingestion_log WHERE drained_at IS NULL'))
          .rows[0].n === 0 || undefined,
      WAIT_MS,
    );
    const traces = await eventually(
      'the batch and legacy traces',
      async () => {
        const r = await rows<{ id: string; input: string; output: string; metadata: Record<string, string> }>(
          'SELECT id, input, output, metadata FROM traces FINAL WHERE id IN {ids:Array(String)} ORDER BY name',
          { ids: [batchTrace, legacyTrace] },
        );
        return r.length === 2 ? r : undefined;
      },
      WAIT_MS,
    );
    expect(JSON.parse(traces[0]!.input)).toEqual({ q: MASKED });
    expect(traces[0]!.metadata['contact']).toContain('[REDACTED EMAIL]');
    expect(traces[1]!.output).toBe(MASKED);
    const events = await eventually(
      'the OTLP span in events_full',
      async () => {
        const r = await rows<{ input: string; output: string; metadata_values: string[] }>(
          'SELECT input, output, metadata_values FROM events_full WHERE trace_id = {t:String}',
          { t: otelTrace },
        );
        return r.length > 0 ? r : undefined;
      },
      WAIT_MS,
    );
    expect(events[0]!.input).toContain(MASKED);
    expect(JSON.parse(events[0]!.output)).toEqual({ answer: MASKED });
    expect(events[0]!.metadata_values.join()).toContain('[REDACTED SECRET]');
    for (const t of [otelHttpTrace, otelGrpcTrace]) {
      const chat = await eventually(
        `the OTel chat ${t} with its log events`,
        async () => {
          const r = await rows<{ name: string; input: string; metadata_values: string[] }>(
            `SELECT name, argMax(input, event_ts) AS input, argMax(metadata_values, event_ts) AS metadata_values
             FROM events_full WHERE trace_id = {t:String} GROUP BY span_id, name ORDER BY name`,
            { t },
          );
          return r.length >= 3 && r.some((x) => x.name === 'chat' && x.input !== '') ? r : undefined;
        },
        WAIT_MS,
      );
      const byName = Object.fromEntries(chat.map((x) => [x.name, x]));
      expect(byName['chat']!.input).toContain(MASKED);
      expect(byName['chat']!.metadata_values.join()).toContain('[REDACTED EMAIL]');
      expect(byName['gen_ai.user.message']!.input).toContain(MASKED);
      expect(byName['WARN']!.input).toContain('retried with [REDACTED SECRET]');
    }
    const scores = await rows<{ comment: string }>(
      'SELECT comment FROM scores FINAL WHERE trace_id = {t:String}',
      {
        t: batchTrace,
      },
    );
    expect(scores).toEqual([{ comment: 'reviewed by [REDACTED EMAIL]' }]);

    // An export of the hour, as the worker's scheduled pass writes it once the hour has closed.
    const exp = await api<{ id: string }>(server, 'POST', '/api/public/exports', {
      source: 'LEGACY_TRACES_OBSERVATIONS',
      format: 'JSONL',
      frequency: 'hourly',
      startAt: new Date(sentFrom).toISOString(),
    });
    expect(exp.status, JSON.stringify(exp.body)).toBe(201);
    const config = loadConfig({ ...suite.env, DATABASE_URL: suite.pg.url });
    const written = await runExportPass({
      pool: suite.pool,
      analytics,
      blobs: s3BlobStore(config.exportStorage!),
      storagePrefix: config.exportStorage!.prefix,
      settings: config.mode,
      now: () => Date.now() + 2 * 3_600_000,
    });
    expect(written.rowsWritten).toBeGreaterThan(0);
  });

  it('leave no secret in any table, bucket or process log', async () => {
    const found: string[] = [];
    const look = (where: string, text: string) => {
      for (const s of SECRETS) if (text.includes(s)) found.push(`${where}: ${s}`);
    };
    // Every table of the analytics store.
    const tables = await rows<{ name: string }>(
      "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree%'",
    );
    expect(tables.length).toBeGreaterThan(5);
    let replacements = 0;
    for (const { name } of tables) {
      const text = await (
        await analytics.query({ query: `SELECT * FROM ${name}`, format: 'JSONEachRow' })
      ).text();
      look(`clickhouse ${name}`, text);
      replacements += text.split('[REDACTED').length - 1;
    }
    expect(replacements).toBeGreaterThan(10);
    // Every table of PostgreSQL (a rule's pattern is not a secret: it names none).
    const pgTables = await suite.pool.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    );
    for (const { table_name } of pgTables.rows) {
      const { rows: all } = await suite.pool.query(`SELECT t::text AS row FROM "${table_name}" t`);
      look(`postgres ${table_name}`, all.map((r) => r.row).join('\n'));
    }
    // Every object of every bucket: the ingestion log's files and the export.
    const objects: Record<string, number> = {};
    for (const bucket of [LOG_BUCKET, EXPORT_BUCKET]) {
      const listed = await suite.s3.client.send(new ListObjectsV2Command({ Bucket: bucket }));
      objects[bucket] = listed.Contents?.length ?? 0;
      for (const o of listed.Contents ?? []) {
        const body = await suite.s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key! }));
        const bytes = Buffer.from(await body.Body!.transformToByteArray());
        // The log's files are gzipped: a secret is looked for in what they hold.
        look(`s3 ${bucket}/${o.Key}`, (o.Key!.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8'));
      }
    }
    expect(objects[LOG_BUCKET]).toBeGreaterThan(3);
    expect(objects[EXPORT_BUCKET]).toBeGreaterThan(0);
    // What the processes logged.
    look('web log', suite.web.process.output());
    look('worker log', suite.worker.process.output());
    expect(found).toEqual([]);
  });

  it('preview what they would change in recent observations, showing only the masked form', async () => {
    const preview = await api<{ scanned: number; observations: { masked: Record<string, unknown> }[] }>(
      server,
      'POST',
      '/api/public/unstable/masking-preview',
      { rules: [{ detector: 'custom', pattern: 'REDACTED (EMAIL|SECRET)', replacement: 'gone' }], limit: 50 },
    );
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(preview.body.scanned).toBeGreaterThan(0);
    expect(preview.body.observations.length).toBeGreaterThan(0);
    expect(JSON.stringify(preview.body)).toContain('[gone]');
    expect(JSON.stringify(preview.body)).not.toContain('REDACTED EMAIL');
  });

  it('are audited, and a disabled rule stops applying', async () => {
    const { rows: audited } = await suite.pool.query<{ action: string }>(
      "SELECT action FROM audit_logs WHERE resource_type = 'masking-rule' ORDER BY created_at",
    );
    expect(audited.map((r) => r.action)).toEqual(['create', 'create', 'create', 'create']);
    const list = await api<{ data: { id: string; name: string }[] }>(
      server,
      'GET',
      '/api/public/unstable/masking-rules',
    );
    const customers = list.body.data.find((r) => r.name === 'customers')!;
    const off = await api(server, 'PATCH', `/api/public/unstable/masking-rules/${customers.id}`, {
      enabled: false,
    });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    const item = await api<{ input: unknown }>(server, 'POST', '/api/public/dataset-items', {
      datasetName: 'ds',
      input: `customer ${CUSTOMER}`,
    });
    expect(item.body.input).toBe(`customer ${CUSTOMER}`);
    const deleted = await api(server, 'DELETE', `/api/public/unstable/masking-rules/${customers.id}`);
    expect(deleted.status).toBe(200);
    const { rows: after } = await suite.pool.query<{ action: string }>(
      "SELECT action FROM audit_logs WHERE resource_type = 'masking-rule' ORDER BY created_at",
    );
    expect(after.map((r) => r.action).slice(-2)).toEqual(['update', 'delete']);
  });
});

describe('masking on release 3', () => {
  let pg3: PostgresFixture;
  let ch3: AnalyticsServer;
  let web3: WebServer;
  let p3: ModeServer;
  beforeAll(async () => {
    [pg3, ch3] = await Promise.all([startPostgres(), startAnalyticsServer()]);
    const env = { DATABASE_URL: pg3.url, CLICKHOUSE_URL: ch3.url, SERVICE_RELEASE: '3' };
    web3 = await startWeb(env);
    p3 = { url: web3.url, ...(await createProject(env, 'masking-release-3')) };
  }, 300_000);
  afterAll(async () => {
    await web3?.stop();
    await Promise.all([ch3?.stop(), pg3?.stop()]);
  });

  it('applies the rules to what the batch API writes (the rules table is on both releases)', async () => {
    const rule = await api(p3, 'POST', '/api/public/unstable/masking-rules', {
      name: 'emails',
      detector: 'email',
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(200);
    const id = randomUUID();
    const res = await api<{ successes: unknown[]; errors: unknown[] }>(p3, 'POST', '/api/public/ingestion', {
      batch: [
        {
          id: randomUUID(),
          type: 'trace-create',
          timestamp: new Date().toISOString(),
          body: { id, name: 'r3', input: `mail ${EMAIL}` },
        },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(207);
    expect(res.body.errors).toEqual([]);
    const stored = await eventually(
      'the release 3 trace',
      async () => (await api<{ input?: unknown }>(p3, 'GET', `/api/public/traces/${id}`)).body.input,
      WAIT_MS,
    );
    expect(stored).toBe('mail [REDACTED EMAIL]');
  });
});
