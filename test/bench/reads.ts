/**
 * Read figure of `npm run bench`: p50 and p99 of two Observations API v2 requests over
 * BENCH_READ_EVENTS (default 1 000 000) events in `events_full` (and `events_core` via the
 * materialized view), spread over four monthly partitions:
 *   - a trace fetched by `traceId` (no time range),
 *   - a filtered list (type, environment, user, time range; first page of 50).
 * Each is measured through the web (HTTP, auth, validation, query, mapping, JSON) and as the same
 * generated SQL run directly through the client; the figure is the ratio web / store, so it reads
 * the same on a fast or a slow machine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { loadConfig } from '../../server/config/env.ts';
import { createAnalyticsClient } from '../../server/datastores/clickhouse.ts';
import { createPool } from '../../server/datastores/postgres.ts';
import { pgEntityLocks } from '../../server/ingestion/entity-locks.ts';
import { clickhouseStore } from '../../server/ingestion/store.ts';
import { SINGLE_NODE } from '../../server/migrations/analytics/dialect.ts';
import { AnalyticsMigrator } from '../../server/migrations/analytics/runner.ts';
import { migrationsFor } from '../../server/migrations/analytics/versions.ts';
import { RelationalMigrator } from '../../server/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../../server/migrations/relational/versions.ts';
import { createProject, KeyVerifier } from '../../server/projects/keys.ts';
import { buildObservationList, parseFieldGroups, simpleFilters } from '../../server/reads/observations.ts';
import { buildWebApp } from '../../server/web/app.ts';
import { startPostgres } from '../fixtures/postgres.ts';

const EVENTS = Number(process.env['BENCH_READ_EVENTS'] ?? 1_000_000);
const ITERATIONS = Number(process.env['BENCH_READ_ITERATIONS'] ?? 200);
const SPANS_PER_TRACE = 5;
const START = '2026-06-01 00:00:00';
/** Seconds between events: spreads the data over about four months. */
const STEP = Math.max(1, Math.floor((120 * 86_400) / EVENTS));

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

async function generate(ch: ClickHouseClient, projectId: string): Promise<void> {
  // One INSERT ... SELECT from numbers(): the events_core view fills the table the API reads.
  await ch.command({
    query: `INSERT INTO events_full (project_id, trace_id, span_id, parent_span_id, start_time, end_time, name, type, environment,
      user_id, session_id, trace_name, level, input, output, metadata_names, metadata_values, usage_details, cost_details, event_ts, is_deleted)
    SELECT {p:String}, concat('tr', toString(intDiv(number, ${SPANS_PER_TRACE}))), concat('s', toString(number)),
      if(number % ${SPANS_PER_TRACE} = 0, '', concat('s', toString(number - number % ${SPANS_PER_TRACE}))),
      toDateTime64('${START}', 6) + number * ${STEP}, toDateTime64('${START}', 6) + number * ${STEP} + 1,
      concat('op-', toString(number % 20)), if(number % 2 = 0, 'GENERATION', 'SPAN'), if(number % 3 = 0, 'prod', 'staging'),
      concat('u', toString(intDiv(number, ${SPANS_PER_TRACE}) % 1000)), concat('sess', toString(number % 5000)), 'bench',
      'DEFAULT', repeat('input text ', 30), repeat('output text ', 30), ['k'], [toString(number)],
      map('input', 10, 'output', 20, 'total', 30), map('total', toDecimal128(0.001, 12)), now64(6), 0
    FROM numbers(${EVENTS})`,
    query_params: { p: projectId },
    clickhouse_settings: { max_execution_time: 0 },
  });
}

export async function benchReads(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'obs-bench-reads-'));
  const pgf = await startPostgres();
  const url = `chdb://${dir}`;
  const ch = createAnalyticsClient({ url });
  const pool = createPool(pgf.url, 4);
  const config = loadConfig({
    SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only',
    DATABASE_URL: pgf.url,
    CLICKHOUSE_URL: url,
  });
  const app = buildWebApp({
    config,
    pool,
    analytics: ch,
    store: clickhouseStore(ch, config.clickhouse),
    locks: pgEntityLocks(pool),
    keys: new KeyVerifier(pool),
    shuttingDown: () => false,
  });
  try {
    await new RelationalMigrator(pool, relationalMigrationsFor('4')).up();
    await new AnalyticsMigrator(ch, SINGLE_NODE, migrationsFor('4')).up();
    const project = await createProject(pool, 'bench-reads');
    const genStart = performance.now();
    await generate(ch, project.projectId);
    const genSeconds = (performance.now() - genStart) / 1000;
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const auth = `Basic ${Buffer.from(`${project.publicKey}:${project.secretKey}`).toString('base64')}`;
    const traces = Math.floor(EVENTS / SPANS_PER_TRACE);
    const endIso = new Date(Date.parse(`${START.replace(' ', 'T')}Z`) + EVENTS * STEP * 1000).toISOString();

    /** The same request as query parameters (for the web) and as simple filters (for the builder). */
    const cases = {
      'trace fetch by traceId': (i: number) => ({ traceId: `tr${(i * 7919) % traces}` }),
      'filtered list (type, env, user, range), page of 50': (i: number) => ({
        type: 'GENERATION',
        environment: 'prod',
        userId: `u${(i * 31) % 1000}`,
        fromStartTime: '2026-07-01T00:00:00.000Z',
        toStartTime: endIso,
      }),
    };
    const line = (label: string, value: string) => process.stdout.write(`${label.padEnd(58)} ${value}\n`);
    process.stdout.write(
      `\nObservations API v2 over ${EVENTS} events (${traces} traces; generated in ${genSeconds.toFixed(1)} s)\n\n`,
    );
    for (const [label, make] of Object.entries(cases)) {
      const web: number[] = [];
      const store: number[] = [];
      for (let i = -20; i < ITERATIONS; i++) {
        const params = make(i + 1000);
        const qs = new URLSearchParams({ ...params, limit: '50' }).toString();
        let t = performance.now();
        const res = await fetch(`${base}/api/public/v2/observations?${qs}`, {
          headers: { authorization: auth },
        });
        const body = (await res.json()) as { data: unknown[] };
        const webMs = performance.now() - t;
        if (res.status !== 200 || body.data.length === 0)
          throw new Error(`${label}: ${res.status} with ${body.data.length} rows`);
        const q = buildObservationList({
          projectId: project.projectId,
          groups: parseFieldGroups(undefined),
          filters: simpleFilters({
            ...params,
            environment: 'environment' in params ? [params.environment] : undefined,
          }),
          limit: 50,
          textIndex: true,
        });
        t = performance.now();
        const rs = await ch.query({ query: q.sql, query_params: q.params, format: 'JSONEachRow' });
        await rs.json();
        const storeMs = performance.now() - t;
        if (i >= 0) {
          web.push(webMs);
          store.push(storeMs);
        }
      }
      const [w50, w99, s50, s99] = [
        quantile(web, 0.5),
        quantile(web, 0.99),
        quantile(store, 0.5),
        quantile(store, 0.99),
      ];
      line(label, `web p50 ${w50.toFixed(1)} ms, p99 ${w99.toFixed(1)} ms`);
      line('  same SQL through the client', `p50 ${s50.toFixed(1)} ms, p99 ${s99.toFixed(1)} ms`);
      line('  ratio web / store', `p50 ${(w50 / s50).toFixed(2)}, p99 ${(w99 / s99).toFixed(2)}`);
    }
  } finally {
    await app.close();
    await ch.close();
    await pool.end();
    await pgf.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
