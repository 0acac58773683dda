/**
 * The ingestion log's queue on real PostgreSQL: claims go oldest first, one drain at a time per
 * project (a later update must be written after an earlier one), the same drain may claim ahead,
 * a file handed back is the next one claimed, a refused one after its retry (holding only its
 * project), and a file the web writes itself does not hold its project.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  claim,
  enqueue,
  markDrained,
  markFailed,
  type QueuedFile,
  release,
} from '../../server/features/ingestion/log/queue.ts';
import { RelationalMigrator } from '../../server/platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../../server/platform/migrations/relational/versions.ts';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';

let pgf: PostgresFixture;
let pool: pg.Pool;
const LEASE = 60_000;

beforeAll(async () => {
  pgf = await startPostgres();
  pool = new pg.Pool({ connectionString: pgf.url, max: 4 });
  await new RelationalMigrator(pool, relationalMigrationsFor('4')).up();
});

afterAll(async () => {
  await pool?.end();
  await pgf?.stop();
});

let clock = Date.parse('2026-12-01T00:00:00Z');
/** `n` files of `projectId`, each accepted a millisecond after the one before. */
const files = (projectId: string, n: number): QueuedFile[] =>
  Array.from({ length: n }, () => {
    clock += 1;
    return { key: `${projectId}/${clock}`, projectId, receivedAt: clock, bytes: 10 };
  });
const keys = (fs: { key: string }[]) => fs.map((f) => f.key);

describe('claims of the ingestion log', () => {
  it('one drain at a time per project; the same drain may claim ahead; other projects go to others', async () => {
    const p = files('p-a', 4);
    const q = files('q-a', 2);
    await enqueue(pool, [...p, ...q]);
    expect(keys(await claim(pool, 2, LEASE, 'drain-1'))).toEqual(keys(p.slice(0, 2)));
    // p-a is held by drain-1: drain-2 gets only the other project's files.
    expect(keys(await claim(pool, 10, LEASE, 'drain-2'))).toEqual(keys(q));
    // drain-1 reads ahead: the next of its project, in order.
    expect(keys(await claim(pool, 10, LEASE, 'drain-1'))).toEqual(keys(p.slice(2)));
    await markDrained(pool, keys([...p, ...q]));
  });

  it('a refused file waits for its retry, holding its project only; then it is claimed again first', async () => {
    const p = files('p-b', 3);
    const q = files('q-b', 1);
    await enqueue(pool, [...p, ...q]);
    const first = await claim(pool, 3, LEASE, 'drain-1');
    expect(keys(first)).toEqual(keys(p));
    // The store refused the first file; the drain hands back what it did not write.
    await markFailed(pool, [p[0]!.key], 'refused');
    await release(pool, keys(p.slice(1)));
    // Until its retry (half a second after a first attempt) no drain takes its project, the drain
    // that refused it included; other projects go on.
    expect(keys(await claim(pool, 10, LEASE, 'drain-1'))).toEqual(keys(q));
    expect(await claim(pool, 10, LEASE, 'drain-2')).toEqual([]);
    await new Promise((r) => setTimeout(r, 600));
    const again = await claim(pool, 3, LEASE, 'drain-2');
    expect(keys(again)).toEqual(keys(p));
    // Handed back is not an attempt; refused is, and is written alone from then on.
    expect(again.map((f) => f.attempts)).toEqual([2, 1, 1]);
    expect(again.map((f) => f.refusedBefore)).toEqual([true, false, false]);
    await markDrained(pool, keys([...p, ...q]));
  });

  it("a file the web writes itself neither is claimed nor holds its project's other files", async () => {
    const [inline] = files('p-c', 1);
    const [logged] = files('p-c', 1);
    await enqueue(pool, [inline!], LEASE);
    await enqueue(pool, [logged!]);
    expect(keys(await claim(pool, 10, LEASE, 'drain-1'))).toEqual([logged!.key]);
    await markDrained(pool, [inline!.key, logged!.key]);
  });

  it('a drain that died holds its project until its lease runs out', async () => {
    const p = files('p-d', 2);
    await enqueue(pool, p);
    expect(keys(await claim(pool, 1, 200, 'dead-drain'))).toEqual([p[0]!.key]);
    expect(await claim(pool, 10, LEASE, 'drain-2')).toEqual([]);
    await new Promise((r) => setTimeout(r, 300));
    const redelivered = await claim(pool, 10, LEASE, 'drain-2');
    expect(keys(redelivered)).toEqual(keys(p));
    expect(redelivered.map((f) => f.attempts)).toEqual([2, 1]);
    // A drain that died refused nothing: its files are written together again.
    expect(redelivered.map((f) => f.refusedBefore)).toEqual([false, false]);
  });
});
