/**
 * Deletion through the real JS SDK (`@langfuse/client` 5.x) against `observatory web` on real
 * PostgreSQL and the ClickHouse engine: prompt versions (all, by version, by label) and traces
 * (one and in bulk) in every write mode. Every table a trace can have rows in is seeded for two
 * traces of the project and for the same trace id in another project; a trace deletion is queued
 * and `observatory worker` runs it (each wait bounded, on `GET /api/public/trace-deletions/{id}`);
 * afterwards every table is read back and compared row by row: only the deleted trace's rows are
 * gone, and each deletion is in the audit log with the calling key. Last, the audit log migration
 * goes down and up again.
 */
import { randomBytes } from 'node:crypto';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { LangfuseClient } from '@langfuse/client';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelationalMigrator } from '../../server/platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../../server/platform/migrations/relational/versions.ts';
import { api, runPython } from '../conformance/env.ts';
import { ensurePythonSdk } from '../conformance/python-sdks.ts';
import { mediaIdOfImage, randomPng, traceImageWithJsSdk } from '../fixtures/media.ts';
import { insertTraceRows, traceRowsOf } from '../fixtures/project-deletion.ts';
import { type S3Server, startS3Server } from '../fixtures/s3.ts';
import {
  createProject,
  type Env,
  MODE_ENV,
  type Mode,
  type Project,
  startWeb,
  startWorker,
  type WebServer,
} from '../fixtures/service.ts';
import { type Given, type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';
import { waitFor } from '../fixtures/wait.ts';

const MODES = Object.keys(MODE_ENV) as Mode[];

let stores: Stores & Given<{ redis: true }>;
/** Runs the queued trace deletions of every project (the media suite's own, with its bucket, last). */
let worker: WebServer;
const webs = {} as Record<Mode, WebServer>;
const projects = {} as Record<Mode, Project>;
let other: Project;

beforeAll(async () => {
  stores = await startStores({ redis: true });
  // Redis is the worker's alone: the webs run without it.
  const base: Env = { DATABASE_URL: stores.pg.url, CLICKHOUSE_URL: stores.ch.url };
  webs.legacy = await startWeb({ ...base, ...MODE_ENV.legacy });
  webs.dual = await startWeb({ ...base, ...MODE_ENV.dual });
  webs.events_only = await startWeb({ ...base, ...MODE_ENV.events_only });
  // The worker deletes with mutations (`ALTER TABLE ... DELETE`); the queue's suite
  // (deletion-queue.test.ts) runs lightweight `DELETE FROM`: both forms run.
  worker = await startWorker({ ...base, REDIS_URL: stores.redis.url, ...MODE_ENV.events_only });
  for (const mode of MODES) projects[mode] = await createProject(base, `del-${mode}`);
  other = await createProject(base, 'del-other');
});

afterAll(async () => {
  await stopStores(stores, ...Object.values(webs), worker);
});

const PYTHON_SDK = '5.0.4';
const hex = (n: number) => randomBytes(n).toString('hex');
const sdk = (mode: Mode, p: Project = projects[mode]) =>
  new LangfuseClient({ publicKey: p.publicKey, secretKey: p.secretKey, baseUrl: webs[mode].url });

/** The API as `p` calls it on the web of `mode`. */
const call = (mode: Mode, method: string, path: string, body?: unknown, p: Project = projects[mode]) =>
  api<Record<string, unknown>>({ url: webs[mode].url, ...p }, method, path, body);

/** Waits (bounded) until the worker ran the deletion a delete call answered with. */
async function deleted(url: string, p: Project, answer: unknown): Promise<void> {
  const { deletionId } = answer as { deletionId: string };
  await waitFor(`trace deletion ${deletionId}`, async () => {
    const res = await api<{ status: string }>(
      { url, ...p },
      'GET',
      `/api/public/trace-deletions/${deletionId}`,
    );
    return res.body.status === 'succeeded' ? true : undefined;
  });
}

/** Waits (bounded) until no trace deletion of the project is under way. */
const noneUnderway = (url: string, p: Project) =>
  waitFor('no trace deletion under way', async () => {
    const res = await api<{ data: unknown[] }>({ url, ...p }, 'GET', '/api/public/trace-deletions');
    return res.body.data.length === 0 ? true : undefined;
  });

describe('prompt deletion (langfuse.prompt.delete)', () => {
  it('deletes by version, by label and by name, moving `latest`; 404 when nothing matches; 400 for both', async () => {
    const lf = sdk('dual');
    const name = `team/greet-${hex(3)}`;
    for (const [text, labels] of [
      ['v1', ['production']],
      ['v2', ['staging']],
      ['v3', []],
      ['v4', []],
    ] as const) {
      await lf.api.prompts.create({ name, prompt: text, type: 'text', labels: [...labels] });
    }
    await sdk('dual', other).api.prompts.create({
      name,
      prompt: 'theirs',
      type: 'text',
      labels: ['production'],
    });
    const versions = async () =>
      (
        await stores.pool.query(
          'SELECT version, labels FROM prompts WHERE project_id = $1 AND name = $2 ORDER BY version',
          [projects.dual.projectId, name],
        )
      ).rows;

    await lf.prompt.delete(name, { version: 4 });
    expect(await versions()).toEqual([
      { version: 1, labels: ['production'] },
      { version: 2, labels: ['staging'] },
      { version: 3, labels: ['latest'] },
    ]);
    await lf.prompt.delete(name, { label: 'staging' });
    expect((await versions()).map((v) => v.version)).toEqual([1, 3]);
    expect(await lf.prompt.get(name, { cacheTtlSeconds: 0 })).toMatchObject({ version: 1, prompt: 'v1' });

    const enc = encodeURIComponent(name);
    expect((await call('dual', 'DELETE', `/api/public/v2/prompts/${enc}?version=9`)).status).toBe(404);
    expect((await call('dual', 'DELETE', `/api/public/v2/prompts/${enc}?label=nope`)).status).toBe(404);
    const both = await call('dual', 'DELETE', `/api/public/v2/prompts/${enc}?version=1&label=production`);
    expect(both.status).toBe(400);
    expect(JSON.stringify(both.body)).toContain('label');
    // Another project's key deletes nothing here, and gets 404 for a name only this project has.
    expect(
      (await call('dual', 'DELETE', `/api/public/v2/prompts/${enc}?version=3`, undefined, other)).status,
    ).toBe(404);
    expect((await versions()).map((v) => v.version)).toEqual([1, 3]);

    const all = await call('dual', 'DELETE', `/api/public/v2/prompts/${enc}`);
    expect(all.status).toBe(204);
    expect(await versions()).toEqual([]);
    expect((await call('dual', 'GET', `/api/public/v2/prompts/${enc}`)).status).toBe(404);
    expect((await call('dual', 'DELETE', `/api/public/v2/prompts/${enc}`)).status).toBe(404);
    // The other project's prompt of the same name is untouched.
    expect(await sdk('dual', other).prompt.get(name, { cacheTtlSeconds: 0 })).toMatchObject({
      prompt: 'theirs',
    });

    const audited = await stores.pool.query(
      `SELECT a.resource_type, a.action, k.public_key FROM audit_logs a JOIN api_keys k ON k.id = a.api_key_id
       WHERE a.project_id = $1 AND a.resource_type = 'prompt' ORDER BY a.created_at`,
      [projects.dual.projectId],
    );
    expect(audited.rows).toEqual(
      Array.from({ length: 4 }, () => ({
        resource_type: 'prompt',
        action: 'delete',
        public_key: projects.dual.publicKey,
      })),
    );
  });
});

const now = () => new Date().toISOString().replace('T', ' ').replace('Z', '');

/** One trace's rows in every analytics table, keyed so every row names its project and trace. */
async function seedAnalytics(projectId: string, traceId: string) {
  const ts = now();
  const obs = `${traceId}-obs`;
  await insertTraceRows(stores.ch.client, projectId, traceId, { trace: ts, span: ts });
  // The staging copy too: a deletion must not leave the span there to be propagated again.
  await stores.ch.client.insert({
    table: 'observations_batch_staging',
    values: [
      {
        id: obs,
        trace_id: traceId,
        project_id: projectId,
        type: 'SPAN',
        start_time: ts,
        event_ts: ts,
        s3_first_seen_timestamp: ts,
      },
    ],
    format: 'JSONEachRow',
  });
}

/** Comments on the trace and its observation, and media: one content only the trace links, one shared. */
async function seedRelational(projectId: string, traceId: string, shared: string) {
  const obs = `${traceId}-obs`;
  await stores.pool.query(
    `INSERT INTO comments (id, project_id, object_type, object_id, content)
     VALUES ($1, $2, 'TRACE', $3, 'c'), ($4, $2, 'OBSERVATION', $5, 'c')`,
    [hex(8), projectId, traceId, hex(8), obs],
  );
  const own = `${traceId}-media`;
  for (const id of [own, shared]) {
    await stores.pool.query(
      `INSERT INTO media (id, project_id, sha_256_hash, bucket_name, bucket_path, content_type, content_length)
       VALUES ($1, $2, $1, 'b', $1, 'image/png', 1) ON CONFLICT DO NOTHING`,
      [id, projectId],
    );
  }
  await stores.pool.query(
    `INSERT INTO trace_media (project_id, trace_id, media_id, field) VALUES ($1, $2, $3, 'input')`,
    [projectId, traceId, own],
  );
  await stores.pool.query(
    `INSERT INTO observation_media (project_id, trace_id, observation_id, media_id, field) VALUES ($1, $2, $3, $4, 'output')`,
    [projectId, traceId, obs, shared],
  );
}

const TRACE_COLUMN: Record<string, string> = {
  traces: 'id',
  observations: 'trace_id',
  scores: 'trace_id',
  observations_batch_staging: 'trace_id',
  events_full: 'trace_id',
  events_core: 'trace_id',
};

/** Every row of every table that belongs to one of the projects, as `table project trace`. */
async function rowsOf(projectIds: string[]): Promise<string[]> {
  const out = await traceRowsOf(stores.ch.client, TRACE_COLUMN, projectIds);
  const q = async (sql: string, label: string) => {
    for (const r of (await stores.pool.query(sql, [projectIds])).rows)
      out.push(`${label} ${r.project_id} ${r.k}`);
  };
  await q(
    "SELECT project_id, object_type || ':' || object_id AS k FROM comments WHERE project_id = ANY($1)",
    'comments',
  );
  await q('SELECT project_id, id AS k FROM media WHERE project_id = ANY($1)', 'media');
  await q(
    "SELECT project_id, trace_id || ':' || media_id AS k FROM trace_media WHERE project_id = ANY($1)",
    'trace_media',
  );
  await q(
    "SELECT project_id, trace_id || ':' || media_id AS k FROM observation_media WHERE project_id = ANY($1)",
    'observation_media',
  );
  return out.sort();
}

/** The rows `rowsOf` reads for one seeded trace. */
function expectedRows(projectId: string, traceId: string, shared: string): string[] {
  const obs = `${traceId}-obs`;
  return [
    ...Object.keys(TRACE_COLUMN).map((t) => `${t} ${projectId} ${traceId}`),
    `comments ${projectId} TRACE:${traceId}`,
    `comments ${projectId} OBSERVATION:${obs}`,
    `media ${projectId} ${traceId}-media`,
    `media ${projectId} ${shared}`,
    `trace_media ${projectId} ${traceId}:${traceId}-media`,
    `observation_media ${projectId} ${traceId}:${shared}`,
  ];
}

describe('trace deletion (api.trace.delete and deleteMultiple)', () => {
  it.each(MODES)(
    '%s: the trace leaves every table; its sibling and the same id elsewhere stay',
    async (mode) => {
      const p = projects[mode].projectId;
      const [a, b, c] = [hex(16), hex(16), hex(16)];
      const shared = `shared-${hex(4)}`;
      const otherShared = `shared-${hex(4)}`;
      for (const t of [a, b, c]) await seedAnalytics(p, t);
      await seedAnalytics(other.projectId, a);
      for (const t of [a, b, c]) await seedRelational(p, t, shared);
      await seedRelational(other.projectId, a, otherShared);
      // The other project keeps the rows earlier modes' cases left there too.
      const before = await rowsOf([p, other.projectId]);
      expect(before.filter((r) => r.split(' ')[1] === p)).toEqual(
        [...expectedRows(p, a, shared), ...expectedRows(p, b, shared), ...expectedRows(p, c, shared)]
          .filter((r, i, all) => all.indexOf(r) === i)
          .sort(),
      );
      expect(before).toEqual(expect.arrayContaining(expectedRows(other.projectId, a, otherShared)));

      const lf = sdk(mode);
      const one = await lf.api.trace.delete(a);
      expect(one).toEqual({ message: 'Trace deleted successfully', deletionId: expect.any(String) });
      await deleted(webs[mode].url, projects[mode], one);
      // Everything of a but the content b and c still link.
      const gone = new Set(expectedRows(p, a, shared).filter((r) => r !== `media ${p} ${shared}`));
      expect(await rowsOf([p, other.projectId])).toEqual(before.filter((r) => !gone.has(r)));

      // Bulk: b, an id the project never had, and a repeat of a deleted one.
      const missing = hex(16);
      const many = await lf.api.trace.deleteMultiple({ traceIds: [b, missing, a] });
      expect(many).toEqual({ message: 'Traces deleted successfully', deletionId: expect.any(String) });
      await deleted(webs[mode].url, projects[mode], many);
      for (const r of expectedRows(p, b, shared)) if (r !== `media ${p} ${shared}`) gone.add(r);
      expect(await rowsOf([p, other.projectId])).toEqual(before.filter((r) => !gone.has(r)));
      // The shared content stays while c links it, and goes with its last link.
      await deleted(webs[mode].url, projects[mode], await lf.api.trace.delete(c));
      expect(await rowsOf([p])).toEqual([]);

      const audited = await stores.pool.query(
        `SELECT a.resource_id, k.public_key FROM audit_logs a LEFT JOIN api_keys k ON k.id = a.api_key_id
       WHERE a.project_id = $1 AND a.resource_type = 'trace' AND a.action = 'delete'`,
        [p],
      );
      expect(audited.rows.map((r) => r.resource_id).sort()).toEqual([a, a, b, c, missing].sort());
      expect(new Set(audited.rows.map((r) => r.public_key))).toEqual(new Set([projects[mode].publicKey]));
      expect(
        (
          await stores.pool.query(
            "SELECT 1 FROM audit_logs WHERE project_id = $1 AND resource_type = 'trace'",
            [other.projectId],
          )
        ).rowCount,
      ).toBe(0);
    },
  );

  it('answers 400 naming traceIds for an empty or oversized list, and deletes nothing', async () => {
    const before = await rowsOf([projects.legacy.projectId]);
    for (const traceIds of [[], Array.from({ length: 1001 }, () => hex(4))]) {
      const res = await call('legacy', 'DELETE', '/api/public/traces', { traceIds });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain('traceIds');
    }
    expect((await call('legacy', 'DELETE', '/api/public/traces', {})).status).toBe(400);
    expect(await rowsOf([projects.legacy.projectId])).toEqual(before);
  });
});

describe('deletion through the Python SDK (langfuse 5.0.4)', () => {
  beforeAll(() => ensurePythonSdk(PYTHON_SDK, (line) => process.stderr.write(`${line}\n`)), 600_000);

  it('api.prompts.delete by version and by name, api.trace.delete and delete_multiple', async () => {
    const p = projects.events_only;
    const [x, y, z] = [hex(16), hex(16), hex(16)];
    for (const t of [x, y, z]) await seedAnalytics(p.projectId, t);
    const before = await rowsOf([p.projectId]);
    const out = await runPython<Record<string, unknown>>(
      PYTHON_SDK,
      'deletion',
      { url: webs.events_only.url, ...p },
      { CONFORMANCE_CASE: `py-${hex(3)}`, DELETE_TRACE: x, DELETE_TRACES: `${y},${hex(16)}` },
    );
    expect(out).toMatchObject({
      latestAfterVersionDelete: 1,
      one: 'Trace deleted successfully',
      many: 'Traces deleted successfully',
    });
    await noneUnderway(webs.events_only.url, p);
    expect(await rowsOf([p.projectId])).toEqual(
      before.filter((r) => !r.endsWith(` ${x}`) && !r.endsWith(` ${y}`)),
    );
    expect((await rowsOf([p.projectId])).filter((r) => r.endsWith(` ${z}`))).toHaveLength(6);
    const prompts = await stores.pool.query(
      "SELECT 1 FROM prompts WHERE project_id = $1 AND name LIKE 'py-%'",
      [p.projectId],
    );
    expect(prompts.rows).toEqual([]);
  });
});

describe('trace deletion with media in S3 (uploaded by the JS SDK)', () => {
  let s3: S3Server;
  let web: WebServer;
  let project: Project;
  const BUCKET = 'media';
  const PREFIX = 'media/';

  beforeAll(async () => {
    s3 = await startS3Server((line) => process.stderr.write(`${line}\n`));
    await s3.createBucket(BUCKET);
    const base: Env = {
      DATABASE_URL: stores.pg.url,
      CLICKHOUSE_URL: stores.ch.url,
      ...s3.env('media', BUCKET, PREFIX),
    };
    web = await startWeb({ ...base, ...MODE_ENV.events_only });
    // The deleting worker removes media objects: it needs the bucket too.
    await worker.stop();
    worker = await startWorker({ ...base, REDIS_URL: stores.redis.url, ...MODE_ENV.events_only });
    project = await createProject(base, 'del-media');
    new NodeTracerProvider().register();
  }, 1_200_000);

  afterAll(async () => {
    await web?.stop();
    await s3?.stop();
  });

  const objectExists = async (key: string) => {
    try {
      await s3.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
      return true;
    } catch (err) {
      if ((err as { name?: string }).name === 'NotFound') return false;
      throw err;
    }
  };

  it('keeps the object while another trace links the same image, deletes it with the last link', async () => {
    const keys = { url: web.url, publicKey: project.publicKey, secretKey: project.secretKey };
    const image = randomPng();
    const mediaId = mediaIdOfImage(image);
    const key = `${PREFIX}${project.projectId}/${mediaId}.png`;
    const first = await traceImageWithJsSdk(keys, 'first', image);
    const second = await traceImageWithJsSdk(keys, 'second', image);
    expect(await objectExists(key)).toBe(true);
    const lf = new LangfuseClient({ ...keys, baseUrl: web.url });
    const events = async (traceId: string) =>
      (
        await (
          await stores.ch.client.query({
            query: 'SELECT span_id FROM events_full WHERE project_id = {p:String} AND trace_id = {t:String}',
            query_params: { p: project.projectId, t: traceId },
            format: 'JSONEachRow',
          })
        ).json<{ span_id: string }>()
      ).map((r) => r.span_id);
    expect(await events(first.traceId)).toEqual([first.observationId]);

    const mediaProject = { ...keys, projectId: project.projectId };
    await deleted(web.url, mediaProject, await lf.api.trace.delete(first.traceId));
    expect(await events(first.traceId)).toEqual([]);
    expect(await events(second.traceId)).toEqual([second.observationId]);
    expect(await objectExists(key)).toBe(true);
    expect(
      (await api({ ...keys, projectId: project.projectId }, 'GET', `/api/public/media/${mediaId}`)).status,
    ).toBe(200);

    await deleted(web.url, mediaProject, await lf.api.trace.deleteMultiple({ traceIds: [second.traceId] }));
    expect(await objectExists(key)).toBe(false);
    const media = await stores.pool.query('SELECT id FROM media WHERE project_id = $1', [project.projectId]);
    expect(media.rows).toEqual([]);
  });
});

describe('the audit_logs migration', () => {
  it('goes down (table dropped, the rest kept) and up again', async () => {
    const migrator = new RelationalMigrator(stores.pool, relationalMigrationsFor('4'));
    const table = async (name: string) =>
      (await stores.pool.query('SELECT to_regclass($1) IS NOT NULL AS present', [name])).rows[0].present;
    expect(await table('audit_logs')).toBe(true);
    // Every migration after 18, the audit log's, goes down, newest first, and comes up again.
    const after18 = relationalMigrationsFor('4')
      .map((m) => m.version)
      .filter((v) => v > 18);
    expect(await migrator.down(18)).toEqual([...after18].reverse());
    expect([await table('audit_logs'), await table('models'), await table('prompts')]).toEqual([
      false,
      true,
      true,
    ]);
    expect(await migrator.up()).toEqual(after18);
    expect(await table('audit_logs')).toBe(true);
  });
});
