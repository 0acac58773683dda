/**
 * The ingestion log's side of a history: the variables of webs and workers that write through it,
 * and what befalls its queue (PostgreSQL's `ingestion_log`) as a lost checkpoint, a lost row and
 * the sweeper would have it.
 */
import type pg from 'pg';
import { INGESTION_LOG_ENV, INGESTION_LOG_S3_ENV } from '../../server/contract/env.ts';
import { SWEEP_MIN_AGE_MS, sweep } from '../../server/features/ingestion/log/sweep.ts';
import { loadConfig } from '../../server/kernel/config/env.ts';
import { s3BlobStore } from '../../server/platform/blobs/s3.ts';
import { S3_REGION, type S3Server } from '../fixtures/s3.ts';
import type { Env } from '../fixtures/service.ts';

/** One bucket for every history; each history's files under a prefix of its own. */
export const LOG_BUCKET = 'oracle-log';
/** The shortest lease: a killed drainer's claim is drained again within the history. */
const DRAIN_LEASE_SECONDS = '5';

export function logEnv(s3: S3Server, prefix: string, waitForStore: boolean): Env {
  return {
    [INGESTION_LOG_S3_ENV.bucket]: LOG_BUCKET,
    [INGESTION_LOG_S3_ENV.prefix]: prefix,
    [INGESTION_LOG_S3_ENV.endpoint]: s3.endpoint,
    [INGESTION_LOG_S3_ENV.region]: S3_REGION,
    [INGESTION_LOG_S3_ENV.forcePathStyle]: 'true',
    [INGESTION_LOG_S3_ENV.accessKeyId]: s3.accessKeyId,
    [INGESTION_LOG_S3_ENV.secretAccessKey]: s3.secretAccessKey,
    [INGESTION_LOG_ENV.waitForStore]: String(waitForStore),
    [INGESTION_LOG_ENV.drainLeaseSeconds]: DRAIN_LEASE_SECONDS,
  };
}

/** The `n`-th (modulo their number) file accepted since `sinceMs`, oldest first; only drained ones if `drained`. */
async function pickFile(pool: pg.Pool, sinceMs: number, n: number, drained: boolean) {
  const where = `received_at >= to_timestamp($1 / 1000.0)${drained ? ' AND drained_at IS NOT NULL' : ''}`;
  const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ingestion_log WHERE ${where}`, [
    sinceMs,
  ]);
  const count = Number(rows[0]!.n);
  if (count === 0) return undefined;
  const picked = await pool.query<{ key: string }>(
    `SELECT key FROM ingestion_log WHERE ${where} ORDER BY received_at, key OFFSET $2 LIMIT 1`,
    [sinceMs, n % count],
  );
  return picked.rows[0]?.key;
}

/** A drained file pending again, as a drainer that wrote it but died before its checkpoint leaves it. */
export async function redeliver(pool: pg.Pool, sinceMs: number, n: number): Promise<string | undefined> {
  const key = await pickFile(pool, sinceMs, n, true);
  if (key)
    await pool.query('UPDATE ingestion_log SET drained_at = NULL, lease_until = NULL WHERE key = $1', [key]);
  return key;
}

/**
 * A file's queue row deleted, then the server's sweeper run over the log as a worker's would once
 * the file is old enough to be swept (the clock it is given is that much ahead). Returns the file
 * and how many files the sweeper queued.
 */
export async function loseRowAndSweep(pool: pg.Pool, env: Env, sinceMs: number, n: number) {
  const key = await pickFile(pool, sinceMs, n, false);
  if (!key) return undefined;
  await pool.query('DELETE FROM ingestion_log WHERE key = $1', [key]);
  const s3 = loadConfig(env).ingestionLog.s3!;
  const blobs = s3BlobStore(s3);
  try {
    return { key, queued: await sweep(pool, blobs, s3.prefix, Date.now() + SWEEP_MIN_AGE_MS) };
  } finally {
    blobs.close();
  }
}

/** Files not drained yet (leased ones included). */
export async function pendingFiles(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM ingestion_log WHERE drained_at IS NULL',
  );
  return Number(rows[0]!.n);
}

/** Claims so far: each claim counts an attempt on every file it takes. */
export async function claims(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    'SELECT coalesce(sum(attempts), 0) AS n FROM ingestion_log',
  );
  return Number(rows[0]!.n);
}

/** Files claimed and still leased (by a drainer that may be dead). */
export async function leasedFiles(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM ingestion_log WHERE drained_at IS NULL AND lease_until > now()',
  );
  return Number(rows[0]!.n);
}

/** Files the drain set aside as missing or unreadable: acknowledged writes it never wrote. */
export async function deadFiles(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ key: string; last_error: string }>(
    'SELECT key, last_error FROM ingestion_log WHERE drained_at IS NOT NULL AND last_error IS NOT NULL ORDER BY key',
  );
  return rows.map((r) => `${r.key}: ${r.last_error}`);
}
