/**
 * The ingestion log's queue in PostgreSQL: one row per log file, pending until a drain wrote it to
 * the analytics store. PostgreSQL rather than Redis: the web already depends on it, it is durable
 * where a Redis may be a cache, claims are `FOR UPDATE SKIP LOCKED` with a lease, and the backlog's
 * age and size are one indexed query. The file is the data; a row only points at it, and a row
 * lost (the web died between the two writes) is found again by the sweeper.
 */
import type pg from 'pg';
import { inTransaction } from '../../../platform/datastores/transaction.ts';

export interface QueuedFile {
  key: string;
  projectId: string;
  receivedAt: number;
  bytes: number;
}

export interface ClaimedFile extends QueuedFile {
  /** 1 on the first claim; more: a redelivery (an earlier claim failed or its drainer died). */
  attempts: number;
  /** The store refused this file's write before (markFailed): it is written alone. */
  refusedBefore: boolean;
}

export interface Backlog {
  files: number;
  bytes: number;
  /**
   * Seconds since the oldest pending file was accepted (0: none pending), leaving out files the
   * store refused: one such file holds back its project, not everyone's writes.
   */
  oldestAgeSeconds: number;
  /** Pending files the store refused (retried alone, after a backoff). */
  refused: number;
}

/**
 * Enqueues files; an already queued key is left as it is (a pending row stays pending, a drained
 * one drained). `leaseMs` > 0 keeps the rows from drains that long: the web writing them itself.
 */
export async function enqueue(pool: pg.Pool, files: QueuedFile[], leaseMs = 0): Promise<void> {
  if (files.length === 0) return;
  await pool.query(
    `INSERT INTO ingestion_log (key, project_id, received_at, bytes, lease_until)
SELECT k, p, to_timestamp(r / 1000.0), b, CASE WHEN $5::int > 0 THEN now() + make_interval(secs => $5::int / 1000.0) END
FROM unnest($1::text[], $2::text[], $3::float8[], $4::int[]) AS f(k, p, r, b)
ON CONFLICT (key) DO NOTHING`,
    [
      files.map((f) => f.key),
      files.map((f) => f.projectId),
      files.map((f) => f.receivedAt),
      files.map((f) => f.bytes),
      Math.trunc(leaseMs),
    ],
  );
}

/** Queues files again for a replay: pending whether or not they were drained before. */
export async function requeue(pool: pg.Pool, files: QueuedFile[]): Promise<void> {
  if (files.length === 0) return;
  await pool.query(
    `INSERT INTO ingestion_log (key, project_id, received_at, bytes)
SELECT k, p, to_timestamp(r / 1000.0), b FROM unnest($1::text[], $2::text[], $3::float8[], $4::int[]) AS f(k, p, r, b)
ON CONFLICT (key) DO UPDATE SET drained_at = NULL, lease_until = NULL, last_error = NULL`,
    [
      files.map((f) => f.key),
      files.map((f) => f.projectId),
      files.map((f) => f.receivedAt),
      files.map((f) => f.bytes),
    ],
  );
}

/** Serialises claims, so two drains never see the same project free (any constant key will do). */
const CLAIM_LOCK = `SELECT pg_advisory_xact_lock(hashtextextended('ingestion-log:claim', 0))`;

/**
 * Claims up to `limit` pending files nobody holds, oldest first, for `leaseMs`: another drain may
 * claim them once the lease ran out without them being drained. A project whose files a drain
 * holds is skipped: one drain at a time writes a project's files, in the order accepted, as the
 * merge of updates onto stored rows needs (a later update must be written after an earlier one).
 * The same `holder` may claim more of its projects (the next claim, read while one is written).
 * A file the web writes itself is leased without an attempt and does not hold its project.
 */
export async function claim(
  pool: pg.Pool,
  limit: number,
  leaseMs: number,
  holder: string,
): Promise<ClaimedFile[]> {
  const rows = await inTransaction(pool, async (client) => {
    await client.query(CLAIM_LOCK);
    const r = await client.query<{
      key: string;
      project_id: string;
      received_ms: number;
      bytes: number;
      attempts: number;
      refused: boolean;
    }>(
      `UPDATE ingestion_log SET lease_until = now() + make_interval(secs => $2::int / 1000.0), attempts = attempts + 1, holder = $3
WHERE key IN (
  SELECT key FROM ingestion_log WHERE drained_at IS NULL AND (lease_until IS NULL OR lease_until < now())
    AND project_id NOT IN (
      SELECT project_id FROM ingestion_log
      WHERE drained_at IS NULL AND lease_until >= now() AND attempts > 0 AND holder IS DISTINCT FROM $3)
  ORDER BY received_at, key LIMIT $1 FOR UPDATE SKIP LOCKED)
RETURNING key, project_id, (extract(epoch FROM received_at) * 1000)::float8 AS received_ms, bytes, attempts,
  last_error IS NOT NULL AS refused`,
      [limit, Math.trunc(leaseMs), holder],
    );
    return r.rows;
  });
  return rows
    .map((r) => ({
      key: r.key,
      projectId: r.project_id,
      receivedAt: Math.round(r.received_ms),
      bytes: r.bytes,
      attempts: r.attempts,
      refusedBefore: r.refused,
    }))
    .sort((a, b) => a.receivedAt - b.receivedAt || (a.key < b.key ? -1 : 1));
}

/** The checkpoint: these files are in the analytics store. */
export async function markDrained(pool: pg.Pool, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  await pool.query(
    'UPDATE ingestion_log SET drained_at = now(), lease_until = NULL, last_error = NULL WHERE key = ANY($1::text[])',
    [keys],
  );
}

/**
 * Hands claimed files back untouched: claimable at once, not counted as an attempt (files read
 * ahead, files after a failed one, and files the store could not take because it was down).
 */
export async function release(pool: pg.Pool, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  await pool.query(
    'UPDATE ingestion_log SET lease_until = NULL, attempts = attempts - 1 WHERE key = ANY($1::text[]) AND drained_at IS NULL',
    [keys],
  );
}

/** Ends the lease of files the web meant to write itself: the drains take them at once. */
export async function unlease(pool: pg.Pool, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  await pool.query(
    'UPDATE ingestion_log SET lease_until = NULL WHERE key = ANY($1::text[]) AND drained_at IS NULL',
    [keys],
  );
}

/**
 * Records why the store refused a file; it stays pending and is written alone from then on. A
 * claimed one is retried after a backoff that doubles with its attempts (half a second to ten),
 * and until then its project is held by nobody and claimed by no drain, so nothing newer of the
 * project is written before it; one the web failed to write itself is claimable at once.
 */
export async function markFailed(pool: pg.Pool, keys: string[], error: string): Promise<void> {
  if (keys.length === 0) return;
  await pool.query(
    `UPDATE ingestion_log SET last_error = $2, holder = NULL,
  lease_until = CASE WHEN attempts > 0 THEN now() + make_interval(secs => least(10, 0.5 * power(2, attempts - 1))) END
WHERE key = ANY($1::text[])`,
    [keys, error.slice(0, 2000)],
  );
}

/**
 * Gives up on files that cannot be written (missing, or not a log entry): drained with the reason,
 * so one bad file neither blocks the backlog bound nor is retried for ever.
 */
export async function markDead(pool: pg.Pool, keys: string[], error: string): Promise<void> {
  if (keys.length === 0) return;
  await pool.query(
    'UPDATE ingestion_log SET drained_at = now(), lease_until = NULL, last_error = $2 WHERE key = ANY($1::text[])',
    [keys, error.slice(0, 2000)],
  );
}

export async function backlog(pool: pg.Pool): Promise<Backlog> {
  const { rows } = await pool.query<{ files: string; bytes: string; age: number | null; refused: string }>(
    `SELECT count(*) AS files, coalesce(sum(bytes), 0) AS bytes,
  extract(epoch FROM now() - min(received_at) FILTER (WHERE last_error IS NULL))::float8 AS age,
  count(*) FILTER (WHERE last_error IS NOT NULL) AS refused
FROM ingestion_log WHERE drained_at IS NULL`,
  );
  const r = rows[0]!;
  return {
    files: Number(r.files),
    bytes: Number(r.bytes),
    oldestAgeSeconds: Math.max(0, r.age ?? 0),
    refused: Number(r.refused),
  };
}

/** When the oldest file not drained yet was accepted (ms); undefined when none is pending. */
export async function oldestPendingAt(pool: pg.Pool): Promise<number | undefined> {
  const { rows } = await pool.query<{ ms: number | null }>(
    'SELECT (extract(epoch FROM min(received_at)) * 1000)::float8 AS ms FROM ingestion_log WHERE drained_at IS NULL',
  );
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? undefined : Math.round(ms);
}

/** Files accepted before `beforeMs` that are not drained yet (through a held client, or the pool). */
export async function pendingBefore(db: pg.Pool | pg.PoolClient, beforeMs: number): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    'SELECT count(*) AS n FROM ingestion_log WHERE drained_at IS NULL AND received_at < to_timestamp($1 / 1000.0)',
    [beforeMs],
  );
  return Number(rows[0]!.n);
}

/** Which of these keys the queue knows (pending or drained). */
export async function knownKeys(pool: pg.Pool, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const { rows } = await pool.query<{ key: string }>(
    'SELECT key FROM ingestion_log WHERE key = ANY($1::text[])',
    [keys],
  );
  return new Set(rows.map((r) => r.key));
}

/** Forgets drained files older than `retentionMs`; returns their keys, whose files may go too. */
export async function pruneDrained(pool: pg.Pool, retentionMs: number, limit: number): Promise<string[]> {
  const { rows } = await pool.query<{ key: string }>(
    `DELETE FROM ingestion_log WHERE key IN (
  SELECT key FROM ingestion_log WHERE drained_at IS NOT NULL AND received_at < now() - make_interval(secs => $1::float8 / 1000.0)
  LIMIT $2) RETURNING key`,
    [retentionMs, limit],
  );
  return rows.map((r) => r.key);
}
