/**
 * Backfill memory figure of `npm run bench`: the historic backfill (steps 2 and 3: scratch copy,
 * then events with the trace join) over 1x, 2x and 4x the data. The backfill and the plain copy each
 * start on a freshly started analytics server process over the generated data, once its merges are
 * done, so the engine's memory is that process's peak resident set (VmHWM, reset through
 * /proc/<pid>/clear_refs before each measured part; the embedded engine keeps no query_log) and
 * neither pays for what the data generation or the other left in memory.
 * The chunk size is fixed at the 1x observation count, so 4x runs four chunks per step: the figure
 * shows whether a chunk bounds the sort and join memory, not only the rows per statement.
 * Each size is also measured as a plain INSERT ... SELECT of the same rows (rows/s and peak), once
 * more after the backfill without the insert-time merge the backfill skips (history.ts: rows/s
 * only), and both by the server's CPU time (rows per CPU second), which a loaded machine disturbs
 * less than wall time.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { ClickHouseSettings } from '@clickhouse/client';
import { BackfillManager } from '../../server/features/backfill/manager.ts';
import { SCRATCH_TABLE } from '../../server/features/backfill/sql.ts';
import { createPool } from '../../server/platform/datastores/postgres.ts';
import { SINGLE_NODE } from '../../server/platform/migrations/analytics/dialect.ts';
import { AnalyticsMigrator } from '../../server/platform/migrations/analytics/runner.ts';
import { migrationsFor } from '../../server/platform/migrations/analytics/versions.ts';
import { RelationalMigrator } from '../../server/platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../../server/platform/migrations/relational/versions.ts';
import { startPostgres } from '../fixtures/postgres.ts';
import { startAnalyticsServer } from '../fixtures/service.ts';
import {
  BACKFILL_SETTINGS,
  historyStatements,
  OBS_PER_TRACE,
  PLAIN_COPY,
  UNMERGED_INSERT,
} from './history.ts';
import { cpuSeconds, settle } from './proc.ts';
import { line, ratio } from './report.ts';

const BASE_TRACES = Number(process.env['BENCH_BACKFILL_MEMORY_TRACES'] ?? 10_000);

/** Peak resident set of a process since its last reset, in MB. */
const peakMb = (pid: number) =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
/** Resets the peak to the current resident set and returns that (MB): the process at rest. */
const resetPeak = (pid: number) => {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
};

interface Size {
  scale: number;
  rows: number;
  backfillRate: number;
  backfillPeak: number;
  backfillRest: number;
  plainRate: number;
  plainPeak: number;
  unmergedRate: number;
  backfillCpuRate: number;
  plainCpuRate: number;
}

async function measure(scale: number): Promise<Size> {
  const traces = BASE_TRACES * scale;
  const rows = traces * OBS_PER_TRACE;
  const pgf = await startPostgres();
  let ch = await startAnalyticsServer();
  const pool = createPool(pgf.url, 2);
  // A new server process on the same data, its merges done: the measured part starts from its rest.
  const fresh = async () => {
    await settle(ch.client);
    await ch.kill();
    ch = await startAnalyticsServer({ dir: ch.dir });
    await settle(ch.client);
  };
  const run = (query: string, settings: ClickHouseSettings = {}) =>
    ch.client.command({ query, clickhouse_settings: { max_execution_time: 0, ...settings } });
  const truncate = async () => {
    await run('TRUNCATE TABLE events_full');
    await run('TRUNCATE TABLE events_core');
  };
  try {
    await new RelationalMigrator(pool, relationalMigrationsFor('4')).up();
    await new AnalyticsMigrator(ch.client, SINGLE_NODE, migrationsFor('4')).up();
    for (const statement of historyStatements(traces)) await run(statement);
    await pool.query(`UPDATE background_migrations SET args = args || $1::jsonb`, [
      JSON.stringify({ chunkRows: BASE_TRACES * OBS_PER_TRACE }),
    ]);

    await fresh();
    resetPeak(ch.pid);
    let t = performance.now();
    let cpu = cpuSeconds(ch.pid);
    await run(PLAIN_COPY);
    const plainRate = rows / ((performance.now() - t) / 1000);
    const plainCpuRate = rows / (cpuSeconds(ch.pid) - cpu);
    const plainPeak = peakMb(ch.pid);
    await truncate();
    await fresh();

    const manager = new BackfillManager({
      pool,
      analytics: ch.client,
      dialect: SINGLE_NODE,
      settings: BACKFILL_SETTINGS,
      workerId: 'bench',
    });
    await manager.runStep(1);
    const backfillRest = resetPeak(ch.pid);
    t = performance.now();
    cpu = cpuSeconds(ch.pid);
    await manager.runStep(2);
    await manager.runStep(3);
    const backfillRate = rows / ((performance.now() - t) / 1000);
    const backfillCpuRate = rows / (cpuSeconds(ch.pid) - cpu);
    const backfillPeak = peakMb(ch.pid);
    // After the backfill, so its memory is no part of the backfill's rest or peak; the tables the
    // backfill wrote go first, and with them their background merges.
    await truncate();
    await run(`DROP TABLE ${SCRATCH_TABLE}`);
    t = performance.now();
    await run(PLAIN_COPY, UNMERGED_INSERT);
    const unmergedRate = rows / ((performance.now() - t) / 1000);
    return {
      scale,
      rows,
      backfillRate,
      backfillPeak,
      backfillRest,
      plainRate,
      plainPeak,
      unmergedRate,
      backfillCpuRate,
      plainCpuRate,
    };
  } finally {
    await pool.end();
    await Promise.all([ch.stop(), pgf.stop()]);
  }
}

export async function benchBackfillMemory(): Promise<void> {
  process.stdout.write(
    `\nBackfill memory: steps 2+3 at 1x, 2x, 4x of ${BASE_TRACES * OBS_PER_TRACE} observations, chunks of ${BASE_TRACES * OBS_PER_TRACE} rows, analytics server peak RSS\n\n`,
  );
  const sizes: Size[] = [];
  for (const scale of [1, 2, 4]) {
    const s = await measure(scale);
    sizes.push(s);
    line(
      `${s.scale}x: backfill (${s.rows} rows)`,
      `${Math.round(s.backfillRate)} rows/s, peak ${s.backfillPeak.toFixed(0)} MB (at rest before: ${s.backfillRest.toFixed(0)} MB)`,
    );
    line(
      `${s.scale}x: plain INSERT ... SELECT`,
      `${Math.round(s.plainRate)} rows/s, peak ${s.plainPeak.toFixed(0)} MB`,
    );
    line('  ratio backfill / plain rows/s', ratio(s.backfillRate, s.plainRate));
    line(
      `${s.scale}x: plain, without the insert-time merge (as the backfill)`,
      `${Math.round(s.unmergedRate)} rows/s (ratio backfill / it ${ratio(s.backfillRate, s.unmergedRate)})`,
    );
    line(
      '  rows per CPU second of the server: backfill, plain',
      `${Math.round(s.backfillCpuRate)}, ${Math.round(s.plainCpuRate)} (ratio ${ratio(s.backfillCpuRate, s.plainCpuRate)})`,
    );
  }
  const [one, two, four] = sizes as [Size, Size, Size];
  line('backfill peak memory 4x / 1x', ratio(four.backfillPeak, one.backfillPeak));
  // One chunk at 1x writes one part per table; from 2x on, merges of the chunks' parts run beside
  // the backfill in the same process, so 4x / 2x compares runs that both carry them.
  line('backfill peak memory 4x / 2x (both with merges beside)', ratio(four.backfillPeak, two.backfillPeak));
  line(
    'backfill memory above rest 4x / 1x',
    ratio(four.backfillPeak - four.backfillRest, one.backfillPeak - one.backfillRest),
  );
  line('plain INSERT ... SELECT peak memory 4x / 1x', ratio(four.plainPeak, one.plainPeak));
  line('backfill rows/s 4x / 1x', ratio(four.backfillRate, one.backfillRate));
}
