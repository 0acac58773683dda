/**
 * The worker's loop over queued trace deletions (./queue.ts): claim a batch, delete its ids with
 * the same deletion as every other path (./traces.ts), count it done; pause when nothing waits.
 * A batch's lease is renewed while it runs, so a slow store never hands it to another replica,
 * while a killed worker's batch is taken again once its short lease ran out.
 */
import { wakeablePause } from '../../kernel/passes.ts';
import { claimBatch, completeBatch, failBatch, renewLease } from './queue.ts';
import { deleteTraces, type TraceDeletionDeps } from './traces.ts';

/**
 * Trace ids per batch: each analytics statement names at most this many, so a deletion of 100 000
 * traces is a few dozen short statements per table rather than one long one, and holds no lease,
 * lock or mutation for longer than one batch.
 */
export const TRACE_DELETION_BATCH = 5000;
const LEASE_MS = 20_000;
const RENEW_EVERY_MS = 5_000;
const RETRY_MS = 10_000;
const MAX_ATTEMPTS = 5;

export interface TraceDeletionLoopOptions {
  deps: TraceDeletionDeps;
  holder: string;
  /** The pause once nothing waits: the longest a queued deletion waits to be claimed. */
  idleMs: number;
  onBatch: (b: { projectId: string; traces: number }) => void;
  onError: (err: Error) => void;
}

/** Runs one batch if any waits: its project and how many trace ids it deleted. */
export async function runTraceDeletionBatch(
  deps: TraceDeletionDeps,
  holder: string,
  limit = TRACE_DELETION_BATCH,
): Promise<{ projectId: string; traces: number } | undefined> {
  const batch = await claimBatch(deps.pool, holder, LEASE_MS, limit);
  if (!batch) return undefined;
  const renew = setInterval(() => {
    renewLease(deps.pool, holder, batch, LEASE_MS).catch(() => {});
  }, RENEW_EVERY_MS);
  try {
    await deleteTraces(deps, batch.projectId, batch.actor, batch.traceIds);
  } catch (err) {
    await failBatch(deps.pool, batch, (err as Error).message, RETRY_MS, MAX_ATTEMPTS);
    throw err;
  } finally {
    clearInterval(renew);
  }
  await completeBatch(deps.pool, batch);
  return { projectId: batch.projectId, traces: batch.traceIds.length };
}

/** Starts the loop; `stop()` resolves once the batch under way (if any) ended. */
export function startTraceDeletions(o: TraceDeletionLoopOptions) {
  let stopped = false;
  const { pause, wake } = wakeablePause();
  const loop = (async () => {
    while (!stopped) {
      try {
        const done = await runTraceDeletionBatch(o.deps, o.holder);
        if (done) o.onBatch(done);
        else await pause(o.idleMs);
      } catch (err) {
        o.onError(err as Error);
        await pause(o.idleMs);
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake();
      await loop;
    },
  };
}
