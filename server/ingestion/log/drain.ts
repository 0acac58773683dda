/**
 * The worker's drain of the ingestion log: claims the oldest pending files, reads them and writes
 * their rows to the analytics store many requests at a time (one commit per run of alike writes,
 * one insert per table: server/ingestion/write.ts), then checkpoints them. A drainer killed
 * mid-drain leaves its files leased; they are claimed again when the lease runs out and written
 * again, which gives the same rows (every id, version and price was decided when the web accepted
 * the write), so a redelivery neither loses nor duplicates a row.
 */
import type pg from 'pg';
import type { BlobStore } from '../../blobs/store.ts';
import { applyWrites, type IngestionWrite, type WriteDeps } from '../write.ts';
import { decodeEntry } from './entry.ts';
import { type ClaimedFile, claim, markDead, markDrained, markFailed } from './queue.ts';

export interface DrainOptions {
  pool: pg.Pool;
  blobs: BlobStore;
  deps: WriteDeps;
  /** Files per claim. */
  batchFiles: number;
  leaseMs: number;
}

export interface DrainReport {
  files: number;
  /** Rows written: traces and observations changed, scores and events. */
  rows: number;
  /** Files claimed again after an earlier claim did not drain them. */
  redeliveries: number;
  /** Files left pending after a failed write (retried after their lease). */
  failed: number;
  /** Files given up on (missing or unreadable). */
  dead: number;
}

/** A file whose write failed is claimable again this soon (the drain's own backoff spaces the tries). */
const RETRY_AFTER_FAILURE_MS = 1_000;

/** Files read from blob storage at once. */
const READ_CONCURRENCY = 16;

const rowsOf = (w: IngestionWrite) => w.changes.size + w.scores.length + w.events.length;

async function load(
  blobs: BlobStore,
  files: ClaimedFile[],
): Promise<{ loaded: { file: ClaimedFile; write: IngestionWrite }[]; dead: [string, string][] }> {
  const loaded: { file: ClaimedFile; write: IngestionWrite }[] = [];
  const dead: [string, string][] = [];
  for (let at = 0; at < files.length; at += READ_CONCURRENCY) {
    const slice = files.slice(at, at + READ_CONCURRENCY);
    const bodies = await Promise.all(slice.map((f) => blobs.get(f.key)));
    for (const [i, file] of slice.entries()) {
      const body = bodies[i];
      if (body === undefined) {
        dead.push([file.key, 'log file missing']);
        continue;
      }
      try {
        loaded.push({ file, write: decodeEntry(body.toString('utf8')) });
      } catch (err) {
        dead.push([file.key, (err as Error).message]);
      }
    }
  }
  return { loaded, dead };
}

/** One claim's worth: what was written, redelivered, failed. */
export async function drainOnce(o: DrainOptions): Promise<DrainReport> {
  const claimed = await claim(o.pool, o.batchFiles, o.leaseMs);
  const report: DrainReport = { files: 0, rows: 0, redeliveries: 0, failed: 0, dead: 0 };
  if (claimed.length === 0) return report;
  report.redeliveries = claimed.filter((f) => f.attempts > 1).length;
  const { loaded, dead } = await load(o.blobs, claimed);
  for (const [key, why] of dead) await markDead(o.pool, [key], why);
  report.dead = dead.length;
  // A file that failed before is written alone, so a file the store refuses holds back only itself.
  const first = loaded.filter((l) => l.file.attempts === 1);
  const again = loaded.filter((l) => l.file.attempts > 1);
  const groups = [...(first.length > 0 ? [first] : []), ...again.map((l) => [l])];
  for (const group of groups) {
    const keys = group.map((l) => l.file.key);
    try {
      await applyWrites(
        group.map((l) => l.write),
        o.deps,
      );
      await markDrained(o.pool, keys);
      report.files += group.length;
      for (const l of group) report.rows += rowsOf(l.write);
    } catch (err) {
      report.failed += group.length;
      await markFailed(o.pool, keys, (err as Error).message, RETRY_AFTER_FAILURE_MS).catch(() => {});
    }
  }
  return report;
}

export interface DrainLoopOptions extends DrainOptions {
  /** Pause when a claim found less than a full batch (the log is caught up). */
  idleMs: number;
  onReport: (r: DrainReport) => void;
  onError: (err: Error) => void;
}

/** Longest pause after failures, which double the pause from `idleMs`. */
const MAX_BACKOFF_MS = 10_000;

/** Drains until stopped: at once again after a full batch, after `idleMs` otherwise. */
export function startDrain(o: DrainLoopOptions) {
  let stopped = false;
  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const loop = (async () => {
    let backoff = o.idleMs;
    while (!stopped) {
      try {
        const r = await drainOnce(o);
        o.onReport(r);
        if (r.failed > 0) {
          backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
          await pause(backoff);
        } else {
          backoff = o.idleMs;
          if (r.files + r.dead < o.batchFiles) await pause(o.idleMs);
        }
      } catch (err) {
        o.onError(err as Error);
        backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
        await pause(backoff);
      }
    }
  })();
  return {
    /** Resolves once the claim under way (if any) is written or failed. */
    async stop() {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
