/**
 * A backup of both databases into the destination bucket, and its restore. A backup is complete
 * only once its manifest exists, and the manifest is written only after every part was read back
 * and its checksum computed; a restore reads nothing else before verifying those checksums.
 */
import { spawn } from 'node:child_process';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import {
  type BackupManifest,
  type BackupPart,
  type BackupPartRecord,
  type BackupTableRecord,
  backupKeys,
  backupManifestSchema,
} from '../../contract/backup.ts';
import type { S3Settings } from '../../kernel/config/blob-storage.ts';
import type { ServiceConfig } from '../../kernel/config/env.ts';
import { createAnalyticsClient } from '../../platform/datastores/clickhouse.ts';
import { statementBounds } from '../../platform/datastores/statement-bounds.ts';
import { dialectOf, migratorsFor } from '../../platform/migrations/schema.ts';
import { oldestPendingAt } from '../ingestion/log/queue.ts';
import type { ReplayProgress, ReplayWindow } from '../ingestion/log/replay.ts';
import { type AnalyticsTable, analyticsTables, keepForTables, parseBackupIndex } from './analytics-tables.ts';
import type { BackupBucket } from './bucket.ts';
import {
  backupStatement,
  bucketKeys,
  digestPart,
  dropStatement,
  type ObjectDigest,
  pgConnection,
  pgRestoreArgs,
  redact,
  restoreStatement,
  secretsOf,
  sizedOverrides,
  storeUrl,
} from './plan.ts';
import { countRelational } from './relational-tables.ts';
import { replayPlan, retentionWarning } from './replay-window.ts';
import { reapplyTombstones, saveTombstones } from './tombstones.ts';

/** A backup or restore that did not happen, and why (already redacted): the CLI exits 1. */
export class BackupFailure extends Error {
  override name = 'BackupFailure';
}

export interface BackupContext {
  config: ServiceConfig;
  destination: S3Settings;
  bucket: BackupBucket;
  pool: pg.Pool;
  /** The environment pg_dump and pg_restore inherit (PATH, locale), without the password. */
  childEnv: NodeJS.ProcessEnv;
  say(line: string): void;
  /** The deployment's ingestion log, when it has one: a restore replays it into the restored store. */
  log?: IngestionLogReplay | undefined;
}

export interface IngestionLogReplay {
  retentionHours: number;
  /** Writes the window's files again (server/features/ingestion/log/replay.ts), reporting as it goes. */
  replay(window: ReplayWindow, onProgress: (p: ReplayProgress) => void): Promise<ReplayProgress>;
}

/** Runs `step`, turning any error into a BackupFailure whose message names no credential. */
export async function guarded<T>(ctx: BackupContext, what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof BackupFailure) throw err;
    const secrets = secretsOf(ctx.destination, ctx.config.databaseUrl);
    throw new BackupFailure(`${what}: ${redact((err as Error).message ?? String(err), secrets)}`);
  }
}

/**
 * A client for statements that may run as long as `bytes` take (its own bounds: the client's
 * timeout is per client), on the `default` database so that a restore into a store without the
 * service's database can start; quiet, as its errors quote the S3() arguments.
 */
export function storeClient(ctx: BackupContext, bytes: number): ClickHouseClient {
  const bounds = statementBounds('jobs', sizedOverrides(bytes, ctx.config.analyticsTimeouts));
  return createAnalyticsClient({ ...ctx.config.clickhouse, database: 'default' }, bounds, true);
}

const relative = (prefix: string, key: string) => key.slice(prefix.length);

/** A part as read back: its record and, for the analytics part, its tables (one read of each object). */
export interface ReadBack {
  record: BackupPartRecord;
  /** Absent when the `.backup` index is missing or unreadable (the part then differs anyway). */
  tables?: AnalyticsTable[];
  problem?: string;
}

/** Lists a part's objects back and computes its checksum and, for the analytics part, its tables. */
export async function readBack(ctx: BackupContext, part: BackupPart, id: string): Promise<ReadBack> {
  const prefix = ctx.destination.prefix;
  const keys = bucketKeys(prefix, id);
  const listed =
    part === 'analytics'
      ? await ctx.bucket.list(keys.analytics)
      : (await ctx.bucket.list(keys.relational)).filter((o) => o.key === keys.relational);
  if (listed.length === 0) throw new BackupFailure(`${part} part of backup ${id} has no objects`);
  const objects = listed.map((o) => ({ key: relative(prefix, o.key), size: o.size }));
  const files = new Map<string, ObjectDigest>();
  const digest = await digestPart(objects, (key) => ctx.bucket.read(`${prefix}${key}`), {
    files,
    keep: (o) => part === 'analytics' && keepForTables(o.key, o.size),
  });
  const record = { part, ...digest };
  if (part !== 'analytics') return { record };
  const folder = backupKeys(id).analytics;
  const index = files.get(`${folder}.backup`)?.content?.toString('utf8');
  if (index === undefined) return { record, problem: 'the part has no .backup index' };
  try {
    return { record, tables: analyticsTables(parseBackupIndex(index), (o) => files.get(`${folder}${o}`)) };
  } catch (err) {
    return { record, problem: `its .backup index does not read: ${(err as Error).message}` };
  }
}

async function schemaVersions(ctx: BackupContext, analytics: ClickHouseClient) {
  const m = migratorsFor(ctx.config, ctx.pool, analytics);
  return { relational: await m.relational.version(), analytics: (await m.analytics.state()).version };
}

async function analyticsBytes(client: ClickHouseClient, database: string): Promise<number> {
  const rs = await client.query({
    query: 'SELECT sum(bytes_on_disk) AS b FROM system.parts WHERE active AND database = {db:String}',
    query_params: { db: database },
    format: 'JSONEachRow',
  });
  return Number((await rs.json<{ b: string }>())[0]?.b ?? 0);
}

/** BACKUP statements to `url` the store is still running (its `system.backups` names them by URL). */
async function runningBackups(client: ClickHouseClient, url: string): Promise<number> {
  const rs = await client.query({
    query: `SELECT count() AS n FROM system.backups WHERE status = 'CREATING_BACKUP' AND position(name, {url:String}) > 0`,
    query_params: { url },
    format: 'JSONEachRow',
  });
  return Number((await rs.json<{ n: string }>())[0]?.n ?? 0);
}

/** Runs `command`, feeding it `input` and handing its stdout to `output`; fails with its stderr's end. */
export function runTool(
  ctx: BackupContext,
  command: string,
  args: string[],
  env: Record<string, string>,
  io: { input?: AsyncIterable<Uint8Array>; output?: (out: NodeJS.ReadableStream) => Promise<void> },
): Promise<void> {
  const child = spawn(command, args, {
    env: { ...ctx.childEnv, ...env },
    stdio: [io.input ? 'pipe' : 'ignore', io.output ? 'pipe' : 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-2000);
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  const feeding = io.input ? pipeline(io.input, child.stdin!) : Promise.resolve();
  const consuming = io.output ? io.output(child.stdout!) : Promise.resolve();
  return (async () => {
    const [fed, consumed, code] = await Promise.allSettled([feeding, consuming, exited]);
    if (code.status === 'rejected') throw code.reason;
    if (code.value !== 0)
      throw new Error(
        `${command} exited with ${code.value}: ${stderr.trim().split('\n').slice(-5).join(' | ')}`,
      );
    if (consumed.status === 'rejected') throw consumed.reason;
    if (fed.status === 'rejected') throw fed.reason;
  })().catch((err) => {
    child.kill('SIGKILL');
    throw err;
  });
}

/**
 * `observatory backup`: refuses an id whose manifest exists; otherwise clears what an earlier run
 * of the same id left, writes the parts, reads them back, and writes the manifest last.
 */
export async function takeBackup(
  ctx: BackupContext,
  id: string,
  parts: BackupPart[],
): Promise<BackupManifest> {
  const startedAt = new Date().toISOString();
  // Read before the store's BACKUP starts: a write pending in the log now is drained after it, so
  // missing from the backup, however long ago it was accepted.
  const oldestPending = await guarded(ctx, "reading the ingestion log's queue", () =>
    oldestPendingAt(ctx.pool),
  );
  const replayFrom =
    oldestPending !== undefined && oldestPending < Date.parse(startedAt)
      ? new Date(oldestPending).toISOString()
      : startedAt;
  const keys = bucketKeys(ctx.destination.prefix, id);
  if (await guarded(ctx, 'reading the destination', () => ctx.bucket.exists(keys.manifest)))
    throw new BackupFailure(`backup ${id} already exists and is complete; a new backup needs a new id`);
  const analytics = storeClient(ctx, 0);
  try {
    // A run killed during its BACKUP statement leaves the statement running in the store: clearing
    // its objects under it would mix two backups' files. The Job's next attempt finds it ended.
    const running = await guarded(ctx, "reading the store's backups", () =>
      runningBackups(analytics, storeUrl(ctx.destination, keys.analytics)),
    );
    if (running > 0)
      throw new BackupFailure(
        `backup ${id}: an earlier run's BACKUP statement is still running in the analytics store; run again once it has ended`,
      );
    const cleared = await guarded(ctx, 'clearing an earlier run', () => ctx.bucket.removeAll(keys.all));
    if (cleared > 0) ctx.say(`backup ${id}: removed ${cleared} objects an unfinished run left`);

    const service = createAnalyticsClient(
      ctx.config.clickhouse,
      statementBounds('jobs', ctx.config.analyticsTimeouts),
      true,
    );
    const schema = await guarded(ctx, 'reading the schema versions', () =>
      schemaVersions(ctx, service).finally(() => service.close()),
    );
    if (parts.includes('analytics')) {
      const database = ctx.config.clickhouse.database;
      const bytes = await guarded(ctx, 'sizing the analytics database', () =>
        analyticsBytes(analytics, database),
      );
      ctx.say(`backup ${id}: analytics database ${database} (${bytes} bytes on disk)`);
      const client = storeClient(ctx, bytes);
      await guarded(ctx, 'analytics BACKUP', () =>
        client.command({ query: backupStatement(database, ctx.destination, keys.analytics) }),
      ).finally(() => client.close());
    }
    const relationalTables = parts.includes('relational')
      ? await dumpRelational(ctx, id, keys.relational)
      : [];

    const records: BackupPartRecord[] = [];
    for (const part of parts) {
      const read = await guarded(ctx, `verifying the ${part} part`, () => readBack(ctx, part, id));
      const record = read.record;
      const tables = part === 'relational' ? relationalTables : analyticsTableRecords(id, read);
      ctx.say(
        `backup ${id}: ${part} verified, ${record.objects} objects, ${record.bytes} bytes, ${tables.length} tables, ${tables.reduce((n, t) => n + t.rows, 0)} rows`,
      );
      records.push({ ...record, tables });
    }
    const manifest = backupManifestSchema.parse({
      id,
      startedAt,
      finishedAt: new Date().toISOString(),
      release: ctx.config.mode.release,
      writeMode: ctx.config.mode.writeMode,
      schema,
      replayFrom,
      parts: records,
    });
    await guarded(ctx, 'writing the manifest', () =>
      ctx.bucket.putText(keys.manifest, `${JSON.stringify(manifest, null, 2)}\n`),
    );
    return manifest;
  } finally {
    await analytics.close();
  }
}

function analyticsTableRecords(id: string, read: ReadBack): BackupTableRecord[] {
  if (!read.tables) throw new BackupFailure(`backup ${id}: analytics part: ${read.problem}`);
  const tables = read.tables;
  const bad = tables.find((t) => t.problem);
  if (bad) throw new BackupFailure(`backup ${id}: analytics table ${bad.table}: ${bad.problem}`);
  return tables.map(({ table, rows, sha256 }) => ({ table, rows, sha256 }));
}

/**
 * `pg_dump --format=custom` streamed to the bucket; the object must hold every byte pg_dump wrote.
 * pg_dump reads the snapshot this transaction exports (`--snapshot`), and the same transaction
 * counts every table's rows: the counts are exactly the dump's, whatever commits meanwhile.
 */
async function dumpRelational(ctx: BackupContext, id: string, key: string): Promise<BackupTableRecord[]> {
  const client = await guarded(ctx, 'connecting to PostgreSQL', () => ctx.pool.connect());
  try {
    await guarded(ctx, 'exporting a snapshot', () =>
      client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY'),
    );
    const { rows } = await guarded(ctx, 'exporting a snapshot', () =>
      client.query<{ s: string }>('SELECT pg_export_snapshot() AS s'),
    );
    const tables = await guarded(ctx, 'counting the relational tables', () => countRelational(client));
    await streamDump(ctx, id, key, rows[0]!.s);
    await client.query('COMMIT');
    return tables;
  } finally {
    // A transaction left open by an error is rolled back with the connection.
    client.release(true);
  }
}

async function streamDump(ctx: BackupContext, id: string, key: string, snapshot: string): Promise<void> {
  const pgc = pgConnection(ctx.config.databaseUrl!);
  let written = 0;
  let reported = 0;
  const args = ['--format=custom', `--snapshot=${snapshot}`, `--dbname=${pgc.dbname}`];
  await guarded(ctx, 'pg_dump', () =>
    runTool(ctx, 'pg_dump', args, pgc.env, {
      output: async (out) => {
        const counted = new Transform({
          transform(chunk: Buffer, _enc, done) {
            written += chunk.length;
            done(null, chunk);
          },
        });
        out.pipe(counted);
        await ctx.bucket.upload(key, counted, (loaded) => {
          if (loaded > reported) ctx.say(`backup ${id}: relational dump ${loaded} bytes uploaded`);
          reported = loaded;
        });
      },
    }),
  );
  const [stored] = (await guarded(ctx, 'reading the dump back', () => ctx.bucket.list(key))).filter(
    (o) => o.key === key,
  );
  if (stored?.size !== written)
    throw new BackupFailure(
      `backup ${id}: pg_dump wrote ${written} bytes, the bucket holds ${stored?.size ?? 0}`,
    );
}

export interface RestoreResult {
  id: string;
  release: BackupManifest['release'];
  writeMode: BackupManifest['writeMode'];
  schema: BackupManifest['schema'];
  restored: BackupPart[];
  /** What the ingestion log's replay wrote into the restored analytics store (with a log only). */
  replay?: RestoreReplay;
}

export interface RestoreReplay {
  /** The window replayed: acceptance times [from, to). */
  from: string;
  to: string;
  /** Log files in the window, and those written to the store again. */
  files: number;
  written: number;
  /** Files of the window that could not be read (missing, or not log entries): left out. */
  unreadable: number;
  /** What the replay could not bring back, e.g. writes past the log's retention. */
  warnings: string[];
}

/** Reads and validates a backup's manifest; no manifest means the backup is not complete. */
export async function readManifest(ctx: BackupContext, id: string): Promise<BackupManifest> {
  const key = bucketKeys(ctx.destination.prefix, id).manifest;
  const text = await guarded(ctx, 'reading the manifest', () => ctx.bucket.getText(key));
  if (text === undefined)
    throw new BackupFailure(
      `backup ${id} is not complete (no ${key}): it was never finished or does not exist; nothing was restored`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BackupFailure(`backup ${id}: ${key} is not JSON; nothing was restored`);
  }
  const manifest = backupManifestSchema.safeParse(parsed);
  if (!manifest.success || manifest.data.id !== id)
    throw new BackupFailure(`backup ${id}: ${key} is not a manifest of this backup; nothing was restored`);
  return manifest.data;
}

/**
 * `observatory restore`: verifies every part to restore against the manifest before touching
 * either database, then replaces the analytics database and the relational one.
 */
export async function restoreBackup(
  ctx: BackupContext,
  id: string,
  parts: BackupPart[],
): Promise<RestoreResult> {
  const manifest = await readManifest(ctx, id);
  const missing = parts.filter((p) => !manifest.parts.some((r) => r.part === p));
  if (missing.length > 0)
    throw new BackupFailure(`backup ${id} does not cover ${missing.join(', ')}; nothing was restored`);
  const records = manifest.parts.filter((r) => parts.includes(r.part));
  for (const expected of records) {
    const { record: found } = await guarded(ctx, `verifying the ${expected.part} part`, () =>
      readBack(ctx, expected.part, id),
    );
    if (
      found.objects !== expected.objects ||
      found.bytes !== expected.bytes ||
      found.sha256 !== expected.sha256
    )
      throw new BackupFailure(
        `backup ${id}: the ${expected.part} part does not match its manifest (${found.objects} objects, ${found.bytes} bytes, sha256 ${found.sha256}; recorded ${expected.objects}, ${expected.bytes}, ${expected.sha256}); nothing was restored`,
      );
    ctx.say(`restore ${id}: ${expected.part} part verified`);
  }
  // The deletions recorded since the backup was taken are in the live database only.
  const saved = await guarded(ctx, 'reading the tombstones', () => saveTombstones(ctx.pool));
  const keys = bucketKeys(ctx.destination.prefix, id);
  for (const record of records) {
    if (record.part === 'analytics') await restoreAnalytics(ctx, keys.analytics, record.bytes);
    else await restoreRelational(ctx, keys.relational);
    ctx.say(`restore ${id}: ${record.part} restored`);
  }
  const service = createAnalyticsClient(
    ctx.config.clickhouse,
    statementBounds('jobs', ctx.config.analyticsTimeouts),
    true,
  );
  const reapplied = await guarded(ctx, 're-applying deletions', () =>
    reapplyTombstones(
      ctx.pool,
      service,
      { release: ctx.config.mode.release, dialect: dialectOf(ctx.config) },
      saved,
      records.map((r) => r.part),
    ).finally(() => service.close()),
  );
  ctx.say(`restore ${id}: ${reapplied} deleted traces or projects deleted again`);
  // After both parts: the relational restore takes the log's queue back to the backup's time, so
  // the replay's queue rows must come after it.
  const replay =
    ctx.log && parts.includes('analytics') ? await replaySince(ctx, ctx.log, manifest) : undefined;
  return {
    id,
    release: manifest.release,
    writeMode: manifest.writeMode,
    schema: manifest.schema,
    restored: records.map((r) => r.part),
    ...(replay ? { replay } : {}),
  };
}

/**
 * Replays the ingestion log's writes the backup may lack into the restored analytics store. A write
 * written again gives the same rows, so a restore run again replays again harmlessly; killed
 * mid-replay, the files it queued are left pending for the workers' drains.
 */
async function replaySince(
  ctx: BackupContext,
  log: IngestionLogReplay,
  manifest: BackupManifest,
): Promise<RestoreReplay> {
  const id = manifest.id;
  const plan = replayPlan(manifest, Date.now(), log.retentionHours);
  const from = new Date(plan.fromMs).toISOString();
  const to = new Date(plan.toMs).toISOString();
  const warnings = plan.beyondRetention ? [retentionWarning(plan.beyondRetention, log.retentionHours)] : [];
  for (const w of warnings) ctx.say(`restore ${id}: warning: ${w}`);
  ctx.say(`restore ${id}: replaying the ingestion log's writes accepted from ${from} to ${to}`);
  const done = await guarded(ctx, 'replaying the ingestion log', () =>
    log.replay({ fromMs: plan.fromMs, toMs: plan.toMs }, (p) =>
      ctx.say(`restore ${id}: replay ${p.written}/${p.files} files written`),
    ),
  );
  if (done.dead > 0) {
    const w = `${done.dead} files of the window could not be read (missing, or not log entries) and were left out; the ingestion_log queue keeps each one's error`;
    ctx.say(`restore ${id}: warning: ${w}`);
    warnings.push(w);
  }
  // The replay counts a file set aside as unreadable as done; here it is not written.
  return { from, to, files: done.files, written: done.written, unreadable: done.dead, warnings };
}

/**
 * Drops the database's tables and views, then RESTOREs them. Not `allow_non_empty_tables`: that
 * appends the backup's rows to what the tables hold (duplicates, and rows written since would
 * stay) and keeps tables the backup does not have. Dropping first is safe here because the parts
 * were verified already, the operator has scaled the writers to zero, and a failed restore can be
 * run again from the same backup.
 */
async function restoreAnalytics(ctx: BackupContext, key: string, bytes: number): Promise<void> {
  const database = ctx.config.clickhouse.database;
  const client = storeClient(ctx, bytes);
  try {
    const rs = await guarded(ctx, 'listing the analytics tables', () =>
      client.query({
        query: `SELECT name FROM system.tables WHERE database = {db:String} AND NOT is_temporary
                ORDER BY engine LIKE '%View' DESC, name`,
        query_params: { db: database },
        format: 'JSONEachRow',
      }),
    );
    for (const { name } of await rs.json<{ name: string }>())
      await guarded(ctx, `dropping ${name}`, () => client.command({ query: dropStatement(database, name) }));
    await guarded(ctx, 'analytics RESTORE', () =>
      client.command({ query: restoreStatement(database, ctx.destination, key) }),
    );
  } finally {
    await client.close();
  }
}

/** `pg_restore --clean --if-exists --single-transaction`: all of the dump or, on any error, nothing. */
async function restoreRelational(ctx: BackupContext, key: string): Promise<void> {
  const pgc = pgConnection(ctx.config.databaseUrl!);
  await guarded(ctx, 'pg_restore', () =>
    runTool(ctx, 'pg_restore', pgRestoreArgs(pgc.dbname, true), pgc.env, { input: ctx.bucket.read(key) }),
  );
}
