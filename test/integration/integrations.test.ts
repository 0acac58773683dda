/**
 * Per-project integrations on real PostgreSQL, ClickHouse and S3 (Versity Gateway), through the
 * reference's blob-storage integrations API with an organization key: spans and scores are sent
 * at known times in past windows, the integration's pass then delivers each closed window to the
 * project's own bucket (gzip JSONL, one file per window and source) with exactly the rows sent in
 * it, also when a pass dies between a window's files and its checkpoint. The PostHog export sends
 * the same enriched observations to a real HTTP receiver on 127.0.0.1 that validates every request
 * against PostHog's batch format; the first attempt is answered 500 and no event arrives twice.
 * Last, a real `observatory worker` runs both on its own.
 */
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { destinationOf, runBlobIntegrationPass } from '../../server/features/integrations/blob-job.ts';
import { runPostHogPass } from '../../server/features/integrations/posthog-job.ts';
import { loadConfig } from '../../server/kernel/config/env.ts';
import type { BlobStore } from '../../server/platform/blobs/store.ts';
import { createAnalyticsClient } from '../../server/platform/datastores/clickhouse.ts';
import { api, eventually, type ModeServer } from '../conformance/env.ts';
import { cli, MODE_ENV, type Project, startWorker } from '../fixtures/service.ts';
import {
  type Given,
  type ServiceSuite,
  startServiceSuite,
  stopServiceSuite,
} from '../fixtures/service-suite.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver.ts';

const BUCKET = 'tenant-exports';
const HOUR = 3_600_000;
const SETUP_TIMEOUT_MS = 600_000;
const KEY = randomBytes(32).toString('hex');
/** The first window: six whole hours ago; three windows hold data. */
const T0 = Math.floor(Date.now() / HOUR) * HOUR - 6 * HOUR;
/** A clock after the third window closed and its delivery lag passed. */
const NOW = T0 + 3 * HOUR + 30 * 60_000;

let suite: ServiceSuite & Given<{ redis: true; buckets: string[] }>;
let receiver: WebhookReceiver;
let analytics: ClickHouseClient;
let org: { publicKey: string; secretKey: string };
let project: Project;

const adminServer = (): ModeServer => ({ url: suite.web.url, projectId: '', ...org });
const projectServer = (): ModeServer => ({ url: suite.web.url, ...project });
const config = () => loadConfig({ ...suite.env, ...MODE_ENV.events_only });

beforeAll(async () => {
  [suite, receiver] = await Promise.all([
    startServiceSuite({
      project: 'integrations',
      redis: true,
      buckets: [BUCKET],
      env: {
        ENCRYPTION_KEY: KEY,
        SERVICE_LLM_CONNECTION_WHITELISTED_IPS: '127.0.0.1',
        ...MODE_ENV.events_only,
      },
    }),
    startWebhookReceiver(),
  ]);
  project = suite.project;
  const r = await cli(['create-org-key', '--json'], suite.env);
  expect(r.code, r.stderr).toBe(0);
  org = JSON.parse(r.stdout.trim());
  analytics = createAnalyticsClient({ url: suite.ch.url });
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await analytics?.close();
  await stopServiceSuite(suite, receiver);
});

interface Sent {
  spanId: string;
  scoreId: string;
  window: number;
  userId: string | undefined;
}
const sent: Sent[] = [];

/** A one-span trace over OTLP (version 4: it lands in events_full) and a score, `window` hours after T0. */
async function sendAt(window: number, userId?: string): Promise<void> {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  const nanos = BigInt(T0 + window * HOUR + 60_000) * 1_000_000n;
  const attributes = userId ? [{ key: 'langfuse.user.id', value: { stringValue: userId } }] : [];
  const res = await api(projectServer(), 'POST', '/api/public/otel/v1/traces', {
    resourceSpans: [
      {
        resource: {},
        scopeSpans: [
          {
            scope: { name: 'integrations' },
            spans: [
              {
                traceId,
                spanId,
                name: `span-${window}`,
                kind: 1,
                startTimeUnixNano: String(nanos),
                endTimeUnixNano: String(nanos + 2_000_000_000n),
                attributes,
              },
            ],
          },
        ],
      },
    ],
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const scoreId = `score-${spanId}`;
  const score = await api(projectServer(), 'POST', '/api/public/scores', {
    id: scoreId,
    traceId,
    name: 'quality',
    value: 0.5,
    timestamp: new Date(T0 + window * HOUR + 60_000).toISOString(),
  });
  expect(score.status, JSON.stringify(score.body)).toBeLessThan(300);
  sent.push({ spanId, scoreId, window, userId });
}

async function objectKeys(prefix: string): Promise<string[]> {
  const out = await suite.s3.client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!).sort();
}
async function gzJsonl(key: string): Promise<Record<string, unknown>[]> {
  const out = await suite.s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return gunzipSync(Buffer.from(await out.Body!.transformToByteArray()))
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

const integrationBody = () => ({
  projectId: project.projectId,
  type: 'S3_COMPATIBLE',
  bucketName: BUCKET,
  endpoint: suite.s3.endpoint,
  region: 'us-east-1',
  accessKeyId: suite.s3.accessKeyId,
  secretAccessKey: suite.s3.secretAccessKey,
  prefix: 'observatory/',
  exportFrequency: 'hourly',
  enabled: true,
  forcePathStyle: true,
  fileType: 'JSONL',
  exportMode: 'FROM_CUSTOM_DATE',
  exportStartDate: new Date(T0).toISOString(),
  exportSource: 'OBSERVATIONS_V2',
});

describe('the data', () => {
  it('is sent into three past windows and lands in events_full and scores', async () => {
    for (const [window, user] of [
      [0, 'alice'],
      [0, undefined],
      [1, 'bob'],
      [2, undefined],
    ] as const)
      await sendAt(window, user);
    await eventually(
      'spans and scores stored',
      async () => {
        const rs = await analytics.query({
          query: `SELECT (SELECT count() FROM events_full FINAL WHERE project_id = {p:String})
                    + (SELECT count() FROM scores FINAL WHERE project_id = {p:String}) AS n`,
          query_params: { p: project.projectId },
          format: 'JSONEachRow',
        });
        const [row] = await rs.json<{ n: string }>();
        return Number(row?.n) === 2 * sent.length ? true : undefined;
      },
      60_000,
    );
  });
});

describe('blob storage integrations', () => {
  let id = '';

  it("PUT without credentials is refused naming accessKeyId (the server's own are never lent), storing nothing", async () => {
    const { accessKeyId: _id, secretAccessKey: _secret, ...bare } = integrationBody();
    const res = await api<Record<string, unknown>>(
      adminServer(),
      'PUT',
      '/api/public/integrations/blob-storage',
      bare,
    );
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('accessKeyId');
    expect((await suite.pool.query('SELECT id FROM blob_storage_integrations')).rows).toEqual([]);
    expect(await objectKeys('observatory/.observatory-connection-test')).toEqual([]);
  });

  it('PUT creates the project integration in the reference shape, checked by a test upload; the secret is sealed and never answered', async () => {
    const res = await api<Record<string, unknown>>(
      adminServer(),
      'PUT',
      '/api/public/integrations/blob-storage',
      integrationBody(),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    id = res.body['id'] as string;
    // The request echoed, with the defaults and without the secret.
    const { secretAccessKey: _secret, ...echoed } = integrationBody();
    expect(res.body).toMatchObject({
      ...echoed,
      compressed: true,
      exportFieldGroups: null,
      lastSyncAt: null,
      nextSyncAt: null,
      lastError: null,
    });
    expect(res.body).not.toHaveProperty('secretAccessKey');
    expect(JSON.stringify(res.body)).not.toContain(suite.s3.secretAccessKey);
    expect(await objectKeys('observatory/.observatory-connection-test')).toHaveLength(1);
    const { rows } = await suite.pool.query(
      'SELECT secret_access_key_encrypted AS s FROM blob_storage_integrations',
    );
    expect(rows[0].s).not.toContain(suite.s3.secretAccessKey);

    const list = await api<{ data: { id: string }[] }>(
      adminServer(),
      'GET',
      '/api/public/integrations/blob-storage',
    );
    expect(list.body.data.map((i) => i.id)).toEqual([id]);
    expect(JSON.stringify(list.body)).not.toContain(suite.s3.secretAccessKey);
    const status = await api(adminServer(), 'GET', `/api/public/integrations/blob-storage/${id}`);
    expect(status.body).toEqual({
      id,
      projectId: project.projectId,
      syncStatus: 'queued',
      enabled: true,
      lastSyncAt: null,
      nextSyncAt: null,
      lastError: null,
      lastErrorAt: null,
    });
  });

  it('refuses bad bodies naming the field, wrong credentials by the test upload, project keys and other organizations', async () => {
    const put = (body: unknown, as = adminServer()) =>
      api<{ message: string; error?: string }>(as, 'PUT', '/api/public/integrations/blob-storage', body);
    const azure = await put({ ...integrationBody(), type: 'AZURE_BLOB_STORAGE' });
    expect([azure.status, azure.body.error]).toEqual([400, expect.stringContaining('type')]);
    const slash = await put({ ...integrationBody(), prefix: 'no-slash' });
    expect([slash.status, slash.body.error]).toEqual([400, expect.stringContaining('prefix')]);
    const legacy = await put({ ...integrationBody(), exportSource: 'LEGACY_TRACES_OBSERVATIONS' });
    expect([legacy.status, legacy.body.error]).toEqual([400, expect.stringContaining('events_only')]);
    // The outbound address policy of LLM connections: only 127.0.0.1 is whitelisted here.
    const internal = await put({ ...integrationBody(), endpoint: 'http://127.0.0.2:9' });
    expect([internal.status, internal.body.error]).toEqual([
      400,
      expect.stringMatching(/^endpoint: .*127\.0\.0\.2/),
    ]);
    const wrong = await put({ ...integrationBody(), secretAccessKey: 'not-the-secret' });
    expect([wrong.status, wrong.body.message]).toEqual([400, expect.stringContaining('test upload')]);
    expect(wrong.body.message).not.toContain('not-the-secret');
    const stranger = await put({ ...integrationBody(), projectId: 'no-such-project' });
    expect(stranger.status).toBe(404);
    expect((await put(integrationBody(), projectServer())).status).toBe(403);
    expect((await api(projectServer(), 'GET', '/api/public/integrations/blob-storage')).status).toBe(403);
  });

  it('a pass that dies between a window’s files and its checkpoint: the next pass rewrites that window, skips none', async () => {
    const llm = config().llm;
    let puts = 0;
    // The storage of a worker killed right after the third file (the first of the second window).
    const dying = async (...args: Parameters<typeof destinationOf>): Promise<BlobStore> => {
      const store = await destinationOf(...args);
      return {
        ...store,
        async put(key, body, type) {
          await store.put(key, body, type);
          if (++puts === 3) throw new Error('worker killed');
        },
      };
    };
    const settings = config().mode;
    const cut = await runBlobIntegrationPass({
      pool: suite.pool,
      analytics,
      llm,
      settings,
      now: () => NOW,
      destination: dying,
    });
    expect(cut.failed).toEqual([{ projectId: project.projectId, error: 'worker killed' }]);
    expect(cut.windows).toBe(1);
    const error = await api<{ syncStatus: string; lastSyncAt: string }>(
      adminServer(),
      'GET',
      `/api/public/integrations/blob-storage/${id}`,
    );
    expect(error.body).toMatchObject({ syncStatus: 'error', lastSyncAt: new Date(T0 + HOUR).toISOString() });

    const done = await runBlobIntegrationPass({ pool: suite.pool, analytics, llm, settings, now: () => NOW });
    expect(done).toMatchObject({ windows: 2, files: 4, failed: [] });
    const folder = `observatory/${project.projectId}/`;
    const keys = await objectKeys(folder);
    const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, '').replace('.000Z', 'Z');
    const windows = [0, 1, 2].map((w) => `${stamp(T0 + w * HOUR)}_${stamp(T0 + (w + 1) * HOUR)}.jsonl.gz`);
    expect(keys).toEqual([
      ...windows.map((w) => `${folder}observations_v2/${w}`),
      ...windows.map((w) => `${folder}scores/${w}`),
    ]);
    // Each window's file holds exactly the rows sent into it, each once.
    for (const [w, name] of windows.entries()) {
      const inWindow = sent.filter((x) => x.window === w);
      const spans = (await gzJsonl(`${folder}observations_v2/${name}`)).map((r) => r['id']);
      expect(spans.sort()).toEqual(inWindow.map((x) => x.spanId).sort());
      const scores = (await gzJsonl(`${folder}scores/${name}`)).map((r) => r['id']);
      expect(scores.sort()).toEqual(inWindow.map((x) => x.scoreId).sort());
    }
    const status = await api<Record<string, unknown>>(
      adminServer(),
      'GET',
      `/api/public/integrations/blob-storage/${id}`,
    );
    expect(status.body).toMatchObject({
      lastSyncAt: new Date(T0 + 3 * HOUR).toISOString(),
      nextSyncAt: new Date(T0 + 4 * HOUR + 20 * 60_000).toISOString(),
      lastError: null,
    });
    // Nothing more is due at this clock.
    expect(
      await runBlobIntegrationPass({ pool: suite.pool, analytics, llm, settings, now: () => NOW }),
    ).toMatchObject({
      windows: 0,
      files: 0,
    });
  });

  it('DELETE removes it; then it is not found', async () => {
    const del = await api(adminServer(), 'DELETE', `/api/public/integrations/blob-storage/${id}`);
    expect([del.status, del.body]).toEqual([
      200,
      { message: 'Blob storage integration deleted successfully' },
    ]);
    expect((await api(adminServer(), 'GET', `/api/public/integrations/blob-storage/${id}`)).status).toBe(404);
  });
});

/** PostHog's capture API: `POST /batch/` with the project API key and events. */
const captureBatch = z
  .object({
    api_key: z.string().min(1),
    batch: z
      .array(
        z
          .object({
            event: z.string().min(1),
            distinct_id: z.string().min(1),
            timestamp: z.iso.datetime(),
            uuid: z.uuid(),
            properties: z.record(z.string(), z.unknown()),
          })
          .strict(),
      )
      .min(1),
  })
  .strict();

describe('the PostHog export', () => {
  it('sends every enriched observation once in PostHog batches, retrying a 500, and moves its checkpoint', async () => {
    const put = await api<Record<string, unknown>>(adminServer(), 'PUT', '/api/public/integrations/posthog', {
      projectId: project.projectId,
      posthogHostname: receiver.url,
      posthogProjectApiKey: 'phc_secret_key',
      enabled: true,
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(JSON.stringify(put.body)).not.toContain('phc_secret_key');
    const { rows } = await suite.pool.query('SELECT api_key_encrypted AS k FROM posthog_integrations');
    expect(rows[0].k).not.toContain('phc_secret_key');

    receiver.script('/batch/', [500, 200]);
    const r = await runPostHogPass({
      pool: suite.pool,
      analytics,
      llm: config().llm,
      baseUrl: 'https://obs.example',
      now: () => NOW,
      batchSize: 3,
      retryBaseMs: 10,
    });
    expect(r.failed).toEqual([]);
    expect(r.events).toBe(sent.length);

    const requests = receiver.on('/batch/');
    for (const req of requests) {
      expect(req.headers['content-type']).toBe('application/json');
      captureBatch.parse(JSON.parse(req.body));
    }
    expect(requests.map((q) => q.status)).toEqual([500, 200, 200]);
    const accepted = requests
      .filter((q) => q.status === 200)
      .flatMap((q) => captureBatch.parse(JSON.parse(q.body)).batch);
    expect(accepted.map((e) => e.properties['langfuse_id']).sort()).toEqual(sent.map((x) => x.spanId).sort());
    expect(new Set(accepted.map((e) => e.uuid)).size).toBe(accepted.length);
    for (const e of accepted) {
      const source = sent.find((x) => x.spanId === e.properties['langfuse_id'])!;
      expect(e.event).toBe('langfuse observation');
      expect(e.timestamp).toBe(new Date(T0 + source.window * HOUR + 60_000).toISOString());
      expect(e.properties['langfuse_project_id']).toBe(project.projectId);
      if (source.userId) {
        expect(e.distinct_id).toBe(source.userId);
        expect(e.properties['$set']).toEqual({
          langfuse_user_url: `https://obs.example/project/${project.projectId}/users/${source.userId}`,
        });
      } else {
        expect([e.distinct_id, e.properties['$process_person_profile']]).toEqual([e.uuid, false]);
      }
    }
    const listed = await api<{ data: Record<string, unknown>[] }>(
      adminServer(),
      'GET',
      '/api/public/integrations/posthog',
    );
    expect(listed.body.data).toEqual([
      expect.objectContaining({ projectId: project.projectId, eventsSent: sent.length, lastError: null }),
    ]);
    // The checkpoint moved: a second pass at the same clock sends nothing.
    const again = await runPostHogPass({
      pool: suite.pool,
      analytics,
      llm: config().llm,
      baseUrl: '',
      now: () => NOW,
    });
    expect(again.events).toBe(0);
    expect(receiver.on('/batch/')).toHaveLength(3);
  });

  it('a 401 is not retried and is recorded; DELETE removes the integration', async () => {
    await suite.pool.query('UPDATE posthog_integrations SET checkpoint = $1', [new Date(T0)]);
    receiver.script('/batch/', [401]);
    const before = receiver.on('/batch/').length;
    const r = await runPostHogPass({
      pool: suite.pool,
      analytics,
      llm: config().llm,
      baseUrl: '',
      now: () => NOW,
    });
    expect(r.failed).toEqual([
      { projectId: project.projectId, error: 'PostHog answered 401 to POST /batch/' },
    ]);
    expect(receiver.on('/batch/').length - before).toBe(1);
    const del = await api(adminServer(), 'DELETE', `/api/public/integrations/posthog/${project.projectId}`);
    expect(del.status).toBe(200);
    expect(
      (await api<{ data: unknown[] }>(adminServer(), 'GET', '/api/public/integrations/posthog')).body.data,
    ).toEqual([]);
  });
});

describe('the worker', () => {
  it('delivers both integrations on its own: CSV files of the closed windows and every observation to PostHog', async () => {
    const put = await api<{ id: string }>(adminServer(), 'PUT', '/api/public/integrations/blob-storage', {
      ...integrationBody(),
      prefix: 'by-worker/',
      fileType: 'CSV',
      compressed: false,
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const posthog = await api(adminServer(), 'PUT', '/api/public/integrations/posthog', {
      projectId: project.projectId,
      posthogHostname: receiver.url,
      posthogProjectApiKey: 'phc_worker',
      enabled: true,
    });
    expect(posthog.status).toBe(200);
    receiver.script('/batch/', [200]);
    const before = receiver.on('/batch/').length;
    const worker = await startWorker({
      ...suite.env,
      ...MODE_ENV.events_only,
      SERVICE_EXPORT_INTERVAL_SECONDS: '1',
      SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER: 'false',
    });
    try {
      await eventually(
        'both integrations delivered by the worker',
        async () => {
          const blob = await api<{ lastSyncAt: string | null }>(
            adminServer(),
            'GET',
            `/api/public/integrations/blob-storage/${put.body.id}`,
          );
          const ph = await api<{ data: { eventsSent: number }[] }>(
            adminServer(),
            'GET',
            '/api/public/integrations/posthog',
          );
          const synced = Date.parse(blob.body.lastSyncAt ?? '') >= T0 + 3 * HOUR;
          // Not there yet: the state goes into the timeout's message.
          if (!synced || ph.body.data[0]?.eventsSent !== sent.length)
            throw new Error(JSON.stringify({ blob: blob.body, posthog: ph.body.data }));
          return true;
        },
        60_000,
      );
    } finally {
      await worker.stop();
    }
    const folder = `by-worker/${project.projectId}/observations_v2/`;
    const keys = await objectKeys(folder);
    const ids: string[] = [];
    for (const key of keys) {
      const out = await suite.s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
      const [header, ...lines] = (await out.Body!.transformToString()).trim().split('\r\n');
      if (!header) continue;
      const column = header.split(',').indexOf('id');
      ids.push(...lines.map((l) => l.split(',')[column]!));
    }
    expect(ids.sort()).toEqual(sent.map((x) => x.spanId).sort());
    const events = receiver
      .on('/batch/')
      .slice(before)
      .flatMap((q) => captureBatch.parse(JSON.parse(q.body)).batch);
    expect(events.map((e) => e.properties['langfuse_id']).sort()).toEqual(sent.map((x) => x.spanId).sort());
  });
});
