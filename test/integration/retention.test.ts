/**
 * Per-project data retention on real PostgreSQL, the ClickHouse engine and an S3 server: an owner
 * sets the days through the UI route (a member cannot; the reference's bounds are refused naming
 * the field), the public projects API shows them as the SDKs read them, and the worker's pass
 * deletes exactly what expired. Every table a trace has rows in is read back and compared row by
 * row: an old trace leaves everywhere (media object included), a trace with anything recent stays
 * whole, old scores without a trace go, another project keeps everything; the deletions are audited
 * with the retention policy as the actor, and two replicas' passes never run one project twice.
 */
import { randomBytes } from 'node:crypto';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { LangfuseClient } from '@langfuse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRetentionPass } from '../../server/features/deletion/retention.ts';
import type { TraceDeletionDeps } from '../../server/features/deletion/traces.ts';
import { s3BlobStore } from '../../server/platform/blobs/s3.ts';
import type { BlobStore } from '../../server/platform/blobs/store.ts';
import { insertTraceRows, traceRowsOf } from '../fixtures/project-deletion.ts';
import { S3_REGION } from '../fixtures/s3.ts';
import { MODE_ENV, type Project } from '../fixtures/service.ts';
import {
  type Given,
  type ServiceSuite,
  startServiceSuite,
  stopServiceSuite,
} from '../fixtures/service-suite.ts';
import { newProjectMember, request, signIn } from '../fixtures/ui-client.ts';

const BUCKET = 'retention-media';
const DAY = 24 * 60 * 60 * 1000;
const NOW = new Date();

let suite: ServiceSuite & Given<{ buckets: string[] }>;
let media: BlobStore;
let deps: TraceDeletionDeps;
let kept: Project;
let other: Project;

beforeAll(async () => {
  suite = await startServiceSuite({
    project: 'ret-kept',
    others: ['ret-other'],
    buckets: [BUCKET],
    env: MODE_ENV.dual,
  });
  [kept, other] = [suite.project, suite.others[0]!];
  media = s3BlobStore({
    bucket: BUCKET,
    prefix: '',
    region: S3_REGION,
    endpoint: suite.s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: suite.s3.accessKeyId, secretAccessKey: suite.s3.secretAccessKey },
  });
  deps = {
    pool: suite.pool,
    analytics: suite.ch.client,
    mediaBlobs: media,
    release: '4',
    form: 'mutation',
    dialect: { cluster: false, clusterName: 'default' },
  };
});

afterAll(async () => {
  media?.close();
  await stopServiceSuite(suite);
});

const hex = (n: number) => randomBytes(n).toString('hex');
const at = (daysAgo: number) =>
  new Date(NOW.getTime() - daysAgo * DAY).toISOString().replace('T', ' ').replace('Z', '');

/**
 * One trace's rows in every analytics table, a comment and a media object only it links. Its trace
 * row is `traceAge` days old, its observation and event `spanAge` days old.
 */
async function seedTrace(projectId: string, traceId: string, traceAge: number, spanAge = traceAge) {
  await insertTraceRows(suite.ch.client, projectId, traceId, { trace: at(traceAge), span: at(spanAge) });
  await suite.pool.query(
    `INSERT INTO comments (id, project_id, object_type, object_id, content) VALUES ($1, $2, 'TRACE', $3, 'c')`,
    [hex(8), projectId, traceId],
  );
  const key = `${projectId}/${traceId}.png`;
  await suite.s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: randomBytes(16) }));
  await suite.pool.query(
    `INSERT INTO media (id, project_id, sha_256_hash, bucket_name, bucket_path, content_type, content_length)
     VALUES ($1, $2, $1, $3, $4, 'image/png', 16)`,
    [`${traceId}-media`, projectId, BUCKET, key],
  );
  await suite.pool.query(
    `INSERT INTO trace_media (project_id, trace_id, media_id, field) VALUES ($1, $2, $3, 'input')`,
    [projectId, traceId, `${traceId}-media`],
  );
}

async function seedTracelessScore(projectId: string, id: string, age: number) {
  await suite.ch.client.insert({
    table: 'scores',
    values: [
      {
        id,
        project_id: projectId,
        session_id: 's',
        timestamp: at(age),
        name: 'q',
        value: 1,
        source: 'API',
        event_ts: at(age),
      },
    ],
    format: 'JSONEachRow',
  });
}

const TRACE_COLUMN: Record<string, string> = {
  traces: 'id',
  observations: 'trace_id',
  scores: "ifNull(trace_id, concat('score:', id))",
  events_full: 'trace_id',
  events_core: 'trace_id',
};

/** Every row of the projects' traces in every table, as `table project trace`, and their media objects. */
async function rowsOf(projectIds: string[]): Promise<string[]> {
  const out = await traceRowsOf(suite.ch.client, TRACE_COLUMN, projectIds);
  const comments = await suite.pool.query(
    'SELECT project_id, object_id FROM comments WHERE project_id = ANY($1)',
    [projectIds],
  );
  for (const r of comments.rows) out.push(`comments ${r.project_id} ${r.object_id}`);
  const rows = await suite.pool.query(
    'SELECT project_id, id, bucket_path FROM media WHERE project_id = ANY($1)',
    [projectIds],
  );
  for (const r of rows.rows) {
    out.push(`media ${r.project_id} ${r.id}`);
    const head = await suite.s3.client
      .send(new HeadObjectCommand({ Bucket: BUCKET, Key: r.bucket_path }))
      .catch(() => undefined);
    if (head) out.push(`object ${r.bucket_path}`);
  }
  return out.sort();
}

function traceRows(projectId: string, traceId: string): string[] {
  return [
    ...Object.keys(TRACE_COLUMN).map((t) => `${t} ${projectId} ${traceId}`),
    `comments ${projectId} ${traceId}`,
    `media ${projectId} ${traceId}-media`,
    `object ${projectId}/${traceId}.png`,
  ];
}

describe('setting retention', () => {
  it('owners set it through the UI, members cannot, bounds named; the public API shows it as the SDK reads it', async () => {
    const owner = await newProjectMember(suite.env, kept.projectId, 'owner');
    const member = await newProjectMember(suite.env, kept.projectId, 'member');
    const [o, m] = [await signIn(suite.web.url, owner), await signIn(suite.web.url, member)];
    const put = (b: typeof o, retentionDays: unknown) =>
      request(b, 'PUT', `/api/ui/projects/${kept.projectId}/retention`, {
        body: { retentionDays },
        headers: { 'x-csrf-token': b.csrf },
      });

    expect((await put(m, 30)).status).toBe(403);
    for (const bad of [2, -1, 1.5, '30']) {
      const r = await put(o, bad);
      expect(r.status, String(bad)).toBe(400);
      expect(JSON.stringify(r.body)).toContain('retentionDays');
    }
    const sdk = new LangfuseClient({
      publicKey: kept.publicKey,
      secretKey: kept.secretKey,
      baseUrl: suite.web.url,
    });
    expect((await sdk.api.projects.get()).data[0]).not.toHaveProperty('retentionDays');

    const ok = await put(o, 30);
    expect(ok.status).toBe(200);
    expect(ok.body.project).toMatchObject({ id: kept.projectId, retentionDays: 30 });
    expect((await sdk.api.projects.get()).data[0]).toMatchObject({ id: kept.projectId, retentionDays: 30 });
    const listed = await request(o, 'GET', '/api/ui/projects');
    expect(listed.body.data.find((p: { id: string }) => p.id === kept.projectId)).toMatchObject({
      retentionDays: 30,
    });

    // Another project's owner cannot reach it (the project scope answers as for a missing project).
    const stranger = await newProjectMember(suite.env, other.projectId, 'owner');
    expect((await put(await signIn(suite.web.url, stranger), 3)).status).toBe(404);
    expect((await sdk.api.projects.get()).data[0]).toMatchObject({ retentionDays: 30 });
  });
});

describe('the retention pass', () => {
  it('deletes what expired, everywhere, audited; keeps the rest whole; one replica per project', async () => {
    await suite.pool.query(
      'UPDATE projects SET retention_days = 30, retention_applied_at = NULL WHERE id = $1',
      [kept.projectId],
    );
    const [old, mixed, recent, old2] = [hex(16), hex(16), hex(16), hex(16)];
    await seedTrace(kept.projectId, old, 40);
    await seedTrace(kept.projectId, old2, 31);
    // Started 40 days ago, still running yesterday: not expired.
    await seedTrace(kept.projectId, mixed, 40, 1);
    await seedTrace(kept.projectId, recent, 2);
    await seedTrace(other.projectId, old, 40);
    await seedTracelessScore(kept.projectId, 'old-session-score', 45);
    await seedTracelessScore(kept.projectId, 'new-session-score', 5);
    const before = await rowsOf([kept.projectId, other.projectId]);
    const expired = [
      ...traceRows(kept.projectId, old),
      ...traceRows(kept.projectId, old2),
      `scores ${kept.projectId} score:old-session-score`,
    ];
    expect(before).toEqual(expect.arrayContaining([...expired, ...traceRows(other.projectId, old)]));

    // Two replicas tick at once: the project is claimed by one.
    const reports = await Promise.all([runRetentionPass(deps, NOW), runRetentionPass(deps, NOW)]);
    expect(reports.map((r) => r.projects).sort()).toEqual([0, 1]);
    expect(reports.reduce((n, r) => n + r.traces, 0)).toBe(2);
    expect(reports.reduce((n, r) => n + r.scores, 0)).toBe(1);
    expect(await rowsOf([kept.projectId, other.projectId])).toEqual(
      before.filter((r) => !expired.includes(r)),
    );

    const audited = await suite.pool.query(
      `SELECT resource_type, resource_id, action, api_key_id FROM audit_logs WHERE project_id = $1 AND action = 'retention'
       ORDER BY resource_type, resource_id`,
      [kept.projectId],
    );
    expect(audited.rows).toEqual(
      [
        { resource_type: 'score', resource_id: 'old-session-score' },
        ...[old, old2].sort().map((id) => ({ resource_type: 'trace', resource_id: id })),
      ].map((r) => ({ ...r, action: 'retention', api_key_id: null })),
    );

    // The project is not due again within the hour; 30 days on, everything of it has expired.
    expect(await runRetentionPass(deps, NOW)).toEqual({ projects: 0, traces: 0, scores: 0 });
    const later = new Date(NOW.getTime() + 30 * DAY);
    expect(await runRetentionPass(deps, later)).toEqual({ projects: 1, traces: 2, scores: 1 });
    expect(await rowsOf([kept.projectId])).toEqual([]);
    // The project without retention keeps everything.
    expect(await rowsOf([other.projectId])).toEqual(traceRows(other.projectId, old).sort());
  });
});
