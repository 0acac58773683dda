/**
 * Entity locks against PostgreSQL: requests that wait for a connection together share one lock
 * transaction, yet each is answered with its own outcome, and another web process (its own queues
 * and pool) waits for any of their keys until the last member is done, or fails after its bound.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pgEntityLocks } from '../../server/ingestion/entity-locks.ts';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';

let pgf: PostgresFixture;
let pools: pg.Pool[] = [];

beforeAll(async () => {
  pgf = await startPostgres();
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await pgf?.stop();
});

const newPool = () => {
  const pool = new pg.Pool({ connectionString: pgf.url, max: 4 });
  pools = [...pools, pool];
  return pool;
};

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

it('answers each request of a shared transaction with its own outcome, on one connection', async () => {
  const pool = newPool();
  const locks = pgEntityLocks(pool);
  const a = locks.hold(['trace:p:a'], async () => 'a');
  const b = locks.hold(['trace:p:b'], async () => {
    throw new Error('b failed');
  });
  const c = locks.hold(['trace:p:c'], async () => 'c');
  expect(await a).toBe('a');
  await expect(b).rejects.toThrow('b failed');
  expect(await c).toBe('c');
  expect(pool.totalCount).toBe(1);
});

it('holds every member key until the last member is done; another process waits, or fails after its bound', async () => {
  const mine = pgEntityLocks(newPool());
  const theirs = pgEntityLocks(newPool());
  const impatient = pgEntityLocks(newPool(), 200);
  const slow = deferred();
  const events: string[] = [];
  const a = mine.hold(['trace:p:x'], async () => {
    events.push('a done');
  });
  const b = mine.hold(['trace:p:y'], async () => {
    await slow.promise;
    events.push('b done');
  });
  await until('the shared transaction holds its locks', () => events.includes('a done'));
  const waiting = theirs.hold(['trace:p:x'], async () => {
    events.push('theirs');
  });
  await expect(impatient.hold(['trace:p:x'], async () => 'never')).rejects.toMatchObject({ code: '55P03' });
  expect(events).toEqual(['a done']);
  slow.resolve();
  await Promise.all([a, b, waiting]);
  expect(events).toEqual(['a done', 'b done', 'theirs']);
});
