/**
 * Queued trace deletion, on real PostgreSQL and the analytics server, through `observatory web` and
 * `observatory worker` as deployed: the npm `langfuse` 3.x SDK's `traceDelete` and
 * `traceDeleteMultiple` answer at once with the reference's body plus the queued deletion's id,
 * while every row is still there; `GET /api/public/trace-deletions/{id}` shows the progress, and
 * another project's key neither reads the deletion nor loses its rows of the same trace ids. The
 * worker then deletes in bounded batches; a worker killed mid-deletion leaves its progress as it
 * was, and the next worker finishes without losing an id or deleting a finished batch again
 * (the audit log names each id once, but for at most the one batch the kill cut short).
 */
import { randomBytes } from 'node:crypto';
import { Langfuse } from 'langfuse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRACE_DELETION_BATCH } from '../../server/features/deletion/deletion-worker.ts';
import { pruneTraceDeletions } from '../../server/features/deletion/queue.ts';
import { api } from '../conformance/env.ts';
import { MODE_ENV, type Project, startWorker, type WebServer } from '../fixtures/service.ts';
import {
  type Given,
  type ServiceSuite,
  startServiceSuite,
  stopServiceSuite,
} from '../fixtures/service-suite.ts';
import { waitFor } from '../fixtures/wait.ts';

let suite: ServiceSuite & Given<{ redis: true }>;
let worker: WebServer | undefined;
let a: Project;
let b: Project;

beforeAll(async () => {
  suite = await startServiceSuite({
    project: 'delq-a',
    others: ['delq-b'],
    redis: true,
    env: { ...MODE_ENV.dual, COLUMNAR_USE_LIGHTWEIGHT_UPDATE: 'true' },
  });
  a = suite.project;
  [b] = suite.others as [Project];
}, 120_000);

afterAll(async () => {
  await stopServiceSuite(suite, worker);
});

const hex = (n: number) => randomBytes(n).toString('hex');
const call = (p: Project, method: string, path: string, body?: unknown) =>
  api<Record<string, unknown>>({ url: suite.web.url, ...p }, method, path, body);
const sdk = (p: Project) =>
  new Langfuse({ publicKey: p.publicKey, secretKey: p.secretKey, baseUrl: suite.web.url, enabled: true });

/** Traces `<prefix>-0 .. <prefix>-(n-1)` of a project, with two observations each and their events. */
async function seed(projectId: string, prefix: string, n: number) {
  const run = (query: string) => suite.ch.client.command({ query, query_params: { p: projectId, prefix } });
  const id = `concat({prefix:String}, '-', toString(number))`;
  await run(`INSERT INTO traces (id, project_id, timestamp, name, event_ts)
    SELECT ${id}, {p:String}, now64(3), 't', now64(3) FROM numbers(${n})`);
  for (const o of ['o1', 'o2']) {
    await run(`INSERT INTO observations (id, trace_id, project_id, type, start_time, event_ts)
      SELECT concat(${id}, '-${o}'), ${id}, {p:String}, 'SPAN', now64(3), now64(3) FROM numbers(${n})`);
    await run(`INSERT INTO events_full (span_id, trace_id, project_id, start_time)
      SELECT concat(${id}, '-${o}'), ${id}, {p:String}, now64(6) FROM numbers(${n})`);
  }
}
const ids = (prefix: string, n: number, from = 0) =>
  Array.from({ length: n - from }, (_, i) => `${prefix}-${from + i}`);

/** Every row of the project's traces whose id starts with `prefix`, as `table trace observation`. */
async function rowsOf(projectId: string, prefix: string): Promise<string[]> {
  const rs = await suite.ch.client.query({
    query: `SELECT 'traces' AS t, id AS trace, '' AS o FROM traces WHERE project_id = {p:String} AND startsWith(id, {x:String})
      UNION ALL SELECT 'observations', trace_id, id FROM observations WHERE project_id = {p:String} AND startsWith(trace_id, {x:String})
      UNION ALL SELECT 'events_full', trace_id, span_id FROM events_full WHERE project_id = {p:String} AND startsWith(trace_id, {x:String})
      UNION ALL SELECT 'events_core', trace_id, span_id FROM events_core WHERE project_id = {p:String} AND startsWith(trace_id, {x:String})`,
    query_params: { p: projectId, x: `${prefix}-` },
    format: 'JSONEachRow',
  });
  return (await rs.json<{ t: string; trace: string; o: string }>())
    .map((r) => `${r.t} ${r.trace} ${r.o}`)
    .sort();
}

/** The rows `rowsOf` reads for the seeded traces `ids`. */
const seededRows = (traceIds: string[]) =>
  traceIds
    .flatMap((t) => [
      `traces ${t} `,
      ...['observations', 'events_full', 'events_core'].flatMap((table) =>
        ['o1', 'o2'].map((o) => `${table} ${t} ${t}-${o}`),
      ),
    ])
    .sort();

interface Deletion {
  id: string;
  status: string;
  traceCount: number;
  deletedCount: number;
  error: string | null;
}

const deletionOf = async (p: Project, id: string) => {
  const res = await call(p, 'GET', `/api/public/trace-deletions/${id}`);
  expect(res.status).toBe(200);
  return res.body as unknown as Deletion;
};

/** Waits (bounded) until `done` holds. */
const until = (what: string, done: () => Promise<boolean>, ms = 120_000) =>
  waitFor(what, async () => ((await done()) ? true : undefined), ms);

describe('queued trace deletion', () => {
  it('answers at once with the queued deletion; the worker deletes; another key sees nothing', async () => {
    const prefix = `q${hex(4)}`;
    await seed(a.projectId, prefix, 3);
    await seed(b.projectId, prefix, 3);
    const [t0, t1, t2] = ids(prefix, 3);
    const before = { a: await rowsOf(a.projectId, prefix), b: await rowsOf(b.projectId, prefix) };
    expect(before.a).toEqual(seededRows([t0!, t1!, t2!]));
    expect(before.b).toEqual(before.a);

    // No worker runs yet: the answers come while every row is still there.
    const lf = sdk(a);
    const one = await lf.api.traceDelete(t0!);
    expect(one).toEqual({ message: 'Trace deleted successfully', deletionId: expect.any(String) });
    const missing = `${prefix}-missing`;
    const many = await lf.api.traceDeleteMultiple({ traceIds: [t1!, missing, t1!] });
    expect(many).toEqual({ message: 'Traces deleted successfully', deletionId: expect.any(String) });
    const oneId = (one as unknown as { deletionId: string }).deletionId;
    const manyId = (many as unknown as { deletionId: string }).deletionId;
    expect(await rowsOf(a.projectId, prefix)).toEqual(before.a);
    expect(await deletionOf(a, oneId)).toMatchObject({
      id: oneId,
      status: 'queued',
      traceCount: 1,
      deletedCount: 0,
      error: null,
      finishedAt: null,
    });
    expect(await deletionOf(a, manyId)).toMatchObject({ status: 'queued', traceCount: 2, deletedCount: 0 });
    const pending = await call(a, 'GET', `/api/public/trace-deletions?traceId=${t1}`);
    expect((pending.body.data as Deletion[]).map((d) => d.id)).toEqual([manyId]);
    expect(
      ((await call(a, 'GET', '/api/public/trace-deletions')).body.data as Deletion[]).map((d) => d.id),
    ).toEqual([manyId, oneId]);

    // Project B's key reads neither deletion and lists none.
    expect((await call(b, 'GET', `/api/public/trace-deletions/${oneId}`)).status).toBe(404);
    expect((await call(b, 'GET', '/api/public/trace-deletions')).body).toEqual({ data: [] });

    worker = await startWorker(suite.env);
    await until('both deletions succeed', async () =>
      (await Promise.all([deletionOf(a, oneId), deletionOf(a, manyId)])).every(
        (d) => d.status === 'succeeded',
      ),
    );
    expect(await deletionOf(a, manyId)).toMatchObject({
      status: 'succeeded',
      traceCount: 2,
      deletedCount: 2,
      error: null,
      finishedAt: expect.any(String),
    });
    expect(await rowsOf(a.projectId, prefix)).toEqual(seededRows([t2!]));
    expect(await rowsOf(b.projectId, prefix)).toEqual(before.b);
    expect((await call(a, 'GET', '/api/public/trace-deletions')).body).toEqual({ data: [] });
    const audited = await suite.pool.query(
      `SELECT a.resource_id, k.public_key FROM audit_logs a LEFT JOIN api_keys k ON k.id = a.api_key_id
       WHERE a.project_id = $1 AND a.resource_type = 'trace' AND a.resource_id LIKE $2 ORDER BY a.resource_id`,
      [a.projectId, `${prefix}-%`],
    );
    expect(audited.rows).toEqual(
      [t0!, t1!, missing].sort().map((resource_id) => ({ resource_id, public_key: a.publicKey })),
    );
  });

  it('keeps the bulk limit and the validation answers, and queues nothing for them', async () => {
    const queued = async () =>
      (
        await suite.pool.query('SELECT id FROM trace_deletions WHERE project_id = $1 ORDER BY id', [
          a.projectId,
        ])
      ).rows;
    const before = await queued();
    for (const traceIds of [[], Array.from({ length: 1001 }, () => hex(4))]) {
      const res = await call(a, 'DELETE', '/api/public/traces', { traceIds });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain('traceIds');
    }
    expect((await call(a, 'DELETE', '/api/public/traces', {})).status).toBe(400);
    expect((await call(a, 'DELETE', '/api/public/traces', { traceIds: [''] })).status).toBe(400);
    expect(await queued()).toEqual(before);
    const full = await call(a, 'DELETE', '/api/public/traces', {
      traceIds: Array.from({ length: 1000 }, (_, i) => `limit-${i}`),
    });
    expect(full.status).toBe(200);
    expect((await queued()).length).toBe(before.length + 1);
  });

  it('a worker killed mid-deletion leaves its progress; the next finishes without loss or repeats', async () => {
    await worker?.stop();
    worker = undefined;
    const prefix = `k${hex(4)}`;
    const n = 6 * TRACE_DELETION_BATCH;
    await seed(a.projectId, prefix, n);
    await seed(b.projectId, prefix, 10);
    const bRows = await rowsOf(b.projectId, prefix);
    expect(bRows).toEqual(seededRows(ids(prefix, 10)));
    const all = ids(prefix, n);
    const deletions: string[] = [];
    for (let i = 0; i < n; i += 1000) {
      const res = await call(a, 'DELETE', '/api/public/traces', { traceIds: all.slice(i, i + 1000) });
      expect(res.status).toBe(200);
      deletions.push(res.body.deletionId as string);
    }
    const progress = async () => Promise.all(deletions.map((id) => deletionOf(a, id)));
    const deleted = (ds: Deletion[]) => ds.reduce((s, d) => s + d.deletedCount, 0);

    const first = await startWorker(suite.env);
    worker = first;
    await until('a first batch is done', async () => deleted(await progress()) > 0);
    await first.process.kill('SIGKILL');
    worker = undefined;
    const atKill = await progress();
    const doneAtKill = deleted(atKill);
    expect(doneAtKill).toBeLessThan(n);
    // What is counted done is gone: each deletion's first `deletedCount` ids have no rows left.
    const counted = atKill.flatMap((d, i) => all.slice(i * 1000, i * 1000 + d.deletedCount));
    expect(counted.length).toBe(doneAtKill);
    const rowsAtKill = await rowsOf(a.projectId, prefix);
    const countedSet = new Set(counted);
    expect(rowsAtKill.filter((r) => countedSet.has(r.split(' ')[1]!))).toEqual([]);
    // The progress is durable: still there when no worker runs.
    expect(deleted(await progress())).toBe(doneAtKill);

    worker = await startWorker(suite.env);
    await until('every deletion succeeds', async () =>
      (await progress()).every((d) => d.status === 'succeeded'),
    );
    expect((await progress()).map((d) => [d.deletedCount, d.traceCount, d.error])).toEqual(
      deletions.map(() => [1000, 1000, null]),
    );
    expect(await rowsOf(a.projectId, prefix)).toEqual([]);
    expect(await rowsOf(b.projectId, prefix)).toEqual(bRows);
    const audits = await suite.pool.query<{ resource_id: string; n: number }>(
      `SELECT resource_id, count(*)::int AS n FROM audit_logs
       WHERE project_id = $1 AND resource_type = 'trace' AND resource_id LIKE $2 GROUP BY resource_id`,
      [a.projectId, `${prefix}-%`],
    );
    expect(audits.rows.map((r) => r.resource_id).sort()).toEqual([...all].sort());
    // Only the batch the kill cut short (if any) ran twice; no batch counted done before the kill did.
    const repeated = audits.rows.filter((r) => r.n > 1).map((r) => r.resource_id);
    expect(repeated.length).toBeLessThanOrEqual(TRACE_DELETION_BATCH);
    expect(repeated.filter((id) => countedSet.has(id))).toEqual([]);
    expect(audits.rows.every((r) => r.n <= 2)).toBe(true);
  }, 600_000);

  it('forgets finished deletions past their keep time, and only those', async () => {
    const rows = async () =>
      (
        await suite.pool.query<{ id: string; state: string }>(
          'SELECT id, state FROM trace_deletions WHERE project_id = $1 ORDER BY id',
          [a.projectId],
        )
      ).rows;
    const before = await rows();
    const finished = before.filter((r) => r.state === 'succeeded');
    expect(finished.length).toBeGreaterThan(1);
    const [old, ...recent] = finished;
    await suite.pool.query(
      "UPDATE trace_deletions SET finished_at = now() - interval '8 days' WHERE id = $1",
      [old!.id],
    );
    expect(await pruneTraceDeletions(suite.pool, 7 * 24 * 3_600_000)).toBe(1);
    expect(await rows()).toEqual(before.filter((r) => r.id !== old!.id));
    expect((await call(a, 'GET', `/api/public/trace-deletions/${old!.id}`)).status).toBe(404);
    expect((await call(a, 'GET', `/api/public/trace-deletions/${recent[0]!.id}`)).status).toBe(200);
  });
});
