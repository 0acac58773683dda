/**
 * The ingestion log as the web writes it: accepted writes are stored in blob storage, then queued;
 * only then are their requests acknowledged. Concurrent requests of a project are committed
 * together: one file and one queue row for all of them, as a database's group commit shares one
 * log flush, since a file's fixed cost (an S3 request, a queue insert) outweighs one request's
 * rows. With `waitForStore` the web also writes the rows itself before answering (reads see them at
 * once, as without a log), and a store that fails or is down no longer fails the requests: the
 * file is durable, and the worker's drain writes it once the store is back.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { isStoreUnavailable } from '../../../kernel/errors.ts';
import type { BlobStore } from '../../../platform/blobs/store.ts';
import { Coalescer } from '../../write-model/group-commit.ts';
import { applyWrites, type IngestionLog, type IngestionWrite, type WriteDeps } from '../write.ts';
import { logKey, packLogFile } from './entry.ts';
import { type Backlog, enqueue, markDrained, markFailed, unlease } from './queue.ts';

/**
 * How long a file the web writes itself is kept from the drains: far longer than a write takes,
 * so a drain picks it up only when the web failed or died.
 */
export const INLINE_LEASE_MS = 60_000;

/** Requests per file at most: a file stays a few MB, one drain claim's share of a large claim. */
const MAX_WRITES_PER_FILE = 64;

/**
 * Longest wait of a file for the requests the last one of its project had (group-commit.ts): the
 * spread of requests answered together coming back, below the file's own time.
 */
const FILE_LINGER_MS = 20;

export interface LogOptions {
  blobs: BlobStore;
  pool: pg.Pool;
  /** Prepended to every key (the bucket's configured prefix). */
  prefix: string;
  /** Write the rows before answering (true), or answer once the file is queued (false). */
  waitForStore: boolean;
  /** A write the web could not apply itself; the drain will. */
  onApplyFailed: (err: Error) => void;
  /**
   * True while older writes wait in the log (after an outage): a new write is then left to the
   * drain too, which writes in the order accepted, instead of overtaking the older ones.
   */
  drainBehind: () => boolean;
}

interface Logged {
  write: IngestionWrite;
  deps: WriteDeps;
}

export function blobIngestionLog(o: LogOptions): IngestionLog {
  /** Writes one file of a project's writes, queues it, and (inline) applies it. */
  const commit = async (projectId: string, callers: Logged[][]) => {
    const logged = callers.flat();
    const writes = logged.map((l) => l.write);
    // The file sorts by its oldest write, so the drain takes it no later than one file of that write.
    const receivedAt = Math.min(...writes.map((w) => w.receivedAt));
    const key = logKey(o.prefix, { projectId, receivedAt, id: randomUUID() });
    const body = await packLogFile(writes);
    await o.blobs.put(key, body, 'application/gzip');
    const file = { key, projectId, receivedAt, bytes: body.length };
    const inline = o.waitForStore && !o.drainBehind();
    await enqueue(o.pool, [file], inline ? INLINE_LEASE_MS : 0);
    if (inline) await applyInline(key, writes, logged[0]!.deps);
    return callers.map(() => undefined);
  };
  const applyInline = async (key: string, writes: IngestionWrite[], deps: WriteDeps) => {
    try {
      await applyWrites(writes, deps);
      await markDrained(o.pool, [key]);
    } catch (err) {
      o.onApplyFailed(err as Error);
      // The drain may take it at once instead of after the lease; a store that is down refused
      // nothing in particular, so the drain need not write this file alone.
      const handOver = isStoreUnavailable(err)
        ? unlease(o.pool, [key])
        : markFailed(o.pool, [key], (err as Error).message);
      await handOver.catch(() => {});
    }
  };
  const files = new Coalescer<Logged, void>(commit, {
    maxRows: MAX_WRITES_PER_FILE,
    lingerMs: FILE_LINGER_MS,
  });
  return {
    record: (write, deps) => files.submit(write.projectId, [{ write, deps }]),
  };
}

export interface BacklogBounds {
  /** Oldest pending file's age past which writes are refused. */
  backlogMaxAgeSeconds: number;
  /** Pending bytes past which writes are refused. */
  backlogMaxBytes: number;
}

/** Why writes are refused for now, and when to retry; undefined while the backlog is in bounds. */
export function backlogRefusal(
  b: Backlog,
  bounds: BacklogBounds,
): { message: string; retryAfterSeconds: number } | undefined {
  const retryAfterSeconds = 30;
  if (b.oldestAgeSeconds > bounds.backlogMaxAgeSeconds)
    return {
      message: `Ingestion backlog: the oldest pending write is ${Math.round(b.oldestAgeSeconds)} s old (bound ${bounds.backlogMaxAgeSeconds} s); retry later`,
      retryAfterSeconds,
    };
  if (b.bytes > bounds.backlogMaxBytes)
    return {
      message: `Ingestion backlog: ${b.bytes} bytes pending (bound ${bounds.backlogMaxBytes}); retry later`,
      retryAfterSeconds,
    };
  return undefined;
}

/** How often the web looks at the backlog: a refusal lags the bound by at most this. */
const BACKLOG_REFRESH_MS = 1_000;
/**
 * A backlog whose oldest write is older than this is one the drain has to catch up on: longer
 * than any write the web makes itself, far shorter than an outage.
 */
const BEHIND_SECONDS = 10;

/**
 * The backlog as the web sees it, read at most once a second whatever the request rate; a read
 * that fails keeps the last answer (the queue being unreachable fails the writes anyway). While a
 * read is under way, writes wait for it unless the last answer is fresh: after an idle spell the
 * answer from before it (an outage's backlog, say) would refuse writes the backlog no longer bounds.
 */
export function backlogGate(read: () => Promise<Backlog>, bounds: BacklogBounds, now = () => Date.now()) {
  let last: Backlog = { files: 0, bytes: 0, oldestAgeSeconds: 0, refused: 0 };
  let lastAt = Number.NEGATIVE_INFINITY;
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<void> | undefined;
  return {
    /** The refusal for a write arriving now, if any. */
    async refusal() {
      if (now() - readAt >= BACKLOG_REFRESH_MS && !reading) {
        readAt = now();
        reading = read()
          .then((b) => {
            last = b;
            lastAt = now();
          })
          .catch(() => {})
          .finally(() => {
            reading = undefined;
          });
      }
      if (reading && now() - lastAt >= BACKLOG_REFRESH_MS) await reading;
      return backlogRefusal(last, bounds);
    },
    /** Whether the drain is behind, as last read. */
    behind: () => last.oldestAgeSeconds > BEHIND_SECONDS,
  };
}
export type BacklogGate = ReturnType<typeof backlogGate>;
