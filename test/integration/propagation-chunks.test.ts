/**
 * The dual-write propagation of a staging partition larger than its chunk bound, on the embedded
 * ClickHouse engine: cut into chunks of whole traces, each recorded as it commits, and resumed by a
 * fresh job after a death between two chunks and after one right after a chunk's insert (before
 * its record). Every staged row must be in events_full once after FINAL, with its trace's fields,
 * compared row by row.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PropagationJob } from '../../server/app/worker/propagation/job.ts';
import { PROPAGATION_KEYS } from '../../server/features/events/propagation-record.ts';
import { TombstoneGuard } from '../../server/features/tombstones/record.ts';
import {
  type Coordination,
  type LeaseHolder,
  memoryCoordination,
} from '../../server/platform/coordination/store.ts';
import { RelationalMigrator } from '../../server/platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../../server/platform/migrations/relational/versions.ts';
import { OBS_PER_TRACE } from '../bench/history.ts';
import { type EmbeddedHistory, embeddedHistory } from '../fixtures/embedded-history.ts';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';

const TRACES = 120;
const CHUNK_ROWS = 50;
let partition: string;

let engine: EmbeddedHistory;
let ch: ClickHouseClient;
/** The record of deleted traces (empty here) that every propagated chunk honours. */
let pgf: PostgresFixture;
let pool: pg.Pool;

beforeAll(async () => {
  [engine, pgf] = await Promise.all([embeddedHistory('propagation-chunks', TRACES), startPostgres()]);
  ch = engine.client;
  pool = new pg.Pool({ connectionString: pgf.url, max: 2 });
  await new RelationalMigrator(pool, relationalMigrationsFor('4')).up();
  // A closed window of the last hour: the staging table drops parts 48 hours after their window.
  await ch.command({
    query: `INSERT INTO observations_batch_staging SELECT *, toStartOfInterval(now64(3) - INTERVAL 10 MINUTE, INTERVAL 3 MINUTE) + 1 AS s3_first_seen_timestamp, 'pk', 'sdk', '0' FROM observations`,
  });
  [{ partition }] = (await (
    await ch.query({
      query:
        'SELECT DISTINCT toString(toStartOfInterval(s3_first_seen_timestamp, INTERVAL 3 MINUTE)) AS partition FROM observations_batch_staging',
      format: 'JSONEachRow',
    })
  ).json<{ partition: string }>()) as [{ partition: string }];
});
afterAll(async () => {
  await pool?.end();
  await Promise.all([engine?.stop(), pgf?.stop()]);
});

async function rows<T>(query: string): Promise<T[]> {
  return (await ch.query({ query, format: 'JSONEachRow' })).json<T>();
}

const job = (coordination: Coordination) =>
  new PropagationJob({
    analytics: ch,
    coordination,
    log: pino({ level: 'silent' }),
    workerId: 'w',
    intervalMs: 60_000,
    graceSeconds: 0,
    chunkRows: CHUNK_ROWS,
    tombstones: new TombstoneGuard(pool, {
      analytics: ch,
      release: '4',
      dialect: { cluster: false, clusterName: 'default' },
    }),
  });

/** The store, failing once as a dying worker would at the moment `dies` picks. */
function dyingAt(store: Coordination, dies: (op: 'set' | 'lease', key: string, value?: string) => boolean) {
  let died = false;
  const die = () => {
    died = true;
    throw new Error('worker killed');
  };
  return {
    ...store,
    async set(key: string, value: string) {
      if (!died && dies('set', key, value)) die();
      await store.set(key, value);
    },
    async acquireLease(key: string, holder: LeaseHolder, ttlMs: number) {
      const held = await store.acquireLease(key, holder, ttlMs);
      if (!died && dies('lease', key)) die();
      return held;
    },
    async renewLease(key: string, holder: LeaseHolder, ttlMs: number) {
      const held = await store.renewLease(key, holder, ttlMs);
      if (!died && dies('lease', key)) die();
      return held;
    },
  } satisfies Coordination;
}

const progress = async (store: Coordination) =>
  JSON.parse((await store.get(PROPAGATION_KEYS.chunks)) ?? '{}') as { chunks?: unknown[]; done?: number };

describe('chunked propagation', () => {
  it('propagates a large partition in chunks and resumes after a death at any point without a missing or doubled row', async () => {
    const store = memoryCoordination();
    // Death 1: chunk 2's insert and enrichment committed, its record not written (it runs again).
    const first = await job(
      dyingAt(
        store,
        (op, key, value) =>
          op === 'set' && key === PROPAGATION_KEYS.chunks && value?.includes('"done":3') === true,
      ),
    ).runOnce();
    expect(first.processed).toEqual([]);
    const planned = await progress(store);
    expect(planned.chunks!.length).toBeGreaterThanOrEqual((TRACES * OBS_PER_TRACE) / CHUNK_ROWS / 2);
    expect(planned.done).toBe(2);
    expect(await store.get(PROPAGATION_KEYS.cursor)).toBeNull();

    // Death 2: between chunks 4 and 5, after chunk 4's record (its lease renewal fails).
    let renewals = 0;
    const second = await job(dyingAt(store, (op) => op === 'lease' && ++renewals === 4)).runOnce();
    expect(second.processed).toEqual([]);
    const resumed = await progress(store);
    expect(resumed.chunks).toEqual(planned.chunks);
    expect(resumed.done).toBe(5);

    const last = await job(store).runOnce();
    expect(last.processed).toEqual([partition]);
    expect(await store.get(PROPAGATION_KEYS.cursor)).toBe(partition);
    expect((await progress(store)).done).toBe(planned.chunks!.length);

    const expected = await rows<unknown>(
      `SELECT o.project_id, o.trace_id, o.id AS span_id, o.type, o.input, t.user_id, t.session_id, t.name AS trace_name
       FROM observations_batch_staging AS o FINAL
       JOIN traces AS t FINAL ON o.project_id = t.project_id AND o.trace_id = t.id
       ORDER BY project_id, trace_id, span_id`,
    );
    const propagated = await rows<unknown>(
      `SELECT project_id, trace_id, span_id, type, input, user_id, session_id, trace_name
       FROM events_full FINAL ORDER BY project_id, trace_id, span_id`,
    );
    expect(expected).toHaveLength(TRACES * OBS_PER_TRACE);
    expect(propagated).toEqual(expected);
  });
});
