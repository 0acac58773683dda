/**
 * `npm run bench`: speed figures, each a ratio against a baseline measured in the same run on the
 * same data, so the numbers mean the same on a fast or a slow machine.
 *   1. Historic backfill (steps 2 and 3: scratch copy, then events with the trace join) rows/s,
 *      against a plain INSERT ... SELECT of the same rows into events_full (the store's own limit),
 *      also without the insert-time merge that the backfill skips (history.ts).
 *   2. Dual-write propagation of one staging partition: processing time and the worst-case lag it
 *      implies past the 3-minute staging window (grace + processing); propagation-lag.ts measures
 *      the whole lag end to end.
 *   3. Ingestion (ingestion.ts, and with it ingestion-log.ts); through the ingestion log and its drain against the direct web and
 *      the store's bulk ceiling (ingestion-log.ts); the operator (operator.ts), reads (reads.ts), the UI's observations
 *      page against API v2 (ui.ts) and exports
 *      (exports.ts), each with its own baseline.
 * Sizes: BENCH_TRACES (default 20000) traces with 4 observations each.
 *   4. Cost at ingestion (cost.ts): pricing and tokenizing rows against building them; end to end
 *      (ingestion-cost.ts): ingestion throughput with cost computed against not, interleaved.
 *   4b. Evaluation rules (ingestion-rules.ts): ingestion throughput with active observation rules
 *      (the worker scanning and enqueueing) against none, interleaved.
 *   4c. Masking (masking.ts): ingestion with every built-in detector against none, interleaved.
 *   5. The home dashboard's load against the sum of its Metrics v2 queries (dashboards.ts).
 *   6. Alerts (alerts.ts): one evaluation tick of 100 rules against their queries sent straight to the store.
 *   7. Backup and restore of both databases (backup.ts) against INSERT ... SELECT and pg_dump to a file.
 *   8. Queued trace deletion of 60 000 traces (deletion.ts) against the store's own DELETE of the same rows.
 * Arguments name the figures to run (`backfill`, `backfill-memory`, `ingestion`, `ingestion-log`, `cost`,
 * `ingestion-cost`, `ingestion-rules`, `masking`, `reads`,
 * `exports`, `ui`, `dashboards`, `operator`, `propagation-lag`, `alerts`, `backup`, `deletion`); none runs them all.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClickHouseSettings } from '@clickhouse/client';
import { ELIGIBILITY_MARGIN_MS } from '../../server/app/worker/propagation/schedule.ts';
import { BackfillManager } from '../../server/features/backfill/manager.ts';
import { createAnalyticsClient } from '../../server/platform/datastores/clickhouse.ts';
import { createPool } from '../../server/platform/datastores/postgres.ts';
import { SINGLE_NODE } from '../../server/platform/migrations/analytics/dialect.ts';
import { AnalyticsMigrator } from '../../server/platform/migrations/analytics/runner.ts';
import { migrationsFor } from '../../server/platform/migrations/analytics/versions.ts';
import { RelationalMigrator } from '../../server/platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../../server/platform/migrations/relational/versions.ts';
import { startPostgres } from '../fixtures/postgres.ts';
import { benchAlerts } from './alerts.ts';
import { benchBackfillMemory } from './backfill-memory.ts';
import { benchBackup } from './backup.ts';
import { benchCost } from './cost.ts';
import { benchDashboards } from './dashboards.ts';
import { benchDeletion } from './deletion.ts';
import { benchExports } from './exports.ts';
import {
  BACKFILL_SETTINGS,
  historyStatements,
  OBS_PER_TRACE,
  PLAIN_COPY,
  UNMERGED_INSERT,
} from './history.ts';
import { benchIngestLimits } from './ingest-limits.ts';
import { benchIngestion } from './ingestion.ts';
import { benchIngestionCost } from './ingestion-cost.ts';
import { benchIngestionLog } from './ingestion-log.ts';
import { benchIngestionRules } from './ingestion-rules.ts';
import { benchMasking } from './masking.ts';
import { benchOperator } from './operator.ts';
import { benchPropagationJob } from './propagation-job.ts';
import { benchPropagationLag } from './propagation-lag.ts';
import { benchReads } from './reads.ts';
import { line, ratio, seconds } from './report.ts';
import { benchUi } from './ui.ts';

const TRACES = Number(process.env['BENCH_TRACES'] ?? 20_000);
const FIGURES = [
  'backfill',
  'backfill-memory',
  'ingestion',
  'ingestion-log',
  'cost',
  'ingestion-cost',
  'ingestion-rules',
  'masking',
  'ingest-limits',
  'reads',
  'exports',
  'ui',
  'dashboards',
  'operator',
  'propagation-lag',
  'alerts',
  'backup',
  'deletion',
];
const chosen = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const unknown = chosen.filter((a) => !FIGURES.includes(a));
if (unknown.length > 0) {
  process.stderr.write(`unknown bench figure: ${unknown.join(', ')} (figures: ${FIGURES.join(', ')})\n`);
  process.exit(2);
}
const selected = (figure: string) => chosen.length === 0 || chosen.includes(figure);

async function benchBackfillAndPropagation(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'obs-bench-'));
  const ch = createAnalyticsClient({ url: `chdb://${dir}` });
  const pgf = await startPostgres();
  const pool = createPool(pgf.url, 4);
  const run = (query: string, settings: ClickHouseSettings = {}) =>
    ch.command({ query, clickhouse_settings: { max_execution_time: 0, ...settings } });
  const count = async (table: string) => {
    const rs = await ch.query({ query: `SELECT count() AS n FROM ${table}`, format: 'JSONEachRow' });
    return Number((await rs.json<{ n: string }>())[0]!.n);
  };

  try {
    await new RelationalMigrator(pool, relationalMigrationsFor('4')).up();
    await new AnalyticsMigrator(ch, SINGLE_NODE, migrationsFor('4')).up();
    const obsRows = TRACES * OBS_PER_TRACE;
    for (const statement of historyStatements(TRACES)) await run(statement);
    // Baseline: the same observation rows copied with a plain INSERT ... SELECT (no FINAL, no join).
    const truncate = async () => {
      await run('TRUNCATE TABLE events_full');
      await run('TRUNCATE TABLE events_core');
    };
    const baseline = await seconds(() => run(PLAIN_COPY));
    await truncate();
    const unmerged = await seconds(() => run(PLAIN_COPY, UNMERGED_INSERT));
    await truncate();

    const manager = new BackfillManager({
      pool,
      analytics: ch,
      dialect: SINGLE_NODE,
      settings: BACKFILL_SETTINGS,
      workerId: 'bench',
    });
    // Steps 1-3 run in order; step 1 (roots) is timed apart so the observation figure compares like with like.
    await manager.runStep(1);
    const backfill = await seconds(async () => {
      await manager.runStep(2);
      await manager.runStep(3);
    });
    const written = (await count('events_full')) - TRACES;
    if (written !== obsRows)
      throw new Error(`backfill wrote ${written} observation events, expected ${obsRows}`);
    const backfillRate = obsRows / backfill;
    const baselineRate = obsRows / baseline;
    const unmergedRate = obsRows / unmerged;

    // Propagation: one completed staging partition of the same observations.
    await run(
      `INSERT INTO observations_batch_staging SELECT *, toDateTime64('2026-11-01 00:01:00', 3) AS s3_first_seen_timestamp, 'pk', 'bench', '0' FROM observations`,
    );
    const job = benchPropagationJob(ch, pool);
    const propagation = await seconds(() => job.runOnce());
    // Runs are aligned to the moment a partition becomes eligible (schedule.ts): no tick wait.
    const worstLag = 30 + ELIGIBILITY_MARGIN_MS / 1000 + propagation;

    process.stdout.write(
      `\nObservatory benchmarks (${TRACES} traces, ${obsRows} observations, embedded ClickHouse ${await version()})\n\n`,
    );
    line('plain INSERT ... SELECT of the observations (baseline)', `${Math.round(baselineRate)} rows/s`);
    line('  the same without the insert-time merge (as the backfill)', `${Math.round(unmergedRate)} rows/s`);
    line('historic backfill steps 2+3 (scratch copy + join)', `${Math.round(backfillRate)} rows/s`);
    line('  ratio backfill / baseline', (backfillRate / baselineRate).toFixed(3));
    line('  ratio backfill / baseline without the insert-time merge', ratio(backfillRate, unmergedRate));
    line(`propagation of one partition of ${obsRows} rows`, `${propagation.toFixed(2)} s`);
    line('  worst-case lag past the window (grace 30 s + 1 s + processing)', `${worstLag.toFixed(1)} s`);
    line('  ratio worst-case lag / 180 s staging window', (worstLag / 180).toFixed(3));
  } finally {
    await ch.close();
    await pool.end();
    await pgf.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  async function version(): Promise<string> {
    const rs = await ch.query({ query: 'SELECT version() AS v', format: 'JSONEachRow' });
    return (await rs.json<{ v: string }>())[0]!.v;
  }
}

if (selected('backfill')) await benchBackfillAndPropagation();
if (selected('backfill-memory')) await benchBackfillMemory();
if (selected('ingestion')) await benchIngestion();
// The web's figure with the ingestion log is part of the ingestion figure.
if (selected('ingestion-log') || selected('ingestion')) await benchIngestionLog();
if (selected('cost')) await benchCost();
if (selected('ingestion-cost')) await benchIngestionCost();
if (selected('ingestion-rules')) await benchIngestionRules();
if (selected('masking')) await benchMasking();
if (selected('ingest-limits')) await benchIngestLimits();
if (selected('reads')) await benchReads();
if (selected('ui')) await benchUi();
if (selected('dashboards')) await benchDashboards();
if (selected('exports')) await benchExports();
if (selected('operator')) await benchOperator();
if (selected('propagation-lag')) await benchPropagationLag();
if (selected('alerts')) await benchAlerts();
if (selected('backup')) await benchBackup();
if (selected('deletion')) await benchDeletion();
