/**
 * The chunked dual-write propagation under a real SIGKILL: the worker runs as its own process
 * (`observatory worker`) on real PostgreSQL, Redis and the analytics server, a staged partition is
 * far larger than the chunk bound, and the worker is killed twice while it propagates (once its
 * first chunk is recorded, then again mid-way through the resumed run). The restarted worker (no
 * Pod name) takes the lease once the dead one's expires and resumes with the recorded chunks. Every staged row must
 * then be in events_full and events_core once after FINAL, with its trace's fields, row by row.
 */

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEASE_MS } from '../../server/app/worker/propagation/job.ts';
import { PROPAGATION_KEYS } from '../../server/features/events/propagation-record.ts';
import { CORE_TRUNCATION } from '../../server/platform/migrations/analytics/tables.ts';
import { historyStatements, OBS_PER_TRACE } from '../bench/history.ts';
import { cli, DUAL_ENV, startWorker, type WebServer } from '../fixtures/service.ts';
import { type Given, type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';
import { waitFor } from '../fixtures/wait.ts';

const TRACES = 300;
/** The last traces go to a second, later partition: the cursor must move past the large one. */
const LATE_TRACES = 10;
const CHUNK_ROWS = 40;
const WORKER_ENV = {
  ...DUAL_ENV,
  SERVICE_EVENT_PROPAGATION_CHUNK_ROWS: String(CHUNK_ROWS),
  SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS: '1',
  SERVICE_EVENT_PROPAGATION_GRACE_SECONDS: '0',
  // Only the propagation writes events_full here.
  SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER: 'false',
  SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL: 'false',
};

let stores: Stores & Given<{ redis: true }>;
let redis: Redis;
let worker: WebServer | undefined;
let large: string;
let late: string;

/** The staging insert of the traces in [from, to) into the 3-minute window `minutesAgo` back. */
const stage = (from: number, to: number, minutesAgo: number) =>
  `INSERT INTO observations_batch_staging
   SELECT *, toStartOfInterval(now64(3) - INTERVAL ${minutesAgo} MINUTE, INTERVAL 3 MINUTE) + 1, 'pk', 'sdk', '0'
   FROM observations
   WHERE toUInt32(substring(trace_id, 2)) >= ${from} AND toUInt32(substring(trace_id, 2)) < ${to}`;

beforeAll(async () => {
  stores = await startStores({ redis: true });
  const migrated = await cli(['migrate', 'up'], { ...stores.env, ...DUAL_ENV });
  expect(migrated.code, migrated.stderr).toBe(0);
  for (const statement of historyStatements(TRACES)) await stores.ch.client.command({ query: statement });
  await stores.ch.client.command({ query: stage(0, TRACES - LATE_TRACES, 12) });
  await stores.ch.client.command({ query: stage(TRACES - LATE_TRACES, TRACES, 6) });
  [large, late] = (
    await rows<{ p: string }>(
      'SELECT DISTINCT toString(toStartOfInterval(s3_first_seen_timestamp, INTERVAL 3 MINUTE)) AS p FROM observations_batch_staging ORDER BY p',
    )
  ).map((r) => r.p) as [string, string];
  redis = new Redis(stores.redis.url);
}, 180_000);

afterAll(async () => {
  redis?.disconnect();
  await worker?.process.kill('SIGKILL');
  await stopStores(stores);
});

async function rows<T>(query: string): Promise<T[]> {
  return (await stores.ch.client.query({ query, format: 'JSONEachRow' })).json<T>();
}

interface Progress {
  partition: string;
  chunks: unknown[];
  done: number;
}
const progress = async (): Promise<Progress | undefined> => {
  const raw = await redis.get(PROPAGATION_KEYS.chunks);
  return raw ? (JSON.parse(raw) as Progress) : undefined;
};

/** Polls the chunk record every 20 ms until `ready` holds (bounded), then SIGKILLs the worker. */
async function killWhen(what: string, ready: (p: Progress) => boolean, timeoutMs: number): Promise<Progress> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const p = await progress();
    if (p && ready(p)) {
      await worker!.process.kill('SIGKILL');
      worker = undefined;
      return p;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('chunked propagation under SIGKILL', () => {
  it('resumes a large partition after two kills of the worker process without a missing or doubled row', async () => {
    worker = await startWorker({ ...stores.env, ...WORKER_ENV });
    const first = await killWhen(
      'the first chunk recorded',
      (p) => p.partition === large && p.done >= 1,
      90_000,
    );
    const planned = first.chunks;
    expect(planned.length).toBeGreaterThanOrEqual(((TRACES - LATE_TRACES) * OBS_PER_TRACE) / CHUNK_ROWS / 2);
    expect(first.done).toBeLessThan(planned.length);
    expect(await redis.get(PROPAGATION_KEYS.cursor)).toBeNull();

    // A new worker (no Pod name, so another identity) waits for the dead one's lease, then resumes
    // where the record says.
    worker = await startWorker({ ...stores.env, ...WORKER_ENV });
    const second = await killWhen(
      'two more chunks recorded by the restarted worker',
      (p) => p.done >= first.done + 2,
      LEASE_MS + 90_000,
    );
    expect(second.partition).toBe(large);
    expect(second.chunks).toEqual(planned);
    expect(second.done).toBeLessThan(planned.length);
    expect(await redis.get(PROPAGATION_KEYS.cursor)).toBeNull();

    worker = await startWorker({ ...stores.env, ...WORKER_ENV });
    await waitFor(
      'the cursor past the late partition',
      async () => ((await redis.get(PROPAGATION_KEYS.cursor)) === late ? true : undefined),
      LEASE_MS + 120_000,
    );
    const last = await progress();
    expect(last).toMatchObject({ partition: large, done: planned.length });
    expect(last!.chunks).toEqual(planned);

    const expected = await rows<Record<string, unknown>>(
      `SELECT o.project_id AS project_id, o.trace_id AS trace_id, o.id AS span_id, o.type AS type, o.name AS name,
         o.input AS input, o.output AS output, t.user_id AS user_id, t.session_id AS session_id, t.name AS trace_name,
         t.tags AS tags, t.release AS release
       FROM observations_batch_staging AS o FINAL
       JOIN traces AS t FINAL ON o.project_id = t.project_id AND o.trace_id = t.id
       ORDER BY project_id, trace_id, span_id`,
    );
    expect(expected).toHaveLength(TRACES * OBS_PER_TRACE);
    const columns =
      'project_id, trace_id, span_id, type, name, input, output, user_id, session_id, trace_name, tags, release';
    const full = await rows<Record<string, unknown>>(
      `SELECT ${columns} FROM events_full FINAL ORDER BY project_id, trace_id, span_id`,
    );
    expect(full).toEqual(expected);
    const core = await rows<Record<string, unknown>>(
      `SELECT ${columns} FROM events_core FINAL ORDER BY project_id, trace_id, span_id`,
    );
    const truncated = (v: unknown) => String(v).slice(0, CORE_TRUNCATION);
    expect(core).toEqual(
      expected.map((e) => ({ ...e, input: truncated(e['input']), output: truncated(e['output']) })),
    );
  }, 420_000);
});
