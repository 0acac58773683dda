/**
 * When a reconcile may run, in the order controller-runtime enforces (elect, start the caches,
 * wait for them to sync, then start the workers): only while this process holds the Lease, and
 * only while every cache a reconcile reads is complete. The runtime asks before a pass, after it
 * observed the world and before each write, so a pass that lost either stops where it is.
 */

export interface CacheState {
  name: string;
  synced: boolean;
}

export type Blocked = { kind: 'notLeader' } | { kind: 'cachesNotSynced'; caches: string[] };

export function reconcileBlocked(leading: boolean, caches: readonly CacheState[]): Blocked | undefined {
  if (!leading) return { kind: 'notLeader' };
  const unsynced = caches.filter((c) => !c.synced).map((c) => c.name);
  return unsynced.length > 0 ? { kind: 'cachesNotSynced', caches: unsynced } : undefined;
}

/** How long a pass waits for the caches before it looks again. */
export const UNSYNCED_RETRY_MS = 500;
/** How long a pass held back by a late Lease renewal waits before it looks again. */
export const NOT_LEADING_RETRY_MS = 1_000;
