/**
 * Backup figure of `npm run bench`: `observatory backup` and `observatory restore` (the real CLI,
 * as the Jobs run it, against the analytics server and the S3 server) per part, as rates against
 * baselines measured in the same run on the same data: a plain `INSERT ... SELECT` of the same
 * analytics tables into copies, and `pg_dump --format=custom` to a local file. The CLI's times
 * include what a Job pays besides the copy: process start, reading every object back for its
 * checksum (backup and restore both), and the restore's drops. BENCH_BACKUP_TRACES (default 100000)
 * traces with 4 observations each; BENCH_BACKUP_ROWS (default 1000000) relational rows.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BACKUP_S3_ENV } from '../../server/contract/backup.ts';
import { createAnalyticsClient } from '../../server/platform/datastores/clickhouse.ts';
import { createPool } from '../../server/platform/datastores/postgres.ts';
import { SINGLE_NODE } from '../../server/platform/migrations/analytics/dialect.ts';
import { AnalyticsMigrator } from '../../server/platform/migrations/analytics/runner.ts';
import { migrationsFor } from '../../server/platform/migrations/analytics/versions.ts';
import { RelationalMigrator } from '../../server/platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../../server/platform/migrations/relational/versions.ts';
import { startPostgres } from '../fixtures/postgres.ts';
import { S3_REGION, startS3Server } from '../fixtures/s3.ts';
import { cli, startAnalyticsServer } from '../fixtures/service.ts';
import { historyStatements } from './history.ts';
import { line, ratio, seconds } from './report.ts';

const TRACES = Number(process.env['BENCH_BACKUP_TRACES'] ?? 100_000);
const ROWS = Number(process.env['BENCH_BACKUP_ROWS'] ?? 1_000_000);
const RUN_TIMEOUT_MS = 1_800_000;
const MiB = 1024 * 1024;

const rate = (bytes: number, s: number) => `${(bytes / MiB / s).toFixed(1)} MiB/s (${s.toFixed(2)} s)`;
const rowRate = (rows: number, s: number) => `${Math.round(rows / s)} rows/s (${s.toFixed(2)} s)`;

export async function benchBackup(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'obs-bench-backup-'));
  const [pgf, ch, s3] = await Promise.all([startPostgres(), startAnalyticsServer(), startS3Server()]);
  const analytics = createAnalyticsClient({ url: ch.url });
  const pool = createPool(pgf.url, 2);
  const run = (query: string) => analytics.command({ query, clickhouse_settings: { max_execution_time: 0 } });
  const env = {
    DATABASE_URL: pgf.url,
    CLICKHOUSE_URL: ch.url,
    [BACKUP_S3_ENV.bucket]: 'bench',
    [BACKUP_S3_ENV.endpoint]: s3.endpoint,
    [BACKUP_S3_ENV.region]: S3_REGION,
    [BACKUP_S3_ENV.forcePathStyle]: 'true',
    [BACKUP_S3_ENV.accessKeyId]: s3.accessKeyId,
    [BACKUP_S3_ENV.secretAccessKey]: s3.secretAccessKey,
  };
  const observatory = async (args: string[]) => {
    const r = await cli([...args, '--termination-log', join(dir, 'termination')], env, RUN_TIMEOUT_MS);
    if (r.code !== 0) throw new Error(`observatory ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  };
  try {
    await s3.createBucket('bench');
    await new RelationalMigrator(pool, relationalMigrationsFor('4')).up();
    await new AnalyticsMigrator(analytics, SINGLE_NODE, migrationsFor('4')).up();
    for (const statement of historyStatements(TRACES)) await run(statement);
    await pool.query(
      `CREATE TABLE bench_rows AS SELECT g AS id, md5(g::text) AS a, repeat(md5((g * 7)::text), 3) AS b, now() AS at FROM generate_series(1, ${ROWS}) g`,
    );

    const tables = await (
      await analytics.query({
        query: `SELECT name, total_rows AS n FROM system.tables WHERE database = 'default' AND engine LIKE '%MergeTree' AND total_rows > 0`,
        format: 'JSONEachRow',
      })
    ).json<{ name: string; n: string }>();
    const bytesRs = await analytics.query({
      query: `SELECT sum(bytes_on_disk) AS b FROM system.parts WHERE active AND database = 'default'`,
      format: 'JSONEachRow',
    });
    const analyticsBytes = Number((await bytesRs.json<{ b: string }>())[0]!.b);
    const rows = tables.reduce((n, t) => n + Number(t.n), 0);

    // Baseline of the analytics part: the same tables copied by the store itself.
    await run('CREATE DATABASE bench_copy');
    for (const t of tables) await run(`CREATE TABLE bench_copy.\`${t.name}\` AS default.\`${t.name}\``);
    const copy = await seconds(async () => {
      for (const t of tables)
        await run(`INSERT INTO bench_copy.\`${t.name}\` SELECT * FROM default.\`${t.name}\``);
    });
    await run('DROP DATABASE bench_copy SYNC');

    // Each part beside its baseline, one after the other: the store's merges after the copy would
    // otherwise slow whatever runs next on a small machine.
    const backupAnalytics = await seconds(() =>
      observatory(['backup', '--id', 'a', '--include', 'analytics']),
    );
    const restoreAnalytics = await seconds(() =>
      observatory(['restore', '--id', 'a', '--include', 'analytics']),
    );
    const dumpFile = join(dir, 'relational.dump');
    const pgDump = () =>
      promisify(execFile)('pg_dump', ['--format=custom', `--file=${dumpFile}`, `--dbname=${pgf.url}`]);
    await pgDump(); // warm: the first read of the new table pays for loading it from disk
    const dump = await seconds(pgDump);
    const dumpBytes = statSync(dumpFile).size;
    const backupRelational = await seconds(() =>
      observatory(['backup', '--id', 'r', '--include', 'relational']),
    );
    const restoreRelational = await seconds(() =>
      observatory(['restore', '--id', 'r', '--include', 'relational']),
    );

    process.stdout.write(
      `\nBackup and restore (${TRACES} traces: ${rows} analytics rows, ${(analyticsBytes / MiB).toFixed(1)} MiB on disk in ${tables.length} tables; ${ROWS} relational rows, a ${(dumpBytes / MiB).toFixed(1)} MiB dump)\n\n`,
    );
    line('plain INSERT ... SELECT of the analytics tables (baseline)', rowRate(rows, copy));
    line('observatory backup --include analytics (BACKUP TO S3)', rowRate(rows, backupAnalytics));
    line('  ratio backup / INSERT ... SELECT', ratio(copy, backupAnalytics));
    line('observatory restore --include analytics (RESTORE FROM S3)', rowRate(rows, restoreAnalytics));
    line('  ratio restore / INSERT ... SELECT', ratio(copy, restoreAnalytics));
    line('pg_dump --format=custom to a local file (baseline)', rate(dumpBytes, dump));
    line('observatory backup --include relational (pg_dump to S3)', rate(dumpBytes, backupRelational));
    line('  ratio backup / pg_dump to a file', ratio(dump, backupRelational));
    line('observatory restore --include relational (pg_restore)', rate(dumpBytes, restoreRelational));
    line('  ratio restore / pg_dump to a file', ratio(dump, restoreRelational));
  } finally {
    await analytics.close();
    await pool.end();
    await Promise.all([ch.stop(), pgf.stop(), s3.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}
