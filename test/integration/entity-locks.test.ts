/**
 * The entity locks of ingestion on real PostgreSQL (default lock table): a commit of many entities
 * (a drain's claim) locks its project instead of each entity, so it neither runs the shared lock
 * table out nor lets a small commit of the same project in, and leaves other projects alone.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  entityLockKeys,
  MAX_ENTITY_LOCKS,
  pgEntityLocks,
} from '../../server/features/write-model/entity-locks.ts';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';
import { waitFor } from '../fixtures/wait.ts';

let pgf: PostgresFixture;
let pool: pg.Pool;

beforeAll(async () => {
  pgf = await startPostgres();
  pool = new pg.Pool({ connectionString: pgf.url, max: 8 });
});

afterAll(async () => {
  await pool?.end();
  await pgf?.stop();
});

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
/** A promise and its resolver: what a held commit waits on before it ends. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

async function advisoryLocks(granted: boolean): Promise<number> {
  const r = await pool.query<{ n: string }>(
    "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted = $1",
    [granted],
  );
  return Number(r.rows[0]!.n);
}

describe('entity locks', () => {
  it('a commit of 30 000 entities holds one lock (the lock table has about 6 400 slots)', async () => {
    const big = entityLockKeys('p-big', ids('t', 10_000), ids('o', 20_000));
    expect(big.keys.length).toBeGreaterThan(MAX_ENTITY_LOCKS);
    const held = await pgEntityLocks(pool).hold(big, () => advisoryLocks(true));
    expect(held).toBe(1);
  });

  it('a large commit excludes small commits of its project, and of no other project', async () => {
    // Two processes: each has its own in-process queue, so they meet at PostgreSQL's locks.
    const [drain, web] = [pgEntityLocks(pool), pgEntityLocks(pool)];
    const release = gate();
    const order: string[] = [];
    const large = drain.hold(entityLockKeys('p1', ids('t', 2_000), []), async () => {
      order.push('large in');
      await release.opened;
      order.push('large out');
    });
    await waitFor(
      'the large commit holding',
      async () => (order.includes('large in') ? true : undefined),
      10_000,
    );
    // Another project's commit is not held up.
    await web.hold(entityLockKeys('p2', ['t0'], []), async () => void order.push('other project'));
    // A small commit of the project, on an entity the large one does not touch, waits for it.
    const small = web.hold(entityLockKeys('p1', ['unrelated'], []), async () => void order.push('small'));
    await waitFor(
      'the small commit waiting',
      async () => ((await advisoryLocks(false)) > 0 ? true : undefined),
      10_000,
    );
    release.open();
    await Promise.all([large, small]);
    expect(order).toEqual(['large in', 'other project', 'large out', 'small']);
  });

  it('a large commit waits for a small commit of its project; small commits of other entities do not wait', async () => {
    const [web, other, drain] = [pgEntityLocks(pool), pgEntityLocks(pool), pgEntityLocks(pool)];
    const release = gate();
    const order: string[] = [];
    const small = web.hold(entityLockKeys('p3', ['t1'], ['o1']), async () => {
      order.push('small in');
      await release.opened;
      order.push('small out');
    });
    await waitFor(
      'the small commit holding',
      async () => (order.includes('small in') ? true : undefined),
      10_000,
    );
    await other.hold(entityLockKeys('p3', ['t2'], ['o2']), async () => void order.push('disjoint small'));
    const large = drain.hold(entityLockKeys('p3', ids('t', 2_000), []), async () => void order.push('large'));
    await waitFor(
      'the large commit waiting',
      async () => ((await advisoryLocks(false)) > 0 ? true : undefined),
      10_000,
    );
    release.open();
    await Promise.all([small, large]);
    expect(order).toEqual(['small in', 'disjoint small', 'small out', 'large']);
  });
});
