/**
 * The ingestion log's housekeeping: the sweeper queues files that have no queue row (the web died
 * between writing the file and queueing it, or the row was lost), and retention deletes drained
 * files, with their rows, once they are older than the retention.
 */
import type pg from 'pg';
import type { BlobStore } from '../../../platform/blobs/store.ts';
import { hourFolder, hoursBetween, parseLogKey } from './entry.ts';
import { enqueue, knownKeys, pruneDrained, type QueuedFile } from './queue.ts';

/** How far back the sweeper looks; retention keeps files longer (ENV_LIMITS.ingestionLogRetentionHours). */
export const SWEEP_WINDOW_MS = 24 * 3_600_000;
/** A file younger than this may still be getting its row from the web that wrote it. */
export const SWEEP_MIN_AGE_MS = 2 * 60_000;
const KEYS_PER_QUERY = 1_000;

/** Files under `prefix` accepted in [fromMs, toMs), optionally of one project, oldest first. */
export async function listLogFiles(
  blobs: BlobStore,
  prefix: string,
  fromMs: number,
  toMs: number,
  projectId?: string,
): Promise<QueuedFile[]> {
  const out: QueuedFile[] = [];
  for (const hour of hoursBetween(fromMs, toMs)) {
    for (const key of await blobs.list(hourFolder(prefix, hour, projectId))) {
      const k = parseLogKey(prefix, key);
      if (k && k.receivedAt >= fromMs && k.receivedAt < toMs)
        out.push({ key, projectId: k.projectId, receivedAt: k.receivedAt, bytes: 0 });
    }
  }
  return out.sort((a, b) => a.receivedAt - b.receivedAt || (a.key < b.key ? -1 : 1));
}

/** Queues the files of the sweep window that the queue does not know; returns how many. */
export async function sweep(
  pool: pg.Pool,
  blobs: BlobStore,
  prefix: string,
  now = Date.now(),
): Promise<number> {
  const files = await listLogFiles(blobs, prefix, now - SWEEP_WINDOW_MS, now - SWEEP_MIN_AGE_MS);
  let queued = 0;
  for (let at = 0; at < files.length; at += KEYS_PER_QUERY) {
    const slice = files.slice(at, at + KEYS_PER_QUERY);
    const known = await knownKeys(
      pool,
      slice.map((f) => f.key),
    );
    const lost = slice.filter((f) => !known.has(f.key));
    for (const f of lost) f.bytes = (await blobs.head(f.key))?.size ?? 0;
    await enqueue(pool, lost);
    queued += lost.length;
  }
  return queued;
}

/** Deletes drained files older than the retention (a batch at a time); returns how many. */
export async function pruneLog(pool: pg.Pool, blobs: BlobStore, retentionMs: number): Promise<number> {
  let pruned = 0;
  for (;;) {
    const keys = await pruneDrained(pool, retentionMs, KEYS_PER_QUERY);
    for (const key of keys) await blobs.delete(key);
    pruned += keys.length;
    if (keys.length < KEYS_PER_QUERY) return pruned;
  }
}
