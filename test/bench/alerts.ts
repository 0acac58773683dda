/**
 * Alert figure of `npm run bench`: the wall time of one evaluation tick of the worker's alert job
 * over BENCH_ALERT_RULES rules (default 100; every rule due), against the same Metrics v2 queries
 * (compiled by the same compiler) sent straight to the store with the same concurrency. The tick
 * adds the claim in PostgreSQL, the state machine and the state writes; the ratio tick / store
 * reads the same on a fast or a slow machine. The rules mix observation measures (count, latency
 * avg and p95, tokens, cost), score averages, windows of 5 minutes to a day and name filters, over
 * BENCH_ALERT_EVENTS events (default 200 000) spread over the last day. Growth: the same at four
 * times the rules.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { compileEvaluation, createRuleRequest, definitionOf } from '../../server/features/alerts/api.ts';
import { AlertJob, CONCURRENT_QUERIES } from '../../server/features/alerts/job.ts';
import { createRule } from '../../server/features/alerts/store.ts';
import { createProject } from '../../server/features/projects/keys.ts';
import { select } from '../../server/features/reads/select.ts';
import { loadConfig } from '../../server/kernel/config/env.ts';
import { createAnalyticsClient } from '../../server/platform/datastores/clickhouse.ts';
import { createPool } from '../../server/platform/datastores/postgres.ts';
import { SINGLE_NODE } from '../../server/platform/migrations/analytics/dialect.ts';
import { AnalyticsMigrator } from '../../server/platform/migrations/analytics/runner.ts';
import { migrationsFor } from '../../server/platform/migrations/analytics/versions.ts';
import { RelationalMigrator } from '../../server/platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../../server/platform/migrations/relational/versions.ts';
import { startPostgres } from '../fixtures/postgres.ts';
import { line, quantile, ratio } from './report.ts';

const RULES = Number(process.env['BENCH_ALERT_RULES'] ?? 100);
const EVENTS = Number(process.env['BENCH_ALERT_EVENTS'] ?? 200_000);
const RUNS = 5;
const METRICS = [
  { view: 'observations', measure: 'count', aggregation: 'count' },
  { view: 'observations', measure: 'latency', aggregation: 'avg' },
  { view: 'observations', measure: 'latency', aggregation: 'p95' },
  { view: 'observations', measure: 'totalTokens', aggregation: 'sum' },
  { view: 'observations', measure: 'totalCost', aggregation: 'sum' },
  { view: 'scores-numeric', measure: 'value', aggregation: 'avg' },
] as const;
const WINDOWS = ['5m', '1h', '1d'];

/** Median wall ms of `a` and of `b`, run alternately RUNS times after one warm-up run each. */
async function medians(a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<[number, number]> {
  await a();
  await b();
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < RUNS; i++) {
    for (const [k, fn] of [a, b].entries()) {
      const t0 = performance.now();
      await fn();
      times[k]!.push(performance.now() - t0);
    }
  }
  return [quantile(times[0], 0.5), quantile(times[1], 0.5)];
}

export async function benchAlerts(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'obs-bench-alerts-'));
  const ch = createAnalyticsClient({ url: `chdb://${dir}` });
  const pgf = await startPostgres();
  const pool = createPool(pgf.url, 8);
  try {
    await new RelationalMigrator(pool, relationalMigrationsFor('4')).up();
    await new AnalyticsMigrator(ch, SINGLE_NODE, migrationsFor('4')).up();
    const config = loadConfig({ SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only' });
    const job = new AlertJob({
      pool,
      analytics: ch,
      llm: config.llm,
      log: pino({ level: 'silent' }),
      tickMs: 1000,
      retryBaseMs: 1000,
    });

    /** A project of `rules` rules over EVENTS events of its own; the tick and baseline medians. */
    const measure = async (rules: number) => {
      const { projectId } = await createProject(pool, `bench-alerts-${rules}`);
      await ch.command({
        query: `INSERT INTO events_full (project_id, trace_id, span_id, parent_span_id, start_time, end_time, name, type,
          environment, level, usage_details, cost_details, event_ts, is_deleted)
        SELECT {p:String}, concat('tr', toString(intDiv(number, 4))), concat('s', toString(number)), '',
          now64(6) - toIntervalMillisecond(number * intDiv(86400000, ${EVENTS})),
          now64(6) - toIntervalMillisecond(number * intDiv(86400000, ${EVENTS})) + toIntervalMillisecond(number % 5000),
          concat('op-', toString(number % 20)), 'GENERATION', 'default', 'DEFAULT',
          map('input', 10, 'output', 20, 'total', 30), map('total', toDecimal128(0.001, 12)), now64(6), 0
        FROM numbers(${EVENTS})`,
        query_params: { p: projectId },
        clickhouse_settings: { max_execution_time: 0 },
      });
      const definitions = Array.from({ length: rules }, (_, i) => {
        const metric = METRICS[i % METRICS.length]!;
        return definitionOf(
          createRuleRequest.parse({
            name: `rule-${i}`,
            metric: {
              ...metric,
              filters:
                metric.view === 'observations' && i % 2 === 0
                  ? [{ type: 'string', column: 'name', operator: '=', value: `op-${i % 20}` }]
                  : [],
            },
            operator: '>',
            alertThreshold: 1000,
            window: WINDOWS[i % WINDOWS.length],
            frequency: '1m',
          }),
        );
      });
      for (const d of definitions) await createRule(pool, projectId, d);
      const tick = async () => {
        await pool.query('UPDATE alert_rules SET next_evaluation_at = now() WHERE project_id = $1', [
          projectId,
        ]);
        const report = await job.tick();
        if (report.evaluated !== rules || report.failed !== 0)
          throw new Error(`tick evaluated ${report.evaluated} of ${rules} rules, ${report.failed} failed`);
      };
      const store = async () => {
        const queries = definitions.map((d) => compileEvaluation(d, projectId, Date.now()));
        let next = 0;
        await Promise.all(
          Array.from({ length: CONCURRENT_QUERIES }, async () => {
            while (next < queries.length) await select({ analytics: ch }, queries[next++]!);
          }),
        );
      };
      // Alternating, so both see the same caches and background merges.
      const [tickMs, storeMs] = await medians(tick, store);
      // The other project's rules are evaluated too; keep each measurement to its own rules.
      await pool.query('UPDATE alert_rules SET paused = true WHERE project_id = $1', [projectId]);
      return { tickMs, storeMs };
    };

    const one = await measure(RULES);
    line(`alerts: one tick, ${RULES} rules (median of ${RUNS})`, `${one.tickMs.toFixed(1)} ms`);
    line(`alerts: the same ${RULES} queries straight to the store`, `${one.storeMs.toFixed(1)} ms`);
    line('alerts: ratio tick / store', ratio(one.tickMs, one.storeMs));
    const four = await measure(RULES * 4);
    line(`alerts: one tick, ${RULES * 4} rules`, `${four.tickMs.toFixed(1)} ms`);
    line(`alerts: ratio tick / store at ${RULES * 4} rules`, ratio(four.tickMs, four.storeMs));
    line(`alerts: growth of the tick ${RULES} -> ${RULES * 4} rules`, ratio(four.tickMs, one.tickMs));
  } finally {
    await ch.close();
    await pool.end();
    await pgf.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
