/**
 * When the backfill waits for the analytics store (pure): free disk below what the next chunks
 * need (the contract's headroom over the bytes still to move), or a statement the store refused for
 * memory, which is retried after a growing pause instead of failing the step.
 */
import { DISK_HEADROOM_FACTOR, diskNeededBytes } from '../../contract/worker-api.ts';

export interface StepSpace {
  step: number;
  /** Bytes of the step's source table. */
  bytes: number;
  chunksDone: number;
  chunksTotal: number;
}

const GIB = 1024 ** 3;
const gib = (n: number) => `${(n / GIB).toFixed(n < 10 * GIB ? 2 : 0)} GiB`;

/** Why step `s` may not run its next chunk with `freeBytes` free, or undefined when it may. */
export function diskPressure(s: StepSpace, freeBytes: number): string | undefined {
  const needed = diskNeededBytes(s.bytes, s.chunksDone, s.chunksTotal);
  if (freeBytes >= needed) return undefined;
  return `the analytics store has ${gib(freeBytes)} free; backfill step ${s.step} needs about ${gib(needed)} (${DISK_HEADROOM_FACTOR}x the ${gib(needed / DISK_HEADROOM_FACTOR)} of its source still to move)`;
}

/** ClickHouse's MEMORY_LIMIT_EXCEEDED (code 241), as @clickhouse/client reports it. */
export function isMemoryLimit(err: unknown): boolean {
  const e = err as { code?: unknown; type?: unknown; message?: unknown } | undefined;
  return (
    String(e?.code) === '241' ||
    e?.type === 'MEMORY_LIMIT_EXCEEDED' ||
    (typeof e?.message === 'string' && /MEMORY_LIMIT_EXCEEDED/.test(e.message))
  );
}

const CHUNK_ATTEMPTS = 3;
/** A store short of memory gets more time: other work (merges, queries) frees it. */
const MEMORY_ATTEMPTS = 8;
const MAX_MEMORY_PAUSE_MS = 5 * 60_000;

/** Milliseconds before attempt `attempt + 1` of a chunk that failed with `err`; undefined: give up. */
export function chunkRetryDelayMs(err: unknown, attempt: number): number | undefined {
  if (isMemoryLimit(err))
    return attempt >= MEMORY_ATTEMPTS ? undefined : Math.min(MAX_MEMORY_PAUSE_MS, 5_000 * 2 ** attempt);
  return attempt >= CHUNK_ATTEMPTS ? undefined : 1_000 * 2 ** attempt;
}

/** Pauses for disk between two checks: growing, at most this long each. */
const MAX_DISK_RECHECK_MS = 10 * 60_000;

export const diskRecheckMs = (checks: number): number => Math.min(MAX_DISK_RECHECK_MS, 15_000 * 2 ** checks);

/** Free bytes of the store's disks. */
export const FREE_DISK_QUERY = 'SELECT sum(free_space) AS free FROM system.disks';

/** Rows and bytes on disk of a table (`{table:String}`): 0 for a table that does not exist. */
export const TABLE_SIZE_QUERY = `SELECT sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts
WHERE database = currentDatabase() AND table = {table:String} AND active`;
