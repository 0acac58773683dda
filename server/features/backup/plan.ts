/**
 * The pure parts of `observatory backup` and `observatory restore`: where a backup's objects are,
 * the analytics store's own BACKUP and RESTORE statements, how long they may run, the checksum a
 * part is verified by, and the redaction of the destination's credentials from any message.
 */
import { createHash } from 'node:crypto';
import {
  BACKUP_ID_PATTERN,
  BACKUP_PARTS,
  type BackupManifest,
  type BackupPart,
  type BackupSummary,
  backupKeys,
  backupSummarySchema,
} from '../../contract/backup.ts';
import { ANALYTICS_ROLE_BOUNDS, ANALYTICS_TIMEOUT_LIMITS } from '../../contract/env.ts';
import type { TimeoutOverrides } from '../../kernel/config/analytics-timeouts.ts';
import type { S3Settings } from '../../kernel/config/blob-storage.ts';

const ID = new RegExp(BACKUP_ID_PATTERN);

/** The id as given, or why it cannot name a backup. */
export function checkBackupId(id: string | undefined): string | { problem: string } {
  if (id === undefined) return { problem: '--id is required' };
  return ID.test(id) ? id : { problem: `--id ${id} must match ${BACKUP_ID_PATTERN}` };
}

/** `--include analytics,relational` (default both, in the contract's order), or why not. */
export function parseInclude(value: string | undefined): BackupPart[] | { problem: string } {
  if (value === undefined) return [...BACKUP_PARTS];
  const named = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = named.filter((p) => !(BACKUP_PARTS as readonly string[]).includes(p));
  if (unknown.length > 0 || named.length === 0)
    return { problem: `--include takes a list of ${BACKUP_PARTS.join(',')}; got "${value}"` };
  return BACKUP_PARTS.filter((p) => named.includes(p));
}

/** A backup's keys with the destination's prefix: what the bucket holds. */
export function bucketKeys(prefix: string, id: string) {
  const k = backupKeys(id);
  return {
    analytics: `${prefix}${k.analytics}`,
    relational: `${prefix}${k.relational}`,
    manifest: `${prefix}${k.manifest}`,
    /** Everything of this backup, for clearing what a killed run left. */
    all: `${prefix}${id}/`,
  };
}

/** The URL the analytics store addresses `key` by, in the style the destination is configured for. */
export function storeUrl(d: S3Settings, key: string): string {
  const path = key.split('/').map(encodeURIComponent).join('/');
  if (d.endpoint === undefined) return `https://${d.bucket}.s3.${d.region}.amazonaws.com/${path}`;
  const endpoint = new URL(d.endpoint);
  const base = endpoint.href.replace(/\/+$/, '');
  if (d.forcePathStyle) return `${base}/${d.bucket}/${path}`;
  return `${endpoint.protocol}//${d.bucket}.${endpoint.host}${endpoint.pathname.replace(/\/+$/, '')}/${path}`;
}

const literal = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const ident = (s: string) => `\`${s.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;

/** `S3(url[, key, secret])`: without credentials the store uses its own (environment, instance role). */
function s3Target(d: S3Settings, key: string): string {
  const creds = d.credentials
    ? `, ${literal(d.credentials.accessKeyId)}, ${literal(d.credentials.secretAccessKey)}`
    : '';
  return `S3(${literal(storeUrl(d, key))}${creds})`;
}

/**
 * The same statements for ClickHouse >= 25.12 and the embedded engine (chdb 26.x, which implements
 * BACKUP/RESTORE to S3 itself): the database's tables, views and data as the store's own files.
 */
export const backupStatement = (database: string, d: S3Settings, key: string) =>
  `BACKUP DATABASE ${ident(database)} TO ${s3Target(d, key)}`;
export const restoreStatement = (database: string, d: S3Settings, key: string) =>
  `RESTORE DATABASE ${ident(database)} FROM ${s3Target(d, key)}`;

/** Dropping one object of the analytics database before a restore recreates it. */
export const dropStatement = (database: string, table: string) =>
  `DROP TABLE IF EXISTS ${ident(database)}.${ident(table)} SYNC`;

/** The credential values of the destination and the database URL's password, for redaction. */
export function secretsOf(d: S3Settings | undefined, databaseUrl: string | undefined): string[] {
  const out: string[] = [];
  if (d?.credentials) out.push(d.credentials.secretAccessKey, d.credentials.accessKeyId);
  if (databaseUrl) {
    const password = safeUrl(databaseUrl)?.password;
    if (password) out.push(password, decodeURIComponent(password));
  }
  return [...new Set(out.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
}

const safeUrl = (s: string) => {
  try {
    return new URL(s);
  } catch {
    return undefined;
  }
};

/** `text` with every secret (and its URL-encoded form) replaced: statements echo their S3() arguments. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) {
    for (const form of new Set([s, encodeURIComponent(s)])) out = out.split(form).join('[redacted]');
  }
  return out;
}

/** The slowest rate a backup or restore statement is expected to sustain, for its time budget. */
export const MIN_BYTES_PER_SECOND = 4 * 1024 * 1024;
const CLIENT_MARGIN_SECONDS = 5;

/**
 * The bounds of a BACKUP or RESTORE statement over `bytes`: the Jobs' default budget plus the time
 * the bytes take at the slowest expected rate, capped by the limit any bound may have. Overrides set
 * by the environment win (an admin who knows the store's rate).
 */
export function sizedOverrides(bytes: number, overrides: TimeoutOverrides): TimeoutOverrides {
  if (overrides.requestTimeoutSeconds !== undefined || overrides.maxExecutionTimeSeconds !== undefined)
    return overrides;
  const execution = Math.min(
    ANALYTICS_TIMEOUT_LIMITS.max - CLIENT_MARGIN_SECONDS,
    ANALYTICS_ROLE_BOUNDS.jobs.maxExecutionTimeSeconds + Math.ceil(bytes / MIN_BYTES_PER_SECOND),
  );
  return { maxExecutionTimeSeconds: execution, requestTimeoutSeconds: execution + CLIENT_MARGIN_SECONDS };
}

export interface StoredObject {
  /** Relative to the destination's prefix (`<id>/analytics/...`), so a copied backup still verifies. */
  key: string;
  size: number;
}

/** Byte order, the same on every machine (not the locale's). */
export const byKey = (a: StoredObject, b: StoredObject) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** One object as read for its part's checksum: its own sha256, and its content when kept. */
export interface ObjectDigest {
  size: number;
  sha256: string;
  content?: Buffer;
}

/** Where digestPart records each object it reads, keeping the content of those `keep` selects. */
export interface ObjectRecorder {
  files: Map<string, ObjectDigest>;
  keep(o: StoredObject): boolean;
}

/**
 * sha256 over a part's objects in key order: for each, `key\nsize\n` then its content. Content
 * that does not have the listed size fails the part (an object changed while read). With a
 * recorder, each object's own sha256 (and kept content) comes out of the same single read.
 */
export async function digestPart(
  objects: readonly StoredObject[],
  read: (key: string) => AsyncIterable<Uint8Array>,
  recorder?: ObjectRecorder,
): Promise<{ objects: number; bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for (const o of [...objects].sort(byKey)) {
    hash.update(`${o.key}\n${o.size}\n`);
    const own = createHash('sha256');
    const keep = recorder?.keep(o) ? ([] as Buffer[]) : undefined;
    let seen = 0;
    for await (const chunk of read(o.key)) {
      seen += chunk.byteLength;
      hash.update(chunk);
      own.update(chunk);
      keep?.push(Buffer.from(chunk));
    }
    if (seen !== o.size) throw new Error(`object ${o.key} has ${seen} bytes, listed as ${o.size}`);
    recorder?.files.set(o.key, {
      size: o.size,
      sha256: own.digest('hex'),
      ...(keep ? { content: Buffer.concat(keep) } : {}),
    });
    bytes += o.size;
  }
  return { objects: objects.length, bytes, sha256: hash.digest('hex') };
}

/** The termination message's limit (Kubernetes truncates beyond it). */
export const TERMINATION_MESSAGE_MAX_BYTES = 4096;

/** The manifest without checksums, as the Job's termination message; throws if it would not fit. */
export function summaryOf(m: BackupManifest): string {
  const summary: BackupSummary = backupSummarySchema.parse({
    ...m,
    parts: m.parts.map(({ sha256: _, tables: __, ...rest }) => rest),
  });
  const text = JSON.stringify(summary);
  if (Buffer.byteLength(text) >= TERMINATION_MESSAGE_MAX_BYTES)
    throw new Error(
      `the backup summary takes ${Buffer.byteLength(text)} bytes, over the termination message's limit`,
    );
  return text;
}

/**
 * How pg_dump and pg_restore reach the database: the URL without its password (arguments are
 * visible to every process of the machine) and the password in their environment.
 */
export function pgConnection(databaseUrl: string): { dbname: string; env: Record<string, string> } {
  const url = new URL(databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = '';
  return { dbname: url.href, env: password ? { PGPASSWORD: password } : {} };
}

/**
 * `RESTORE DATABASE <live> AS <scratch>`, leaving out `except` (the views: they name live tables).
 * The store creates the renamed database with its own engine and UUID, then finds it defined
 * otherwise than the backup's bare `CREATE DATABASE`: the definition is not what is verified.
 */
export const restoreAsStatement = (
  database: string,
  scratch: string,
  except: readonly string[],
  d: S3Settings,
  key: string,
) =>
  `RESTORE DATABASE ${ident(database)} AS ${ident(scratch)}${
    except.length > 0
      ? ` EXCEPT TABLES ${except.map((t) => `${ident(database)}.${ident(t)}`).join(', ')}`
      : ''
  } FROM ${s3Target(d, key)} SETTINGS allow_different_database_def = true`;

export const dropDatabaseStatement = (database: string) => `DROP DATABASE IF EXISTS ${ident(database)} SYNC`;

/**
 * pg_restore's arguments: the whole dump in one transaction or, on any error, nothing; `clean`
 * first drops what the dump recreates (a restore over the live database, not into a new one).
 */
export function pgRestoreArgs(dbname: string, clean: boolean): string[] {
  return [
    ...(clean ? ['--clean', '--if-exists'] : []),
    '--single-transaction',
    '--exit-on-error',
    '--no-owner',
    '--no-privileges',
    `--dbname=${dbname}`,
  ];
}
