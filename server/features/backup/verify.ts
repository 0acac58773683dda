/**
 * `observatory backup-verify`: proves a complete backup by restoring it into scratch databases on
 * the same servers (never the live ones) and comparing what came back with its manifest: each
 * part's objects, each analytics table's objects and rows in the bucket, and each table's rows as
 * restored. The scratch databases are dropped first (a killed run's leftovers) and always after.
 */
import pg from 'pg';
import type { BackupManifest, BackupTableRecord, BackupVerifySummary } from '../../contract/backup.ts';
import {
  bucketKeys,
  dropDatabaseStatement,
  pgConnection,
  pgRestoreArgs,
  restoreAsStatement,
} from './plan.ts';
import { countRelational } from './relational-tables.ts';
import {
  type BackupContext,
  guarded,
  type ReadBack,
  readBack,
  readManifest,
  runTool,
  storeClient,
} from './run.ts';
import {
  compareTables,
  type Difference,
  type FoundTable,
  scratchNames,
  verifySummary,
} from './verify-plan.ts';

const pgIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** The database URL with another database in its path. */
function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.href;
}

const liveRelationalName = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1)) || 'postgres';

/** What one part's verification found: its differences, tables compared and rows restored. */
interface PartOutcome {
  differences: Difference[];
  compared: number;
  rows: number;
}

async function dropScratch(ctx: BackupContext, names: ReturnType<typeof scratchNames>): Promise<void> {
  const client = storeClient(ctx, 0);
  try {
    await guarded(ctx, 'dropping the scratch analytics database', () =>
      client.command({ query: dropDatabaseStatement(names.analytics) }),
    );
  } finally {
    await client.close();
  }
  await guarded(ctx, 'dropping the scratch relational database', () =>
    ctx.pool.query(`DROP DATABASE IF EXISTS ${pgIdent(names.relational)} WITH (FORCE)`),
  );
}

export async function verifyBackup(ctx: BackupContext, id: string): Promise<BackupVerifySummary> {
  const manifest = await readManifest(ctx, id);
  const url = ctx.config.databaseUrl!;
  const names = scratchNames(liveRelationalName(url), ctx.config.clickhouse.database);
  await dropScratch(ctx, names);
  try {
    const differences: Difference[] = [];
    const rows: BackupVerifySummary['rows'] = {};
    let compared = 0;
    for (const record of manifest.parts) {
      // One read of the part's objects gives its checksum and each analytics table's.
      const read = await guarded(ctx, `reading the ${record.part} part`, () =>
        readBack(ctx, record.part, id),
      );
      const outcome =
        record.part === 'analytics'
          ? await verifyAnalytics(ctx, manifest, record.tables, read, names.analytics)
          : await verifyRelational(ctx, manifest, record.tables, names.relational);
      // A changed part is named after its tables: those say which table it is.
      const found = read.record;
      if (found.sha256 !== record.sha256 || found.objects !== record.objects || found.bytes !== record.bytes)
        outcome.differences.push({
          part: record.part,
          detail: `${found.objects} objects, ${found.bytes} bytes, sha256 ${found.sha256}; recorded ${record.objects}, ${record.bytes}, ${record.sha256}`,
        });
      differences.push(...outcome.differences);
      compared += outcome.compared;
      rows[record.part] = outcome.rows;
      ctx.say(
        `backup-verify ${id}: ${record.part}: ${outcome.compared} tables compared, ${outcome.rows} rows restored, ${outcome.differences.length} differences`,
      );
    }
    return verifySummary({
      id,
      comparable: manifest.parts.every((p) => p.tables !== undefined),
      tables: compared,
      rows,
      differences,
    });
  } finally {
    await dropScratch(ctx, names);
    ctx.say(`backup-verify ${id}: scratch databases ${names.analytics} and ${names.relational} dropped`);
  }
}

/**
 * The tables' objects in the bucket first (a corrupted object is named by its table even when the
 * store then refuses to restore it), then the RESTORE into the scratch database and its rows.
 */
async function verifyAnalytics(
  ctx: BackupContext,
  manifest: BackupManifest,
  recorded: BackupTableRecord[] | undefined,
  read: ReadBack,
  scratch: string,
): Promise<PartOutcome> {
  const part = 'analytics';
  const stored = read.tables ?? [];
  const differences: Difference[] = read.problem ? [{ part, detail: read.problem }] : [];
  if (recorded && read.tables) differences.push(...compareTables(part, recorded, stored, 'in the bucket'));
  const views = stored.filter((t) => t.view).map((t) => t.table);
  const bytes = manifest.parts.find((p) => p.part === part)!.bytes;
  const client = storeClient(ctx, bytes);
  try {
    const database = ctx.config.clickhouse.database;
    const key = bucketKeys(ctx.destination.prefix, manifest.id).analytics;
    try {
      await guarded(ctx, 'analytics RESTORE into the scratch database', () =>
        client.command({ query: restoreAsStatement(database, scratch, views, ctx.destination, key) }),
      );
    } catch (err) {
      differences.push({ part, detail: `the part does not restore: ${(err as Error).message}` });
      return { differences, compared: recorded?.length ?? 0, rows: 0 };
    }
    // Rows as the restored parts hold them: what each part's count.txt says, as recorded.
    const rs = await guarded(ctx, 'counting the restored analytics tables', () =>
      client.query({
        query: `SELECT t.name AS table, toString(sum(p.rows)) AS rows
                FROM system.tables AS t
                LEFT JOIN (SELECT table, rows FROM system.parts WHERE database = {db:String} AND active) AS p
                  ON p.table = t.name
                WHERE t.database = {db:String} GROUP BY t.name ORDER BY t.name`,
        query_params: { db: scratch },
        format: 'JSONEachRow',
      }),
    );
    const restored: FoundTable[] = (await rs.json<{ table: string; rows: string }>()).map((r) => ({
      table: r.table,
      rows: Number(r.rows),
    }));
    const tables = recorded?.filter((t) => !views.includes(t.table));
    if (tables) differences.push(...compareTables(part, tables, restored, 'restored'));
    return {
      differences,
      compared: recorded?.length ?? 0,
      rows: restored.reduce((n, t) => n + t.rows, 0),
    };
  } finally {
    await client.close();
  }
}

/** pg_restore of the dump into a new scratch database, then every table's rows counted there. */
async function verifyRelational(
  ctx: BackupContext,
  manifest: BackupManifest,
  recorded: BackupTableRecord[] | undefined,
  scratch: string,
): Promise<PartOutcome> {
  const part = 'relational';
  const url = withDatabase(ctx.config.databaseUrl!, scratch);
  await guarded(ctx, 'creating the scratch relational database', () =>
    ctx.pool.query(`CREATE DATABASE ${pgIdent(scratch)}`),
  );
  const pgc = pgConnection(url);
  try {
    await guarded(ctx, 'pg_restore into the scratch database', () =>
      runTool(ctx, 'pg_restore', pgRestoreArgs(pgc.dbname, false), pgc.env, {
        input: ctx.bucket.read(bucketKeys(ctx.destination.prefix, manifest.id).relational),
      }),
    );
  } catch (err) {
    return {
      differences: [{ part, detail: `the dump does not restore: ${(err as Error).message}` }],
      compared: recorded?.length ?? 0,
      rows: 0,
    };
  }
  const client = new pg.Client({ connectionString: url });
  const restored = await guarded(ctx, 'counting the restored relational tables', async () => {
    await client.connect();
    try {
      return await countRelational(client);
    } finally {
      await client.end();
    }
  });
  return {
    differences: recorded ? compareTables(part, recorded, restored, 'restored') : [],
    compared: recorded?.length ?? 0,
    rows: restored.reduce((n, t) => n + t.rows, 0),
  };
}
