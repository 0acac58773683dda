/**
 * Read figure of `npm run bench`: p50 and p99 of four public v2 reads over generated events in
 * `events_full` (and `events_core` via the materialized view), spread over four monthly partitions
 * and three projects with a skewed share (70 %, 20 %, 10 % of the traces; the reads ask the largest):
 *   - a trace fetched by `traceId` (no time range),
 *   - a filtered list (type, environment, user, time range; first page of 50),
 *   - full-text search (`matches` on input, a token one event in a thousand carries),
 *   - metrics v2: count and total tokens by name and day over the range.
 * Each is measured through the web (HTTP, auth, validation, query, mapping, JSON) and as the same
 * generated SQL run directly through the client; the figure is the ratio web / store, so it reads
 * the same on a fast or a slow machine. Sizes: BENCH_READ_SIZES (default 1000000); `--reads-10m`
 * adds 10 000 000 (generation takes several minutes on two cores).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { buildWebApp } from '../../server/app/web/app.ts';
import { traceDeletionDeps } from '../../server/features/deletion/traces.ts';
import { MaskingCatalog } from '../../server/features/masking/catalog.ts';
import { ModelCatalog } from '../../server/features/models/catalog.ts';
import { createProject, KeyVerifier } from '../../server/features/projects/keys.ts';
import type { FilterCondition } from '../../server/features/reads/filters.ts';
import { buildMetrics, parseMetricsQuery } from '../../server/features/reads/metrics.ts';
import { METRICS_V2_VIEWS } from '../../server/features/reads/metrics-views.ts';
import {
  buildObservationList,
  parseFieldGroups,
  simpleFilters,
} from '../../server/features/reads/observations.ts';
import type { Query } from '../../server/features/reads/sql.ts';
import { ingestionTombstones } from '../../server/features/tombstones/record.ts';
import { pgEntityLocks } from '../../server/features/write-model/entity-locks.ts';
import { clickhouseStore } from '../../server/features/write-model/store.ts';
import { loadConfig } from '../../server/kernel/config/env.ts';
import { createAnalyticsClient } from '../../server/platform/datastores/clickhouse.ts';
import { createPool } from '../../server/platform/datastores/postgres.ts';
import { SINGLE_NODE } from '../../server/platform/migrations/analytics/dialect.ts';
import { AnalyticsMigrator } from '../../server/platform/migrations/analytics/runner.ts';
import { migrationsFor } from '../../server/platform/migrations/analytics/versions.ts';
import { RelationalMigrator } from '../../server/platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../../server/platform/migrations/relational/versions.ts';
import { startPostgres } from '../fixtures/postgres.ts';
import { line, quantile } from './report.ts';

const SIZES = (process.env['BENCH_READ_SIZES'] ?? '1000000')
  .split(',')
  .map(Number)
  .concat(process.argv.includes('--reads-10m') ? [10_000_000] : []);
/** Projects and their share of the traces, in tenths. */
export const PROJECT_SHARES = [7, 2, 1];
/** As the web reads: numbers as JSON numbers. */
const READ_SETTINGS = {
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_decimals: 0,
} as const;
const ITERATIONS = Number(process.env['BENCH_READ_ITERATIONS'] ?? 200);
export const SPANS_PER_TRACE = 5;
export const START = '2026-06-01 00:00:00';
/** Seconds between events: spreads the data over about four months. */
export const stepFor = (events: number) => Math.max(1, Math.floor((120 * 86_400) / events));

/** `project` of a trace number: the first projects take most traces (shares in tenths). */
function projectExpression(projects: string[]): string {
  let bound = 0;
  const arms = projects.slice(0, -1).map((_, i) => {
    bound += PROJECT_SHARES[i]!;
    return `intDiv(number, ${SPANS_PER_TRACE}) % 10 < ${bound}, {p${i}:String}`;
  });
  return `multiIf(${arms.join(', ')}, {p${projects.length - 1}:String})`;
}

/** Events of `projects` in events_full: roots every SPANS_PER_TRACE, a rare `topicN` token in inputs. */
export async function generate(ch: ClickHouseClient, projects: string[], events: number): Promise<void> {
  const step = stepFor(events);
  // One INSERT ... SELECT from numbers(): the events_core view fills the table the API reads.
  await ch.command({
    query: `INSERT INTO events_full (project_id, trace_id, span_id, parent_span_id, start_time, end_time, name, type, environment,
      user_id, session_id, trace_name, level, input, output, metadata_names, metadata_values, usage_details, cost_details, event_ts, is_deleted)
    SELECT ${projectExpression(projects)}, concat('tr', toString(intDiv(number, ${SPANS_PER_TRACE}))), concat('s', toString(number)),
      if(number % ${SPANS_PER_TRACE} = 0, '', concat('s', toString(number - number % ${SPANS_PER_TRACE}))),
      toDateTime64('${START}', 6) + number * ${step}, toDateTime64('${START}', 6) + number * ${step} + 1,
      concat('op-', toString(number % 20)), if(number % 2 = 0, 'GENERATION', 'SPAN'), if(number % 3 = 0, 'prod', 'staging'),
      concat('u', toString(intDiv(number, ${SPANS_PER_TRACE}) % 1000)), concat('sess', toString(number % 5000)), 'bench',
      'DEFAULT', concat(repeat('input text ', 30), 'topic', toString(number % 1000)), repeat('output text ', 30), ['k'], [toString(number)],
      map('input', 10, 'output', 20, 'total', 30), map('total', toDecimal128(0.001, 12)), now64(6), 0
    FROM numbers(${events})`,
    query_params: Object.fromEntries(projects.map((p, i) => [`p${i}`, p])),
    clickhouse_settings: { max_execution_time: 0 },
  });
}

/** One read: the web request and the SQL the web runs for it. */
interface ReadCase {
  path: (i: number) => string;
  store: (i: number) => Query;
}

export async function benchReads(): Promise<void> {
  for (const events of SIZES) await benchReadsAt(events);
}

/** A web in events_only on a fresh store holding `events` generated events of three projects. */
export async function openReadBench(name: string, events: number) {
  const dir = mkdtempSync(join(tmpdir(), `obs-bench-${name}-`));
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
    tombstones: ingestionTombstones(traceDeletionDeps(config, { pool: pool, analytics: ch })),
    keys: new KeyVerifier(pool),
    models: new ModelCatalog(pool),
    masking: new MaskingCatalog(pool),
    shuttingDown: () => false,
  });
  const close = async () => {
    await app.close();
    await ch.close();
    await pool.end();
    await pgf.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await new RelationalMigrator(pool, relationalMigrationsFor('4')).up();
    await new AnalyticsMigrator(ch, SINGLE_NODE, migrationsFor('4')).up();
    const projects = await Promise.all(
      PROJECT_SHARES.map((_, i) => createProject(pool, `bench-${name}-${i}`)),
    );
    const genStart = performance.now();
    await generate(
      ch,
      projects.map((p) => p.projectId),
      events,
    );
    const genSeconds = (performance.now() - genStart) / 1000;
    return { app, ch, pool, projects, genSeconds, close };
  } catch (err) {
    await close();
    throw err;
  }
}

async function benchReadsAt(events: number): Promise<void> {
  const { app, ch, projects, genSeconds, close } = await openReadBench('reads', events);
  try {
    const project = projects[0]!;
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const auth = `Basic ${Buffer.from(`${project.publicKey}:${project.secretKey}`).toString('base64')}`;
    const traces = Math.floor(events / SPANS_PER_TRACE);
    const endIso = new Date(
      Date.parse(`${START.replace(' ', 'T')}Z`) + events * stepFor(events) * 1000,
    ).toISOString();
    const fromIso = '2026-07-01T00:00:00.000Z';
    const groups = parseFieldGroups(undefined);
    const listPath = (params: Record<string, string>) =>
      `/api/public/v2/observations?${new URLSearchParams({ ...params, limit: '50' })}`;
    const listSql = (filters: FilterCondition[]) =>
      buildObservationList({ projectId: project.projectId, groups, filters, limit: 50, textIndex: true });
    // Trace numbers of the largest project: those whose number % 10 falls in its share.
    const traceOf = (i: number) => {
      const n = (i * 7919) % traces;
      return `tr${n - (n % 10) + (n % PROJECT_SHARES[0]!)}`;
    };
    const user = (i: number) => {
      const n = (i * 31) % 1000;
      return `u${n - (n % 10) + (n % PROJECT_SHARES[0]!)}`;
    };
    // Event numbers of the largest project: trace (number / 5) % 10 within its share, i.e. number % 50 < 35.
    const topic = (i: number) => {
      const n = (i * 13) % 1000;
      return n - (n % 50) + (n % (SPANS_PER_TRACE * PROJECT_SHARES[0]!));
    };
    const search = (i: number) => [
      {
        type: 'string' as const,
        column: 'input',
        operator: 'matches' as const,
        value: `topic${topic(i)}`,
      },
    ];
    const metrics = JSON.stringify({
      view: 'observations',
      dimensions: [{ field: 'name' }],
      metrics: [
        { measure: 'count', aggregation: 'count' },
        { measure: 'totalTokens', aggregation: 'sum' },
      ],
      filters: [],
      timeDimension: { granularity: 'day' },
      fromTimestamp: fromIso,
      toTimestamp: endIso,
    });
    const cases: Record<string, ReadCase> = {
      'trace fetch by traceId': {
        path: (i) => listPath({ traceId: traceOf(i) }),
        store: (i) => listSql(simpleFilters({ traceId: traceOf(i) })),
      },
      'filtered list (type, env, user, range), page of 50': {
        path: (i) =>
          listPath({
            type: 'GENERATION',
            environment: 'prod',
            userId: user(i),
            fromStartTime: fromIso,
            toStartTime: endIso,
          }),
        store: (i) =>
          listSql(
            simpleFilters({
              type: 'GENERATION',
              environment: ['prod'],
              userId: user(i),
              fromStartTime: fromIso,
              toStartTime: endIso,
            }),
          ),
      },
      'full-text search on input, page of 50': {
        path: (i) => listPath({ filter: JSON.stringify(search(i)) }),
        store: (i) => listSql(search(i)),
      },
      'metrics v2: count, tokens by name and day': {
        path: () => `/api/public/v2/metrics?${new URLSearchParams({ query: metrics })}`,
        store: () =>
          buildMetrics(METRICS_V2_VIEWS['observations']!, project.projectId, parseMetricsQuery(metrics)),
      },
    };
    process.stdout.write(
      `\nPublic v2 reads over ${events} events (${traces} traces in 3 projects at 70/20/10 %; generated in ${genSeconds.toFixed(1)} s)\n\n`,
    );
    for (const [label, read] of Object.entries(cases)) {
      const web: number[] = [];
      const store: number[] = [];
      for (let i = -20; i < ITERATIONS; i++) {
        let t = performance.now();
        const res = await fetch(`${base}${read.path(i + 1000)}`, { headers: { authorization: auth } });
        const body = (await res.json()) as { data: unknown[] };
        const webMs = performance.now() - t;
        if (res.status !== 200 || body.data.length === 0)
          throw new Error(`${label}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
        const q = read.store(i + 1000);
        t = performance.now();
        const rs = await ch.query({
          query: q.sql,
          query_params: q.params,
          format: 'JSONEachRow',
          clickhouse_settings: { ...READ_SETTINGS, ...(q.settings ?? {}) } as never,
        });
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
    await close();
  }
}
