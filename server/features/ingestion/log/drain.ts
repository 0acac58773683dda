/**
 * The worker's drain of the ingestion log: claims the oldest pending files, reads them and writes
 * their rows to the analytics store many requests at a time (one commit per run of alike writes,
 * one insert per table: server/features/ingestion/write.ts), then checkpoints them. A drainer killed
 * mid-drain leaves its files leased; they are claimed again when the lease runs out and written
 * again, which gives the same rows (every id, version and price was decided when the web accepted
 * the write), so a redelivery neither loses nor duplicates a row.
 */
import type pg from 'pg';
import { isStoreUnavailable } from '../../../kernel/errors.ts';
import { wakeablePause } from '../../../kernel/passes.ts';
import type { BlobStore } from '../../../platform/blobs/store.ts';
import { applyWrites, type IngestionWrite, type WriteDeps } from '../write.ts';
import { readLogFile } from './entry.ts';
import { type ClaimedFile, claim, markDead, markDrained, markFailed, release } from './queue.ts';

export interface DrainOptions {
  pool: pg.Pool;
  blobs: BlobStore;
  deps: WriteDeps;
  /** Files per claim. */
  batchFiles: number;
  leaseMs: number;
  /** Who claims: one drain loop, which may hold several claims of a project (server/features/ingestion/log/queue.ts). */
  holder: string;
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
  /** The first failed write's error. */
  error?: string;
}

/** Files read from blob storage at once. */
const READ_CONCURRENCY = 16;

const rowsOf = (w: IngestionWrite) => w.changes.size + w.scores.length + w.events.length;

/** A claimed file and the writes it holds, in the order logged. */
interface Loaded {
  file: ClaimedFile;
  writes: IngestionWrite[];
}

async function load(
  blobs: BlobStore,
  files: ClaimedFile[],
): Promise<{ loaded: Loaded[]; dead: [string, string][] }> {
  const loaded: Loaded[] = [];
  const dead: [string, string][] = [];
  for (let at = 0; at < files.length; at += READ_CONCURRENCY) {
    const slice = files.slice(at, at + READ_CONCURRENCY);
    const read = await Promise.all(
      slice.map(async (f) => {
        const body = await blobs.get(f.key);
        if (body === undefined) return new Error('log file missing');
        return readLogFile(body).catch((err: Error) => err);
      }),
    );
    for (const [i, file] of slice.entries()) {
      const writes = read[i]!;
      if (writes instanceof Error) dead.push([file.key, writes.message]);
      else loaded.push({ file, writes });
    }
  }
  return { loaded, dead };
}

/** A claim with its files read: what the next write takes. */
interface Claim {
  claimed: ClaimedFile[];
  loaded: Loaded[];
  dead: [string, string][];
}

async function claimAndLoad(o: DrainOptions): Promise<Claim> {
  const claimed = await claim(o.pool, o.batchFiles, o.leaseMs, o.holder);
  return claimed.length === 0
    ? { claimed, loaded: [], dead: [] }
    : { claimed, ...(await load(o.blobs, claimed)) };
}

/** What a claim's write left behind for the next claim, beside its report. */
interface Written {
  report: DrainReport;
  /** The store was down: nothing of the claim after the failure was tried. */
  storeDown: boolean;
  /** Projects whose file the store refused: nothing newer of theirs may be written before it. */
  refused: Set<string>;
}

/** Writes a loaded claim and checkpoints it: what was written, redelivered, failed. */
async function writeClaim(o: DrainOptions, c: Claim): Promise<Written> {
  const report: DrainReport = { files: 0, rows: 0, redeliveries: 0, failed: 0, dead: 0 };
  const refused = new Set<string>();
  if (c.claimed.length === 0) return { report, storeDown: false, refused };
  report.redeliveries = c.claimed.filter((f) => f.attempts > 1).length;
  for (const [key, why] of c.dead) await markDead(o.pool, [key], why);
  report.dead = c.dead.length;
  // In the order accepted: consecutive files share a commit, except one the store refused before,
  // which is written alone, so a file the store refuses holds back only itself and the newer files
  // of its project, handed back (claimed again after it, once its backoff passed). A store that is
  // down refuses no file in particular: then the rest of the claim is handed back.
  const groups: Loaded[][] = [];
  for (const l of c.loaded) {
    const last = groups.at(-1);
    if (last && !l.file.refusedBefore && !last[0]!.file.refusedBefore) last.push(l);
    else groups.push([l]);
  }
  for (const [i, group] of groups.entries()) {
    const held = group.filter((l) => refused.has(l.file.projectId)).map((l) => l.file.key);
    await release(o.pool, held).catch(() => {});
    const todo = group.filter((l) => !refused.has(l.file.projectId));
    if (todo.length === 0) continue;
    const keys = todo.map((l) => l.file.key);
    try {
      await applyWrites(
        todo.flatMap((l) => l.writes),
        o.deps,
      );
      await markDrained(o.pool, keys);
      report.files += todo.length;
      for (const l of todo) for (const w of l.writes) report.rows += rowsOf(w);
    } catch (err) {
      report.failed += todo.length;
      report.error ??= (err as Error).message;
      if (isStoreUnavailable(err)) {
        const rest = groups.slice(i + 1).flatMap((g) => g.map((l) => l.file.key));
        await release(o.pool, [...keys, ...rest]).catch(() => {});
        return { report, storeDown: true, refused };
      }
      await markFailed(o.pool, keys, (err as Error).message).catch(() => {});
      for (const l of todo) refused.add(l.file.projectId);
    }
  }
  return { report, storeDown: false, refused };
}

/** One claim's worth: what was written, redelivered, failed. */
export async function drainOnce(o: DrainOptions): Promise<DrainReport> {
  return (await writeClaim(o, await claimAndLoad(o))).report;
}

export interface DrainLoopOptions extends DrainOptions {
  /** Pause when a claim found less than a full batch (the log is caught up). */
  idleMs: number;
  onReport: (r: DrainReport) => void;
  onError: (err: Error) => void;
}

/** Longest pause after failures, which double the pause from `idleMs`. */
const MAX_BACKOFF_MS = 10_000;

/**
 * Drains until stopped: at once again after a full batch, after `idleMs` otherwise. While a full
 * claim is written, the next one is claimed and read from blob storage, so the store waits for
 * neither; claims are still written one after the other, in order. A store that is down pauses
 * the drain (doubling from `idleMs`); a file it refuses waits for its own retry, alone.
 */
export function startDrain(o: DrainLoopOptions) {
  let stopped = false;
  const { pause, wake } = wakeablePause();
  const loop = (async () => {
    let backoff = o.idleMs;
    let next: Promise<Claim> | undefined;
    // Files read ahead and not to be written now are handed back rather than left to their lease
    // (newer files of their projects would otherwise be claimed before them): all of them, or
    // those of the projects `only` names.
    const handBackAhead = async (only?: Set<string>) => {
      const ahead = await next?.catch(() => undefined);
      next = undefined;
      if (!ahead) return;
      const back = only ? ahead.claimed.filter((f) => only.has(f.projectId)) : ahead.claimed;
      await release(
        o.pool,
        back.map((f) => f.key),
      ).catch(() => {});
      if (only && back.length < ahead.claimed.length) next = Promise.resolve(without(ahead, only));
    };
    while (!stopped) {
      try {
        const current = await (next ?? claimAndLoad(o));
        next = undefined;
        const full = current.claimed.length >= o.batchFiles;
        if (full) {
          next = claimAndLoad(o);
          next.catch(() => {}); // seen when awaited
        }
        const { report, storeDown, refused } = await writeClaim(o, current);
        o.onReport(report);
        if (storeDown) {
          // What was read ahead is newer than what failed: handed back, to be written after it.
          await handBackAhead();
          backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
          await pause(backoff);
        } else {
          if (refused.size > 0) await handBackAhead(refused);
          backoff = o.idleMs;
          if (!full) await pause(o.idleMs);
        }
      } catch (err) {
        await handBackAhead();
        o.onError(err as Error);
        backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
        await pause(backoff);
      }
    }
    await handBackAhead();
  })();
  return {
    /** Resolves once the claim under way (if any) is written or failed. */
    async stop() {
      stopped = true;
      wake();
      await loop;
    },
  };
}

/** A claim without the files of some projects. */
const without = (c: Claim, projects: Set<string>): Claim => ({
  claimed: c.claimed.filter((f) => !projects.has(f.projectId)),
  loaded: c.loaded.filter((l) => !projects.has(l.file.projectId)),
  dead: c.dead,
});
