/**
 * The backfill's pause under analytics-store pressure with a really full disk: the analytics server
 * keeps its data on a small tmpfs, a ballast file leaves less free than step 1 still needs (the
 * contract's headroom over its source's bytes), and the backfill Job (`observatory backfill run`,
 * as the operator runs it) must wait without running a chunk while the worker's `GET /api/backfill`
 * (what the operator turns into `AnalyticsStorePressure`) names the step and why. Once the ballast
 * is gone the Job resumes by itself and the chain completes with every row in events_full.
 * Mounting needs root (CI runs as root here): without it the test fails, it does not skip.
 */

import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchBackfill } from '../../operator/runtime/probes.ts';
import { DISK_HEADROOM_FACTOR } from '../../server/contract/worker-api.ts';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';
import { type ManagedProcess, startProcess } from '../fixtures/processes.ts';
import { type RedisFixture, startRedis } from '../fixtures/redis.ts';
import {
  type AnalyticsServer,
  cli,
  DUAL_ENV,
  type Env,
  ROOT,
  startAnalyticsServer,
  startWorker,
  type WebServer,
} from '../fixtures/service.ts';
import { waitFor } from '../fixtures/wait.ts';

const TMPFS_SIZE = '256m';
const TRACES = 2000;
/** Random (incompressible) trace bodies, so the source's bytes on disk are megabytes. */
const BODY_CHARS = 3000;
const OBS_PER_TRACE = 2;
const DUAL = {
  ...DUAL_ENV,
  SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER: 'false',
  SERVICE_BACKGROUND_MIGRATION_V4_DROP_PID_TID_SORTING_TABLES: 'false',
};

let mountPoint: string | undefined;
let mounted = false;
let pgf: PostgresFixture;
let redisf: RedisFixture;
let ch: AnalyticsServer | undefined;
let base: Env;
let db: pg.Pool;
let worker: WebServer;
let job: ManagedProcess | undefined;
const ballast = () => join(mountPoint!, 'ballast');

async function rows<T>(query: string): Promise<T[]> {
  return (await ch!.client.query({ query, format: 'JSONEachRow' })).json<T>();
}

const freeBytes = async () =>
  Number((await rows<{ free: string }>('SELECT sum(free_space) AS free FROM system.disks'))[0]!.free);

/** Writes `bytes` of zeros into the tmpfs (tmpfs allocates what is written). */
function fill(bytes: number): void {
  const fd = openSync(ballast(), 'w');
  const block = Buffer.alloc(1024 * 1024);
  try {
    for (let left = bytes; left > 0; left -= block.length)
      writeSync(fd, block, 0, Math.min(block.length, left));
  } finally {
    closeSync(fd);
  }
}

beforeAll(async () => {
  if (process.getuid?.() !== 0)
    throw new Error('backfill-disk-pressure mounts a tmpfs and must run as root (uid 0); it does not skip');
  mountPoint = mkdtempSync(join(tmpdir(), 'obs-full-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE}`, 'tmpfs', mountPoint]);
  mounted = true;
  [pgf, redisf, ch] = await Promise.all([
    startPostgres(),
    startRedis(),
    startAnalyticsServer({ dir: mountPoint }),
  ]);
  base = { DATABASE_URL: pgf.url, CLICKHOUSE_URL: ch.url, REDIS_URL: redisf.url };
  db = new pg.Pool({ connectionString: pgf.url, max: 2 });
  const migrated = await cli(['migrate', 'up'], { ...base, ...DUAL });
  expect(migrated.code, migrated.stderr).toBe(0);
  await ch.client.command({
    query: `INSERT INTO traces (id, timestamp, name, user_id, metadata, release, version, project_id, public, bookmarked, tags, input, output, session_id, event_ts, is_deleted)
      SELECT concat('t', toString(number)), toDateTime64('2026-10-01 00:00:00', 3) + number, concat('trace-', toString(number)),
        concat('u', toString(number % 7)), map('k', toString(number)), 'r1', 'v1', 'disk', false, false, ['a'],
        randomPrintableASCII(${BODY_CHARS}), randomPrintableASCII(${BODY_CHARS}), concat('s', toString(number % 5)), now64(3), 0
      FROM numbers(${TRACES})`,
  });
  await ch.client.command({
    query: `INSERT INTO observations (id, trace_id, project_id, type, parent_observation_id, start_time, name, metadata, level, input, output, provided_model_name, event_ts, is_deleted)
      SELECT concat('o', toString(number)), concat('t', toString(intDiv(number, ${OBS_PER_TRACE}))), 'disk',
        if(number % 2 = 0, 'SPAN', 'GENERATION'), NULL, toDateTime64('2026-10-01 00:00:00', 3) + intDiv(number, ${OBS_PER_TRACE}),
        concat('obs-', toString(number)), map('m', 'v'), 'DEFAULT', concat('in-', toString(number)), concat('out-', toString(number)), 'gpt', now64(3), 0
      FROM numbers(${TRACES * OBS_PER_TRACE})`,
  });
  worker = await startWorker({ ...base, ...DUAL });
}, 240_000);

afterAll(async () => {
  await job?.kill('SIGKILL');
  await worker?.stop();
  await db?.end();
  // Killed, not stopped: stop() removes its data directory, which is the mount point.
  await ch?.kill();
  await Promise.all([pgf?.stop(), redisf?.stop()]);
  if (mounted) execFileSync('umount', [mountPoint!]);
  if (mountPoint) rmdirSync(mountPoint);
});

const step1 = async () =>
  (
    await db.query<{ state: { chunks?: { done: boolean }[] }; finished_at: Date | null }>(
      "SELECT state, finished_at FROM background_migrations WHERE name LIKE '%step_1%'",
    )
  ).rows[0]!;

const report = () => fetchBackfill('127.0.0.1', Number(new URL(worker.url).port));

describe('the backfill on a full analytics disk', () => {
  it('pauses step 1 with the reason while the next chunks do not fit, and resumes once space is freed', async () => {
    const [source] = await rows<{ bytes: string }>(
      "SELECT sum(bytes_on_disk) AS bytes FROM system.parts WHERE database = currentDatabase() AND table = 'traces' AND active",
    );
    const needed = DISK_HEADROOM_FACTOR * Number(source!.bytes);
    expect(Number(source!.bytes)).toBeGreaterThan(4 * 1024 * 1024);
    // Leave half of what step 1 needs free.
    fill((await freeBytes()) - Math.floor(needed / 2));
    const free = await freeBytes();
    expect(free).toBeLessThan(needed);
    expect(free).toBeGreaterThan(needed / 4);

    job = startProcess(
      'backfill-1',
      process.execPath,
      [`${ROOT}/server/bin/observatory.ts`, 'backfill', 'run', '--step', '1'],
      { env: { PATH: process.env['PATH'], ...base, ...DUAL } },
    );
    await waitFor(
      'the Job to log its pause',
      async () => (job!.output().includes('backfill paused: analytics store pressure') ? true : undefined),
      90_000,
    );
    expect(job.output()).toMatch(
      /"step":1,"reason":"the analytics store has [\d.]+ GiB free; backfill step 1 needs about/,
    );
    const paused = await waitFor(
      'the worker report to name the pressure',
      async () => {
        const r = await report();
        return r?.store?.pressure ? r : undefined;
      },
      30_000,
    );
    expect(paused.store!.pressure!.step).toBe(1);
    expect(paused.store!.pressure!.reason).toContain('backfill step 1 needs about');
    expect(paused.store!.freeBytes).toBeLessThan(needed);
    // Paused, not failed: chunks planned, none run, nothing in events_full, the Job still waiting.
    const waiting = await step1();
    expect(waiting.finished_at).toBeNull();
    expect(waiting.state.chunks!.length).toBeGreaterThan(0);
    expect(waiting.state.chunks!.filter((c) => c.done)).toEqual([]);
    expect(job.exitInfo()).toBeUndefined();
    expect(Number((await rows<{ n: string }>('SELECT count() AS n FROM events_full'))[0]!.n)).toBe(0);

    rmSync(ballast());
    expect(await freeBytes()).toBeGreaterThan(needed);
    // The Job rechecks after 15 s, then 30 s: it resumes by itself.
    const exit = await Promise.race([
      job.exited,
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 120_000)),
    ]);
    expect(exit, job.output()).toEqual({ code: 0, signal: null });
    expect(job.output()).toContain('backfill step 1 finished');
    job = undefined;
    const relieved = await report();
    expect(relieved!.store!.pressure).toBeNull();
    expect(relieved!.steps.find((s) => s.step === 1)!.status).toBe('finished');

    for (const step of [2, 3, 4]) {
      const r = await cli(['backfill', 'run', '--step', String(step)], { ...base, ...DUAL }, 180_000);
      expect(r.code, r.stderr).toBe(0);
    }

    const expected = await rows<Record<string, unknown>>(
      `SELECT project_id, trace_id, span_id, type, name, input, output FROM (
         SELECT project_id, id AS trace_id, concat('t-', id) AS span_id, 'SPAN' AS type, name, input, output FROM traces FINAL
         UNION ALL
         SELECT project_id, trace_id, id AS span_id, type, name, input, output FROM observations FINAL
       ) ORDER BY project_id, trace_id, span_id`,
    );
    expect(expected).toHaveLength(TRACES * (1 + OBS_PER_TRACE));
    const events = await rows<Record<string, unknown>>(
      'SELECT project_id, trace_id, span_id, type, name, input, output FROM events_full FINAL ORDER BY project_id, trace_id, span_id',
    );
    expect(events).toEqual(expected);
  }, 600_000);
});
