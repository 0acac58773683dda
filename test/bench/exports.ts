/**
 * Export figure of `npm run bench`: rows/s of the export job writing one hourly window of the legacy
 * source (BENCH_EXPORT_TRACES traces, default 10 000, with 4 observations each, as JSONL and as
 * Parquet into the real S3 server), against a plain `SELECT ... FORMAT JSONEachRow` of the same
 * observation rows read through the same client. The ratio reads the same on a fast or a slow
 * machine. Growth: the same at four times the rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runExportPass } from '../../server/features/exports/job.ts';
import { createExport } from '../../server/features/exports/store.ts';
import { createProject } from '../../server/features/projects/keys.ts';
import { loadConfig } from '../../server/kernel/config/env.ts';
import { s3BlobStore } from '../../server/platform/blobs/s3.ts';
import { createAnalyticsClient } from '../../server/platform/datastores/clickhouse.ts';
import { createPool } from '../../server/platform/datastores/postgres.ts';
import { SINGLE_NODE } from '../../server/platform/migrations/analytics/dialect.ts';
import { AnalyticsMigrator } from '../../server/platform/migrations/analytics/runner.ts';
import { migrationsFor } from '../../server/platform/migrations/analytics/versions.ts';
import { RelationalMigrator } from '../../server/platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../../server/platform/migrations/relational/versions.ts';
import { startPostgres } from '../fixtures/postgres.ts';
import { startS3Server } from '../fixtures/s3.ts';

const TRACES = Number(process.env['BENCH_EXPORT_TRACES'] ?? 10_000);
const OBS_PER_TRACE = 4;
const WINDOW = Date.parse('2026-10-01T00:00:00Z');

export async function benchExports(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'obs-bench-export-'));
  const ch = createAnalyticsClient({ url: `chdb://${dir}` });
  const [pgf, s3] = await Promise.all([startPostgres(), startS3Server()]);
  const pool = createPool(pgf.url, 4);
  const config = loadConfig({ ...s3.env('export', 'bench'), SERVICE_MIGRATION_V4_WRITE_MODE: 'dual' });
  const blobs = s3BlobStore(config.exportStorage!);
  try {
    await s3.createBucket('bench');
    await new RelationalMigrator(pool, relationalMigrationsFor('4')).up();
    await new AnalyticsMigrator(ch, SINGLE_NODE, migrationsFor('4')).up();
    const run = (query: string) => ch.command({ query, clickhouse_settings: { max_execution_time: 0 } });
    /** Export and plain-select rows/s over `traces` traces of a project of their own. */
    const measure = async (traces: number) => {
      const { projectId } = await createProject(pool, `bench-${traces}`);
      const spread = `toDateTime64('2026-10-01 00:00:00', 3) + (number % 3600)`;
      await run(`INSERT INTO traces (id, timestamp, name, project_id, public, bookmarked, tags, input, output, event_ts, is_deleted)
      SELECT concat('t', toString(number)), ${spread}, 'trace', '${projectId}', false, false, [], repeat('x', 200), repeat('y', 200), now64(3), 0
      FROM numbers(${traces})`);
      await run(`INSERT INTO observations (id, trace_id, project_id, type, start_time, name, metadata, level, input, output, event_ts, is_deleted)
      SELECT concat('o', toString(number)), concat('t', toString(intDiv(number, ${OBS_PER_TRACE}))), '${projectId}', 'SPAN',
        ${spread}, 'obs', map('m', 'v'), 'DEFAULT', repeat('i', 500), repeat('o', 500), now64(3), 0
      FROM numbers(${traces * OBS_PER_TRACE})`);
      const rows = traces * (OBS_PER_TRACE + 1);

      const select = async () => {
        const rs = await ch.query({
          query: `SELECT * FROM observations WHERE project_id = '${projectId}'`,
          format: 'JSONEachRow',
        });
        return (await rs.json()).length;
      };
      await select(); // warm: the first read after the inserts pays for loading the parts
      const t0 = performance.now();
      const selected = await select();
      const baseline = (performance.now() - t0) / 1000;

      /** Rows/s of one pass that writes the window once, in `format` (earlier exports are done already). */
      const exportRate = async (format: 'JSONL' | 'PARQUET') => {
        await createExport(pool, {
          projectId,
          source: 'LEGACY_TRACES_OBSERVATIONS',
          format,
          frequency: 'hourly',
          prefix: '',
          checkpoint: new Date(WINDOW),
        });
        const t1 = performance.now();
        const result = await runExportPass({
          pool,
          analytics: ch,
          blobs,
          storagePrefix: '',
          settings: config.mode,
          now: () => WINDOW + 3_600_000,
        });
        const exported = (performance.now() - t1) / 1000;
        if (result.rowsWritten !== rows)
          throw new Error(`${format} export wrote ${result.rowsWritten} rows, expected ${rows}`);
        return rows / exported;
      };
      const jsonl = await exportRate('JSONL');
      const parquet = await exportRate('PARQUET');
      return { selected, baselineRate: selected / baseline, jsonl, parquet };
    };
    const one = await measure(TRACES);
    // Growth from 1x to 4x of the work: four times the rows in the window.
    const four = await measure(4 * TRACES);

    const line = (label: string, value: string) => process.stdout.write(`${label.padEnd(58)} ${value}\n`);
    process.stdout.write(
      `\nExport (${TRACES} traces + ${one.selected} observations in one hourly window)\n\n`,
    );
    line('plain SELECT ... FORMAT JSONEachRow of the observations', `${Math.round(one.baselineRate)} rows/s`);
    line('export job: legacy source, JSONL, into S3 (versitygw)', `${Math.round(one.jsonl)} rows/s`);
    line('  ratio export / plain select', (one.jsonl / one.baselineRate).toFixed(3));
    line('export job: legacy source, Parquet, into S3 (versitygw)', `${Math.round(one.parquet)} rows/s`);
    line('  ratio export / plain select', (one.parquet / one.baselineRate).toFixed(3));
    line(
      '  at 4x the rows: JSONL, Parquet rows/s (ratios to select)',
      `${Math.round(four.jsonl)} (${(four.jsonl / four.baselineRate).toFixed(3)}), ${Math.round(four.parquet)} (${(four.parquet / four.baselineRate).toFixed(3)})`,
    );
    line(
      '  growth 1x -> 4x: JSONL, Parquet rows/s',
      `${(four.jsonl / one.jsonl).toFixed(3)}x, ${(four.parquet / one.parquet).toFixed(3)}x`,
    );
  } finally {
    blobs.close();
    await ch.close();
    await pool.end();
    await Promise.all([pgf.stop(), s3.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}
