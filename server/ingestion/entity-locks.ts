/**
 * Serialises the read-merge-write of the same traces and observations across concurrent requests
 * and web processes. Two batches updating one trace (an SDK that flushes every event on its own)
 * would otherwise both read the stored row, merge their own fields and write it back, and the
 * later write would drop the earlier one's fields. PostgreSQL transaction-scoped advisory locks:
 * every web process shares the database, and a crashed holder releases with its connection.
 */
import type pg from 'pg';

export interface EntityLocks {
  /** Runs `work` while holding every key; waits at most the lock bound, then fails retryably. */
  hold<T>(keys: string[], work: () => Promise<T>): Promise<T>;
}

/** How long a request waits for another request's write of the same entity. */
export const ENTITY_LOCK_WAIT_MS = 15_000;

/** The lock keys of a commit's entities, in one order for every request (no lock-order deadlock). */
export function entityLockKeys(
  projectId: string,
  traceIds: Iterable<string>,
  observationIds: Iterable<string>,
) {
  const keys = new Set<string>();
  for (const id of traceIds) keys.add(`trace:${projectId}:${id}`);
  for (const id of observationIds) keys.add(`observation:${projectId}:${id}`);
  return [...keys].sort();
}

/**
 * Takes the keys' locks in hash order (a collision only serialises more). `lock_timeout` bounds
 * the wait: PostgreSQL then fails with 55P03, which the web answers as a retryable 503.
 */
const LOCK_ALL = `SELECT pg_advisory_xact_lock(h) FROM (
  SELECT DISTINCT hashtextextended(k, 0) AS h FROM unnest($1::text[]) AS k ORDER BY h
) AS ordered`;

/**
 * In-process queues per key in front of the database locks: requests of one process for the same
 * entity wait here, not each on a pooled connection, so a burst for one trace (an SDK flushing
 * every event alone) cannot take the whole pool while it waits.
 */
function localQueues() {
  const tails = new Map<string, Promise<void>>();
  return async function enter(keys: string[]): Promise<() => void> {
    let leave!: () => void;
    const done = new Promise<void>((r) => {
      leave = r;
    });
    const before = keys.map((k) => tails.get(k) ?? Promise.resolve());
    const mine = Promise.all(before).then(() => done);
    for (const k of keys) tails.set(k, mine);
    await Promise.all(before);
    return () => {
      leave();
      for (const k of keys) if (tails.get(k) === mine) tails.delete(k);
    };
  };
}

export function pgEntityLocks(pool: pg.Pool, waitMs = ENTITY_LOCK_WAIT_MS): EntityLocks {
  const enter = localQueues();
  const inDatabase = sharedTransactions(pool, waitMs);
  return {
    async hold(keys, work) {
      if (keys.length === 0) return work();
      const leave = await enter(keys);
      try {
        return await inDatabase(keys, work);
      } finally {
        leave();
      }
    },
  };
}

interface Holder {
  keys: string[];
  work: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * The requests that wait for a connection share the transaction that holds their locks: one
 * pooled connection and three round trips for them all, instead of a connection each (ten per
 * process), which would cap a group commit at ten requests however high the load. Their keys are
 * disjoint (the in-process queues let one request per key through), the locks are taken in one
 * statement in hash order as before, and the transaction commits once every member's work has
 * settled, each member answered with its own outcome.
 */
function sharedTransactions(pool: pg.Pool, waitMs: number) {
  const waiting: Holder[] = [];
  let connecting = false;
  async function open(): Promise<void> {
    connecting = true;
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      for (const h of waiting.splice(0)) h.reject(err);
      return;
    } finally {
      connecting = false;
    }
    await holdInDatabase(client, waitMs, waiting.splice(0));
  }
  return <T>(keys: string[], work: () => Promise<T>): Promise<T> => {
    const held = new Promise<T>((resolve, reject) =>
      waiting.push({ keys, work, resolve: resolve as (value: unknown) => void, reject }),
    );
    if (!connecting) void open();
    return held;
  };
}

async function holdInDatabase(client: pg.PoolClient, waitMs: number, members: Holder[]): Promise<void> {
  try {
    // One round trip for both (no parameters: the simple protocol runs several statements).
    await client.query(`BEGIN; SET LOCAL lock_timeout = ${Math.max(1, Math.trunc(waitMs))}`);
    await client.query(LOCK_ALL, [members.flatMap((m) => m.keys)]);
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    client.release();
    for (const m of members) m.reject(err);
    return;
  }
  const outcomes = await Promise.allSettled(members.map((m) => Promise.resolve().then(m.work)));
  let failed: { err: unknown } | undefined;
  try {
    await client.query('COMMIT');
  } catch (err) {
    failed = { err };
    await client.query('ROLLBACK').catch(() => {});
  } finally {
    client.release();
  }
  for (const [i, m] of members.entries()) {
    const outcome = outcomes[i]!;
    if (failed) m.reject(failed.err);
    else if (outcome.status === 'fulfilled') m.resolve(outcome.value);
    else m.reject(outcome.reason);
  }
}
