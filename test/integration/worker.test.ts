/**
 * The worker on real PostgreSQL, Redis and the ClickHouse engine: dual-write propagation of old
 * SDK traffic with trace attributes, the health probe (stuck, idle, dual write off, draining), the
 * preflight checks and the producer report.
 */

import { Redis } from 'ioredis';
import { Langfuse } from 'langfuse';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchProducers } from '../../operator/runtime/probes.ts';
import { backfillReportSchema, type ProducersReport } from '../../server/contract/worker-api.ts';
import {
  basicAuth,
  cli,
  createProject,
  DUAL_ENV,
  LEGACY_ENV,
  type Project,
  startWeb,
  startWorker,
  type WebServer,
} from '../fixtures/service.ts';
import { type Given, type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';

const DUAL = DUAL_ENV;
const LEGACY = LEGACY_ENV;
const FAST = {
  SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS: '2',
  SERVICE_EVENT_PROPAGATION_GRACE_SECONDS: '2',
  SERVICE_EVENT_PROPAGATION_STUCK_THRESHOLD_MINUTES: '1',
  SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER: 'false',
};

let stores: Stores & Given<{ redis: true }>;
let web: WebServer;
let worker: WebServer;
let project: Project;
let redis: Redis;

beforeAll(async () => {
  stores = await startStores({ redis: true });
  web = await startWeb({ ...stores.env, ...DUAL });
  project = await createProject(stores.env, 'worker');
  worker = await startWorker({ ...stores.env, ...DUAL, ...FAST });
  redis = new Redis(stores.redis.url);
}, 180_000);

afterAll(async () => {
  redis?.disconnect();
  await stopStores(stores, web, worker);
});

async function health(url: string) {
  const res = await fetch(`${url}/api/health?failIfEventPropagationStuck=true`);
  return {
    status: res.status,
    body: (await res.json()) as { status: string; eventPropagation?: Record<string, unknown> },
  };
}

async function rows<T>(query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  const rs = await stores.ch.client.query({
    query,
    query_params: { p: project.projectId, ...params },
    format: 'JSONEachRow',
  });
  return rs.json<T>();
}

describe('dual-write propagation', () => {
  it('carries old-SDK traffic into events_full with trace attributes within a minute of its partition completing', async () => {
    const sdk = new Langfuse({
      publicKey: project.publicKey,
      secretKey: project.secretKey,
      baseUrl: web.url,
    });
    const trace = sdk.trace({
      id: 'prop-1',
      name: 'checkout',
      userId: 'u-9',
      sessionId: 's-9',
      tags: ['dual'],
      release: 'r-2',
      version: 'v-2',
      metadata: { shared: 'trace', t: '1' },
    });
    trace.span({ id: 'prop-1-s', name: 'step', metadata: { shared: 'obs' } }).end();
    trace.generation({ id: 'prop-1-g', name: 'llm', model: 'gpt', version: 'v-gen' }).end();
    // An experiment as SDKs before experiment attributes run it: the trace linked to a dataset item.
    await sdk.createDataset('exp-ds');
    await sdk.createDatasetItem({ datasetName: 'exp-ds', id: 'exp-item', input: 'q', expectedOutput: 'a' });
    const [item] = (await sdk.getDataset('exp-ds')).items;
    await item!.link(trace, 'run-1');
    await sdk.shutdownAsync();

    const [staged] = await rows<{ partition: string }>(
      "SELECT DISTINCT toString(toStartOfInterval(s3_first_seen_timestamp, INTERVAL 3 MINUTE)) AS partition FROM observations_batch_staging WHERE trace_id = 'prop-1'",
    );
    const partitionEnd = Date.parse(`${staged!.partition.replace(' ', 'T')}Z`) + 180_000;
    let events: Record<string, unknown>[] = [];
    // Done when the job moved its cursor past the partition: after the insert and the enrichment.
    const cursor = async () =>
      (await redis.get('observatory:event-propagation:last-processed-partition')) ?? '';
    while (events.length < 3 || (await cursor()) < staged!.partition) {
      expect(
        Date.now() - partitionEnd,
        'propagated within a minute of the partition completing',
      ).toBeLessThan(60_000);
      await new Promise((r) => setTimeout(r, 2_000));
      events = await rows(
        'SELECT * FROM events_full FINAL WHERE project_id = {p:String} AND trace_id = {t:String}',
        { t: 'prop-1' },
      );
    }
    const bySpan = Object.fromEntries(events.map((e) => [e['span_id'], e]));
    expect(bySpan['t-prop-1']).toMatchObject({ parent_span_id: '', type: 'SPAN', name: 'checkout' });
    expect(bySpan['prop-1-s']).toMatchObject({
      parent_span_id: 't-prop-1',
      user_id: 'u-9',
      session_id: 's-9',
      tags: ['dual'],
      release: 'r-2',
      version: 'v-2',
      trace_name: 'checkout',
      source: 'ingestion-api-dual-write',
    });
    expect(bySpan['prop-1-g']).toMatchObject({ version: 'v-gen', type: 'GENERATION' });
    // Propagation rebuilt the experiment fields of the whole linked trace from its run item.
    expect(
      events.map((e) => [
        e['span_id'],
        e['experiment_name'],
        e['experiment_item_id'],
        e['experiment_item_root_span_id'],
      ]),
    ).toEqual(
      expect.arrayContaining(
        ['t-prop-1', 'prop-1-s', 'prop-1-g'].map((id) => [id, 'run-1', 'exp-item', 't-prop-1']),
      ),
    );
    expect(events.every((e) => e['experiment_item_expected_output'] === '"a"')).toBe(true);
    // And the experiment reads serve it, as they serve an experiment a newer SDK sends.
    const read = async (path: string) => {
      const res = await fetch(`${web.url}${path}`, { headers: { authorization: basicAuth(project) } });
      expect(res.status, path).toBe(200);
      return ((await res.json()) as { data: Record<string, unknown>[] }).data;
    };
    const from = encodeURIComponent(new Date(partitionEnd - 3_600_000).toISOString());
    const experiments = await read(`/api/public/experiments?fromStartTime=${from}`);
    expect(experiments.map((e) => e['name'])).toEqual(['run-1']);
    const items = await read(
      `/api/public/experiment-items?fromStartTime=${from}&experimentId=${experiments[0]!['id']}`,
    );
    expect(items.map((i) => [i['experimentItemId'], i['traceId']])).toEqual([['exp-item', 'prop-1']]);
    const s = bySpan['prop-1-s']!;
    const meta = Object.fromEntries(
      (s['metadata_names'] as string[]).map((n, i) => [n, (s['metadata_values'] as string[])[i]]),
    );
    expect(meta).toEqual({ shared: 'obs', t: '1' });

    // Re-running the partition (cursor reset) changes nothing.
    await redis.del('observatory:event-propagation:last-processed-partition');
    await new Promise((r) => setTimeout(r, 6_000));
    expect(await redis.get('observatory:event-propagation:last-processed-partition')).not.toBeNull();
    const again = await rows(
      'SELECT span_id FROM events_full FINAL WHERE project_id = {p:String} AND trace_id = {t:String}',
      { t: 'prop-1' },
    );
    expect(again).toHaveLength(3);
    const metrics = await (await fetch(`${worker.url}/metrics`)).text();
    expect(metrics).toMatch(/observatory_event_propagation_partition_backlog \d+/);
  }, 420_000);
});

describe('health probe', () => {
  it('answers 200 while the job heartbeats, idle or not, with the details', async () => {
    const h = await health(worker.url);
    expect(h.status).toBe(200);
    expect(h.body.eventPropagation).toMatchObject({ enabled: true, stuck: false, thresholdSeconds: 60 });
    expect(h.body.eventPropagation!['lastSuccessAt']).not.toBeNull();
    expect(typeof h.body.eventPropagation!['idle']).toBe('boolean');
  });

  it('answers 503 when the job made no progress within the threshold, and recovers', async () => {
    // Another holder keeps the singleton lease (as a hung replica would) and the last success is old.
    await redis.set('observatory:event-propagation:lease', 'hung-replica', 'PX', 600_000);
    await redis.set('observatory:event-propagation:last-success-at', String(Date.now() - 5 * 60_000));
    const stuck = await health(worker.url);
    expect(stuck.status).toBe(503);
    expect(stuck.body.status).toBe('Event propagation stuck');
    expect(stuck.body.eventPropagation).toMatchObject({
      stuck: true,
      secondsSinceLastSuccess: expect.any(Number),
    });
    await redis.del('observatory:event-propagation:lease');
    await new Promise((r) => setTimeout(r, 5_000));
    expect((await health(worker.url)).status).toBe(200);
  });

  it('passes where dual write does not run', async () => {
    const legacy = await startWorker({ ...stores.env, ...LEGACY, ...FAST });
    await redis.set('observatory:event-propagation:last-success-at', String(Date.now() - 60 * 60_000));
    const h = await health(legacy.url);
    expect(h.status).toBe(200);
    expect(h.body.eventPropagation).toMatchObject({ enabled: false, stuck: false });
    await legacy.stop();
  });

  it('passes in events_only, where the job only drains, even when it makes no progress', async () => {
    const eventsOnly = await startWorker({
      ...stores.env,
      ...FAST,
      SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only',
    });
    // The job cannot run (a hung holder keeps its lease) and its last success is long past.
    await redis.set('observatory:event-propagation:lease', 'hung-replica', 'PX', 600_000);
    await redis.set('observatory:event-propagation:last-success-at', String(Date.now() - 60 * 60_000));
    const h = await health(eventsOnly.url);
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ status: 'ok', eventPropagation: { enabled: false, stuck: false } });
    await redis.del('observatory:event-propagation:lease');
    await eventsOnly.stop();
  });

  it('fails readiness once SIGTERM arrived, while draining', async () => {
    const draining = await startWorker({
      ...stores.env,
      ...DUAL,
      ...FAST,
      SERVICE_SHUTDOWN_DRAIN_SECONDS: '3',
    });
    expect((await fetch(`${draining.url}/api/ready`)).status).toBe(200);
    process.kill(-draining.process.pid, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    const ready = await fetch(`${draining.url}/api/ready`);
    expect(ready.status).toBe(503);
    await draining.process.exited;
  });
});

describe('preflight', () => {
  it('fails with named checks on an unfinished version 3 background migration and passes otherwise', async () => {
    // A release 3 deployment's databases: its checks apply only before the move (on a release 4
    // schema they are not applicable, test/integration/preflight-upgrade.test.ts).
    const name = 'preflight_v3';
    const admin = new pg.Client({ connectionString: stores.pg.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`).finally(() => admin.end());
    await stores.ch.client.command({ query: `CREATE DATABASE ${name}` });
    const url = new URL(stores.pg.url);
    url.pathname = `/${name}`;
    const release3 = {
      ...stores.env,
      DATABASE_URL: url.toString(),
      CLICKHOUSE_DB: name,
      SERVICE_RELEASE: '3',
    };
    const migrated = await cli(['migrate', 'up'], release3);
    expect(migrated.code, migrated.stderr).toBe(0);
    const db = new pg.Pool({ connectionString: release3.DATABASE_URL, max: 1 });
    try {
      await db.query(
        "INSERT INTO background_migrations (id, name, script) VALUES ('v3-1', '20241024_1730_migrate_traces_from_pg_to_ch', 'migrateTracesFromPostgresToClickhouse')",
      );
      const failing = await cli(['preflight', '--json'], release3);
      expect(failing.code).toBe(1);
      const report = JSON.parse(failing.stdout) as {
        ok: boolean;
        checks: { name: string; status: string; detail: string }[];
      };
      expect(report.ok).toBe(false);
      const names = report.checks.map((c) => c.name);
      expect(names).toEqual([
        'version-3-background-migrations-finished',
        'analytics-version',
        'postgres-version',
        'redis-version',
        'analytics-privileges',
        'disk-headroom',
      ]);
      const v3 = report.checks[0]!;
      expect(v3.status).toBe('fail');
      expect(v3.detail).toContain('20241024_1730_migrate_traces_from_pg_to_ch');
      await db.query("UPDATE background_migrations SET finished_at = now() WHERE id = 'v3-1'");
      const passing = await cli(['preflight', '--json'], release3);
      expect(passing.code, passing.stdout).toBe(0);
      expect((JSON.parse(passing.stdout) as { ok: boolean }).ok).toBe(true);
    } finally {
      await db.end();
    }
  });
});

describe('producer report', () => {
  it('names keys and SDKs on paths events_only refuses, and not version 4 producers', async () => {
    const otlp = (headers: Record<string, string>) =>
      fetch(`${web.url}/api/public/otel/v1/traces`, {
        method: 'POST',
        headers: { authorization: basicAuth(project), 'content-type': 'application/json', ...headers },
        body: JSON.stringify({
          resourceSpans: [
            {
              scopeSpans: [
                {
                  spans: [
                    {
                      traceId: '0af7651916cd43dd8448eb211c80319c',
                      spanId: 'b7ad6b7169203331',
                      name: 'x',
                      startTimeUnixNano: '1',
                      endTimeUnixNano: '2',
                    },
                  ],
                },
              ],
            },
          ],
        }),
      });
    const sdk = new Langfuse({
      publicKey: project.publicKey,
      secretKey: project.secretKey,
      baseUrl: web.url,
    });
    sdk.trace({ name: 'from-old-sdk' });
    await sdk.shutdownAsync();
    expect((await otlp({ 'x-langfuse-sdk-name': 'python', 'x-langfuse-sdk-version': '3.2.0' })).status).toBe(
      200,
    );
    expect(
      (await otlp({ 'x-service-ingestion-version': '4', 'x-langfuse-sdk-name': 'custom-v4' })).status,
    ).toBe(200);
    await new Promise((r) => setTimeout(r, 6_000)); // the web flushes its tally every few seconds
    const r = await cli(['producers', '--since', '1h', '--json'], stores.env);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as {
      producers: { publicKey: string; sdkName: string; sdkVersion: string; path: string }[];
    };
    const seen = report.producers.map((p) => `${p.sdkName}@${p.sdkVersion}:${p.path}`);
    expect(seen).toContain('python@3.2.0:otel-dual-path');
    // Only the batch producer would be refused; the OTLP one is accepted but loses propagation.
    const consequences = (report as unknown as ProducersReport).producers.map(
      (p) => `${p.path}:${p.consequence}`,
    );
    expect(new Set(consequences)).toEqual(
      new Set(['ingestion-api:refused', 'otel-dual-path:loses-propagation']),
    );
    expect(seen.some((s) => s.startsWith('langfuse-js@3.') && s.endsWith(':ingestion-api'))).toBe(true);
    expect(seen.some((s) => s.startsWith('custom-v4'))).toBe(false);
    expect(report.producers.every((p) => p.publicKey === project.publicKey)).toBe(true);
    expect((await cli(['producers', '--since', 'soon'], stores.env)).code).toBe(2);
    const viaWorker = (await (await fetch(`${worker.url}/api/producers?since=1h`)).json()) as typeof report;
    expect(viaWorker.producers.map((p) => `${p.sdkName}@${p.sdkVersion}:${p.path}`).sort()).toEqual(
      [...seen].sort(),
    );
    expect((await fetch(`${worker.url}/api/producers?since=x`)).status).toBe(400);
  });

  it('takes a compound quiet period (1h30m) through the CLI, the worker and the operator client', async () => {
    const spec = { producerQuietPeriod: '1h30m' };
    const cliReport = await cli(['producers', '--since', spec.producerQuietPeriod, '--json'], stores.env);
    expect(cliReport.code, cliReport.stderr).toBe(0);
    const fromCli = JSON.parse(cliReport.stdout) as ProducersReport;
    const port = Number(new URL(worker.url).port);
    const fromOperator = await fetchProducers('127.0.0.1', spec.producerQuietPeriod, port);
    expect(fromOperator).toBeDefined();
    const names = (r: ProducersReport) =>
      r.producers.map((p) => `${p.sdkName}@${p.sdkVersion}:${p.path}`).sort();
    expect(names(fromOperator!)).toEqual(names(fromCli));
    expect(names(fromCli)).toContain('python@3.2.0:otel-dual-path');
    // The window is an hour and a half back from now, as both sides read it.
    for (const r of [fromCli, fromOperator!]) {
      const back = Date.now() - Date.parse(r.since);
      expect(back).toBeGreaterThanOrEqual(90 * 60_000);
      expect(back).toBeLessThan(100 * 60_000);
    }
  });

  it('reports backfill progress and the analytics store, and refuses the legacy-table cleanup before events_only', async () => {
    const backfill = backfillReportSchema.parse(await (await fetch(`${worker.url}/api/backfill`)).json());
    expect(backfill.steps.map((s) => s.step)).toEqual([1, 2, 3, 4, 5]);
    // The store's figures behind the estimates and the pressure pause: every chunked step's source.
    expect(backfill.store!.freeBytes).toBeGreaterThan(0);
    expect(backfill.store!.sources.map((s) => s.step)).toEqual([1, 2, 3, 4]);
    const traces = await rows<{ n: string }>('SELECT count() AS n FROM traces');
    expect(backfill.store!.sources[0]!.rows).toBe(Number(traces[0]!.n));
    expect(backfill.store!.pressure).toBeNull();
    const cleanup = await cli(['cleanup', 'truncate-legacy-tables'], { ...stores.env, ...DUAL });
    expect(cleanup.code).toBe(1);
    expect(cleanup.stderr).toContain('only in write mode events_only');
  });
});
