/**
 * Serialises the read-merge-write of the same traces and observations across concurrent requests
 * and web processes. Two batches updating one trace (an SDK that flushes every event on its own)
 * would otherwise both read the stored row, merge their own fields and write it back, and the
 * later write would drop the earlier one's fields. PostgreSQL transaction-scoped advisory locks:
 * every web process shares the database, and a crashed holder releases with its connection.
 */
import type pg from 'pg';
import { inTransaction } from '../datastores/transaction.ts';

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
  return {
    async hold(keys, work) {
      if (keys.length === 0) return work();
      const leave = await enter(keys);
      try {
        return await holdInDatabase(pool, waitMs, keys, work);
      } finally {
        leave();
      }
    },
  };
}

const holdInDatabase = <T>(pool: pg.Pool, waitMs: number, keys: string[], work: () => Promise<T>) =>
  inTransaction(
    pool,
    async (client) => {
      await client.query(LOCK_ALL, [keys]);
      return work();
    },
    // One round trip for both (no parameters: the simple protocol runs several statements).
    `BEGIN; SET LOCAL lock_timeout = ${Math.max(1, Math.trunc(waitMs))}`,
  );
