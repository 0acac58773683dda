/**
 * Which trace ids the next batch of queued deletions takes (pure). Queued deletions of one project
 * and actor are deleted together: a hundred API calls of a thousand ids each become a few
 * statements per table rather than a hundred, and each statement stays bounded by `limit` ids. A
 * deletion larger than what is left of the batch gives a slice and is continued by the next batch.
 */

/** A queued deletion as the batch sees it: its ids and how many of them (from the front) are done. */
export interface PendingDeletion {
  id: string;
  traceIds: readonly string[];
  done: number;
}

/** The ids `[from, to)` of one deletion that a batch takes. */
export interface BatchSlice {
  id: string;
  from: number;
  to: number;
}

export interface Batch {
  slices: BatchSlice[];
  /** The ids of every slice, each once. */
  traceIds: string[];
}

/** Slices of `pending`, in their order, with at most `limit` ids in all; deletions with nothing left are skipped. */
export function planBatch(pending: readonly PendingDeletion[], limit: number): Batch {
  const slices: BatchSlice[] = [];
  const ids = new Set<string>();
  let room = limit;
  for (const d of pending) {
    if (room <= 0) break;
    const left = d.traceIds.length - d.done;
    if (left <= 0) continue;
    const take = Math.min(left, room);
    slices.push({ id: d.id, from: d.done, to: d.done + take });
    for (const id of d.traceIds.slice(d.done, d.done + take)) ids.add(id);
    room -= take;
  }
  return { slices, traceIds: [...ids] };
}

export type DeletionState = 'queued' | 'running' | 'succeeded' | 'failed';

/** A deletion's state once a slice of it is done: succeeded with its last id, else still running. */
export function stateAfter(slice: BatchSlice, total: number): DeletionState {
  return slice.to >= total ? 'succeeded' : 'running';
}
