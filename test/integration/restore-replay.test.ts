/**
 * A restore replays the ingestion log (#38) on the real stores (PostgreSQL, Redis, the analytics
 * server, an S3 server): writes go through the log and are drained, one is still pending in the log
 * when the backup is taken, more (new traces and updates of older ones) come after it and are
 * drained; the backup is restored. Without the log configured the writes after the backup are gone;
 * with it, the restore replays the log's window and the store holds again what it held before the
 * restore, row by row.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupSummarySchema, restoreSummarySchema } from '../../server/contract/backup.ts';
import { INGESTION_LOG_ENV } from '../../server/contract/env.ts';
import { REPLAY_MARGIN_MS } from '../../server/features/backup/replay-window.ts';
import type { RestoreResult } from '../../server/features/backup/run.ts';
import { backupEnv } from '../fixtures/s3.ts';
import {
  basicAuth,
  cli,
  createProject,
  DUAL_ENV,
  type Env,
  type Project,
  startWeb,
  startWorker,
  type WebServer,
} from '../fixtures/service.ts';
import { type Given, type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';
import { waitFor } from '../fixtures/wait.ts';

const LOG_BUCKET = 'ingestion-log';
const BACKUP_BUCKET = 'backups';
const SETUP_TIMEOUT_MS = 300_000;
const RUN_TIMEOUT_MS = 240_000;
const DRAIN_WAIT_MS = 120_000;
/**
 * The tables the writes land in, compared without the columns stamped when a row is written (a
 * replay writes again). The staging table and events_full are left out: in dual mode staged rows are
 * stamped with the time they are staged, and events_full is filled from them by the propagation.
 */
const TABLES = ['traces', 'observations', 'scores'] as const;
const STAMPED = ['event_ts', 'updated_at'];

let datastores: Stores & Given<{ redis: true; buckets: string[] }>;
let stores: Env;
let withLog: Env;
let backups: Env;
let durable: WebServer | undefined;
let deferred: WebServer | undefined;
let worker: WebServer | undefined;
let project: Project;

beforeAll(async () => {
  datastores = await startStores({ redis: true, buckets: [LOG_BUCKET, BACKUP_BUCKET] });
  stores = { ...datastores.env, ...DUAL_ENV };
  withLog = {
    ...stores,
    ...datastores.s3.env('ingestionLog', LOG_BUCKET, 'obs/'),
    // The historic backfill (its own suite) would copy the same rows meanwhile.
    SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER: 'false',
  };
  backups = backupEnv(datastores.s3, BACKUP_BUCKET);
  // One web writes the rows itself as well; one answers once the write is in the log.
  [durable, deferred, worker] = await Promise.all([
    startWeb({ ...withLog, [INGESTION_LOG_ENV.waitForStore]: 'true' }),
    startWeb({ ...withLog, [INGESTION_LOG_ENV.waitForStore]: 'false' }),
    startWorker(withLog),
  ]);
  project = await createProject(stores, 'restore-replay');
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  rmSync(terminationDir, { recursive: true, force: true });
  await stopStores(datastores, durable, deferred, worker);
});

/** One batch request: `n` traces with a generation and a score each, and updates of `update`'s generations. */
async function ingest(web: WebServer, prefix: string, n: number, update: string[] = []): Promise<string[]> {
  const at = new Date().toISOString();
  const traces = Array.from({ length: n }, (_, i) => `${prefix}-t${i}`);
  const batch = [
    ...traces.flatMap((t, i) => [
      { type: 'trace-create', body: { id: t, name: prefix, userId: 'u1', metadata: { i } } },
      {
        type: 'generation-create',
        body: { id: `${t}-g`, traceId: t, name: 'llm', model: 'gpt-4o', input: 'q', startTime: at },
      },
      { type: 'score-create', body: { id: `${t}-s`, traceId: t, name: 'quality', value: i } },
    ]),
    ...update.map((t) => ({
      type: 'generation-update',
      body: { id: `${t}-g`, traceId: t, output: `answered after ${prefix}`, usage: { input: 3, output: 5 } },
    })),
  ].map((e, k) => ({ id: `${prefix}-e${k}`, timestamp: at, ...e }));
  const res = await fetch(`${web.url}/api/public/ingestion`, {
    method: 'POST',
    headers: { authorization: basicAuth(project), 'content-type': 'application/json' },
    body: JSON.stringify({ batch }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await res.json()) as { errors: unknown[] };
  expect(res.status).toBe(207);
  expect(body.errors).toEqual([]);
  return traces;
}

const pending = async () =>
  Number(
    (
      await datastores.pool.query<{ n: string }>(
        'SELECT count(*) AS n FROM ingestion_log WHERE drained_at IS NULL',
      )
    ).rows[0]!.n,
  );

const drained = () =>
  waitFor(
    'the drain to empty the log',
    async () => ((await pending()) === 0 ? true : undefined),
    DRAIN_WAIT_MS,
  );

/** Every row of the write tables, every column but the stamped ones, as sorted JSON lines. */
async function snapshot(): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of TABLES) {
    const rs = await datastores.ch.client.query({
      query: `SELECT * EXCEPT (${STAMPED.join(', ')}) FROM ${table} FINAL`,
      format: 'JSONEachRow',
    });
    out[table] = (await rs.json()).map((r) => JSON.stringify(r)).sort();
  }
  return out;
}

const traceIds = async () =>
  (
    await (
      await datastores.ch.client.query({
        query: 'SELECT id FROM traces FINAL ORDER BY id',
        format: 'JSONEachRow',
      })
    ).json<{ id: string }>()
  ).map((r) => r.id);

/** Where the Jobs' summaries go (a Pod's termination log; here a file of the test's own). */
const terminationDir = mkdtempSync(join(tmpdir(), 'restore-replay-'));

const restore = async (env: Env, include?: string) => {
  const termination = join(terminationDir, `restore-${include ?? 'all'}`);
  const args = [
    'restore',
    '--id',
    'b1',
    ...(include ? ['--include', include] : []),
    '--termination-log',
    termination,
    '--json',
  ];
  const r = await cli(args, { ...env, ...backups }, RUN_TIMEOUT_MS);
  expect(r.code, r.stderr).toBe(0);
  return {
    result: JSON.parse(r.stdout.trim()) as RestoreResult,
    summary: restoreSummarySchema.parse(JSON.parse(readFileSync(termination, 'utf8'))),
    stderr: r.stderr,
  };
};

describe('a restore replays the ingestion log after the backup', () => {
  let first: string[];
  let held: string[];
  let later: string[];
  let replayFrom: string;
  let before: Record<string, string[]>;

  it('backs up with a write still pending in the log, whose acceptance the manifest records', async () => {
    first = await ingest(durable!, 'first', 20);
    await drained();
    // No drain runs: the deferred web's write stays in the log across the backup.
    await worker!.stop();
    worker = undefined;
    held = await ingest(deferred!, 'held', 5, first.slice(0, 5));
    const oldest = await datastores.pool.query<{ at: Date }>(
      'SELECT min(received_at) AS at FROM ingestion_log WHERE drained_at IS NULL',
    );
    expect(await pending()).toBe(1);
    const r = await cli(
      ['backup', '--id', 'b1', '--termination-log', join(terminationDir, 'backup'), '--json'],
      { ...withLog, ...backups },
      RUN_TIMEOUT_MS,
    );
    expect(r.code, r.stderr).toBe(0);
    const summary = backupSummarySchema.parse(JSON.parse(r.stdout));
    replayFrom = summary.replayFrom!;
    expect(replayFrom).toBe(oldest.rows[0]!.at.toISOString());
    expect(Date.parse(replayFrom)).toBeLessThan(Date.parse(summary.startedAt));
  });

  it('writes more after the backup through the log, drained: new traces and updates of older ones', async () => {
    worker = await startWorker(withLog);
    await drained();
    later = await ingest(durable!, 'later', 15, first.slice(5, 15));
    later.push(...(await ingest(deferred!, 'deferred', 5, [...first.slice(15), ...held])));
    await drained();
    before = await snapshot();
    expect(before['traces']!.length).toBe(first.length + held.length + later.length);
    const updated = before['observations']!.filter((r) => r.includes('answered after')).length;
    expect(updated).toBe(first.length + held.length);
    // The restore is run with the deployment's writers stopped, as the operator does.
    await Promise.all([durable!.stop(), deferred!.stop(), worker!.stop()]);
    durable = deferred = worker = undefined;
  });

  it('without the log configured, the writes after the backup are missing from the restored store', async () => {
    const { result, summary } = await restore(stores, 'analytics');
    expect(result.replay).toBeUndefined();
    expect(summary).toEqual({ id: 'b1' });
    const ids = await traceIds();
    expect(ids.filter((id) => later.includes(id) || held.includes(id))).toEqual([]);
    expect(await snapshot()).not.toEqual(before);
  });

  it('with the log, the restore replays its window: the store holds what it held, row by row', async () => {
    const { result, summary, stderr } = await restore(withLog);
    expect(result.restored).toEqual(['analytics', 'relational']);
    const replay = result.replay!;
    expect(Date.parse(replay.from)).toBe(Date.parse(replayFrom) - REPLAY_MARGIN_MS);
    expect(Date.parse(replay.to)).toBeGreaterThan(Date.now());
    // Every file of the window: the held one, the two after the backup (the first is older than
    // the window's start only if the backup came more than the margin after it).
    expect(replay.files).toBeGreaterThanOrEqual(3);
    expect(replay).toMatchObject({ written: replay.files, unreadable: 0, warnings: [] });
    expect(stderr).toContain(`replay ${replay.files}/${replay.files} files written`);
    // What the operator records in status.restore.
    expect(summary).toEqual({ id: 'b1', replay: { ...replay, warnings: 0 } });
    expect(await snapshot()).toEqual(before);
    expect(await pending()).toBe(0);
  });
});
