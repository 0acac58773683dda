/**
 * Serialises the read-merge-write of the same traces and observations across concurrent requests
 * and web processes. Two batches updating one trace (an SDK that flushes every event on its own)
 * would otherwise both read the stored row, merge their own fields and write it back, and the
 * later write would drop the earlier one's fields. PostgreSQL transaction-scoped advisory locks:
 * every web process shares the database, and a crashed holder releases with its connection.
 */
import type pg from 'pg';
import { inTransaction } from '../../platform/datastores/transaction.ts';

/** What one commit locks: entities of one project. */
export interface EntityLockSet {
  projectId: string;
  /** Sorted, distinct (entityLockKeys). */
  keys: string[];
}

export interface EntityLocks {
  /** Runs `work` while holding every key; waits at most the lock bound, then fails retryably. */
  hold<T>(set: EntityLockSet, work: () => Promise<T>): Promise<T>;
}

/**
 * Most entity locks one commit takes; a larger commit (a drain's claim, a huge export) locks its
 * whole project instead. PostgreSQL's lock table is shared by every session and small by default
 * (max_locks_per_transaction 64 x max_connections 100): 500 logged requests' 30 000 entities in one
 * transaction ran it out ("out of shared memory"), failing every other write of the database.
 */
export const MAX_ENTITY_LOCKS = 1024;

/** How long a request waits for another request's write of the same entity. */
export const ENTITY_LOCK_WAIT_MS = 15_000;

/** The lock keys of a commit's entities, in one order for every request (no lock-order deadlock). */
export function entityLockKeys(
  projectId: string,
  traceIds: Iterable<string>,
  observationIds: Iterable<string>,
): EntityLockSet {
  const keys = new Set<string>();
  for (const id of traceIds) keys.add(`trace:${projectId}:${id}`);
  for (const id of observationIds) keys.add(`observation:${projectId}:${id}`);
  return { projectId, keys: [...keys].sort() };
}

/**
 * Two levels, as a database's intention locks: a commit of at most MAX_ENTITY_LOCKS entities holds
 * its project's lock shared and each entity's exclusively; a larger one holds the project's lock
 * exclusively, which excludes every commit of the project and no other. The project's lock comes
 * first, then the keys' in hash order (a collision only serialises more), so no two commits wait
 * on each other in a cycle. `lock_timeout` bounds every wait: PostgreSQL then fails with 55P03,
 * which the web answers as a retryable 503.
 */
const LOCK_PROJECT_SHARED = `SELECT pg_advisory_xact_lock_shared(hashtextextended('project:' || $1, 0))`;
const LOCK_PROJECT = `SELECT pg_advisory_xact_lock(hashtextextended('project:' || $1, 0))`;
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
    async hold(set, work) {
      if (set.keys.length === 0) return work();
      const leave = await enter(set.keys);
      try {
        return await holdInDatabase(pool, waitMs, set, work);
      } finally {
        leave();
      }
    },
  };
}

const holdInDatabase = <T>(pool: pg.Pool, waitMs: number, set: EntityLockSet, work: () => Promise<T>) =>
  inTransaction(
    pool,
    async (client) => {
      if (set.keys.length > MAX_ENTITY_LOCKS) await client.query(LOCK_PROJECT, [set.projectId]);
      else {
        await client.query(LOCK_PROJECT_SHARED, [set.projectId]);
        await client.query(LOCK_ALL, [set.keys]);
      }
      return work();
    },
    // One round trip for both (no parameters: the simple protocol runs several statements).
    `BEGIN; SET LOCAL lock_timeout = ${Math.max(1, Math.trunc(waitMs))}`,
  );
