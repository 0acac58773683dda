/**
 * Replay of the ingestion log: the files accepted in a window (of one project, or all) are queued
 * again and written to the analytics store again, for example after the store was restored from a
 * backup older than the window. Writing a file again gives the same rows, so a replay is
 * idempotent; it is resumable because its work is queue rows: after a kill the workers' drains
 * (or the same replay run again) write what is left. A replay that writes nothing for `maxStallMs`
 * (the store down, or refusing a file) stops with the reason, its files left queued for the workers.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { BlobStore } from '../../../platform/blobs/store.ts';
import type { WriteDeps } from '../write.ts';
import { drainOnce } from './drain.ts';
import { requeue } from './queue.ts';
import { listLogFiles } from './sweep.ts';

export interface ReplayWindow {
  fromMs: number;
  toMs: number;
  projectId?: string | undefined;
}

export interface ReplayProgress {
  files: number;
  /** Files written to the store again (not counting those set aside as unreadable). */
  written: number;
  /** Files that could not be written (missing or unreadable), left out. */
  dead: number;
}

const REQUEUE_SLICE = 1_000;
const REPLAY_BATCH_FILES = 500;
const REPLAY_LEASE_MS = 60_000;
const PENDING_POLL_MS = 500;
/** How long a replay waits without writing a file before it gives up (the default). */
export const REPLAY_MAX_STALL_MS = 600_000;

export class ReplayStalled extends Error {
  override name = 'ReplayStalled';
}

/**
 * How many of `keys` are still queued, how many were set aside as unreadable (drained with an
 * error), and why the store refused one still queued: recorded by whichever drain tried it, a
 * worker's or this process's.
 */
async function stateOf(
  pool: pg.Pool,
  keys: string[],
): Promise<{ pending: number; dead: number; refusal: string | undefined }> {
  const { rows } = await pool.query<{ pending: string; dead: string; refusal: string | null }>(
    `SELECT count(*) FILTER (WHERE drained_at IS NULL) AS pending,
            count(*) FILTER (WHERE drained_at IS NOT NULL AND last_error IS NOT NULL) AS dead,
            min(last_error) FILTER (WHERE drained_at IS NULL) AS refusal
       FROM ingestion_log WHERE key = ANY($1::text[])`,
    [keys],
  );
  const r = rows[0]!;
  return { pending: Number(r.pending), dead: Number(r.dead), refusal: r.refusal ?? undefined };
}

export async function replayLog(
  o: { pool: pg.Pool; blobs: BlobStore; prefix: string; deps: WriteDeps },
  window: ReplayWindow,
  onProgress: (p: ReplayProgress) => void,
  maxStallMs = REPLAY_MAX_STALL_MS,
): Promise<ReplayProgress> {
  const files = await listLogFiles(o.blobs, o.prefix, window.fromMs, window.toMs, window.projectId);
  for (let at = 0; at < files.length; at += REQUEUE_SLICE)
    await requeue(o.pool, files.slice(at, at + REQUEUE_SLICE));
  const keys = files.map((f) => f.key);
  const progress: ReplayProgress = { files: files.length, written: 0, dead: 0 };
  onProgress(progress);
  // Requeued, every key has no error; one the drains set aside since is this replay's dead file
  // (a drain's own count also holds other files it claimed).
  let state = files.length === 0 ? { pending: 0, dead: 0, refusal: undefined } : await stateOf(o.pool, keys);
  const holder = `replay-${randomUUID()}`;
  let movedAt = performance.now();
  let lastError: string | undefined;
  while (state.pending > 0) {
    // This process drains too (workers may be scaled down after a restore); claims are shared.
    const r = await drainOnce({ ...o, batchFiles: REPLAY_BATCH_FILES, leaseMs: REPLAY_LEASE_MS, holder });
    const now = await stateOf(o.pool, keys);
    // Why the store refused one of this replay's files, whichever drain tried it (a worker may have
    // claimed it first); else what this process's drain met: a store that is down refuses no file
    // in particular, so nothing is recorded on the files.
    lastError = now.refusal ?? r.error ?? lastError;
    if (now.pending < state.pending) movedAt = performance.now();
    state = now;
    progress.dead = state.dead;
    progress.written = files.length - state.pending - state.dead;
    onProgress(progress);
    if (state.pending > 0 && performance.now() - movedAt >= maxStallMs) {
      throw new ReplayStalled(
        `replay stopped: no file written for ${Math.round(maxStallMs / 1000)} s, ${state.pending} of ${files.length} files left queued for the workers${lastError ? ` (the store answered: ${lastError})` : ''}`,
      );
    }
    if (r.files + r.dead === 0) await new Promise((resolve) => setTimeout(resolve, PENDING_POLL_MS));
  }
  return progress;
}
