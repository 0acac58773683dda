/**
 * The historic backfill chain on real stores, run as the operator's Jobs run it
 * (`observatory backfill run --step N`): historic data ingested in `legacy`, the switch to `dual`,
 * then every step, including SIGKILLs mid-step. Every historic trace and observation must be in
 * `events_full` exactly once after FINAL, with the fields the spec names, row by row.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyRange } from '../../server/features/backfill/chunks.ts';
import { TRACES_KEY } from '../../server/features/backfill/sql.ts';
import { startProcess } from '../fixtures/processes.ts';
import {
  basicAuth,
  cli,
  createProject,
  DUAL_ENV,
  type Env,
  LEGACY_ENV,
  type Project,
  ROOT,
  startWeb,
} from '../fixtures/service.ts';
import { type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';

const LEGACY = LEGACY_ENV;
const DUAL = { ...DUAL_ENV, SERVICE_BACKGROUND_MIGRATION_V4_DROP_PID_TID_SORTING_TABLES: 'true' };
/** The tuning the operator renders from spec.backfill into each backfill Job. */
const CHUNK_ROWS = 3;
const TUNING = { SERVICE_BACKFILL_CHUNK_ROWS: String(CHUNK_ROWS), SERVICE_BACKFILL_THROTTLE_MS: '150' };

let stores: Stores;
let project: Project;
// biome-ignore lint/suspicious/noExplicitAny: rows read back from the store are compared field by field
type StoreRow = Record<string, any>;
const TRACES = 24;
const MONTHS = ['2026-08-14T09:00:00.000Z', '2026-09-15T10:00:00.000Z', '2026-10-20T11:30:00.000Z'];

function historicBatch(i: number) {
  const ts = new Date(Date.parse(MONTHS[i % MONTHS.length]!) + i * 60_000).toISOString();
  const traceId = `h-${i}`;
  const ev = (id: string, type: string, body: object) => ({ id: `${id}-ev`, type, timestamp: ts, body });
  return [
    ev(traceId, 'trace-create', {
      id: traceId,
      timestamp: ts,
      name: `trace-${i}`,
      userId: `user-${i % 3}`,
      sessionId: `session-${i % 4}`,
      tags: ['hist', `g${i % 2}`],
      metadata: { tm: `v${i}`, shared: 'from-trace' },
      release: 'r1',
      version: i % 2 === 0 ? 'v-trace' : undefined,
      public: i % 5 === 0,
      input: { q: i },
      output: 'answer',
    }),
    ev(`${traceId}-s`, 'span-create', {
      id: `${traceId}-s`,
      traceId,
      name: 'retrieve',
      startTime: ts,
      metadata: { shared: 'from-obs' },
      version: i % 3 === 0 ? 'v-obs' : undefined,
    }),
    ev(`${traceId}-g`, 'generation-create', {
      id: `${traceId}-g`,
      traceId,
      parentObservationId: `${traceId}-s`,
      name: 'llm',
      startTime: ts,
      model: 'gpt-4o',
      usage: { input: 1, output: 2 },
    }),
    ev(`${traceId}-e`, 'event-create', { id: `${traceId}-e`, traceId, name: 'evt', startTime: ts }),
  ];
}

async function ingest(url: string, batch: object[]) {
  const res = await fetch(`${url}/api/public/ingestion`, {
    method: 'POST',
    headers: { authorization: basicAuth(project), 'content-type': 'application/json' },
    body: JSON.stringify({ batch }),
  });
  expect(res.status).toBe(207);
  const body = (await res.json()) as { errors: unknown[] };
  expect(body.errors).toEqual([]);
}

async function query<T>(sql: string, params: Record<string, unknown> = {}): Promise<T[]> {
  const rs = await stores.ch.client.query({
    query: sql,
    query_params: { p: project.projectId, ...params },
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
  });
  return rs.json<T>();
}

const backfill = (step: number, env: Env = {}) =>
  cli(['backfill', 'run', '--step', String(step)], { ...stores.env, ...DUAL, ...env });

beforeAll(async () => {
  stores = await startStores();
  const legacy = await startWeb({ ...stores.env, ...LEGACY });
  project = await createProject(stores.env, 'backfill');
  for (let i = 0; i < TRACES; i++) await ingest(legacy.url, historicBatch(i));
  // An experiment: a dataset item and a run item linking the first trace to it.
  await stores.pool.query("INSERT INTO datasets (id, project_id, name) VALUES ('ds1', $1, 'golden')", [
    project.projectId,
  ]);
  await stores.pool.query(
    `INSERT INTO dataset_items (id, project_id, dataset_id, input, expected_output) VALUES ('item1', $1, 'ds1', '{"q":0}', '"42"')`,
    [project.projectId],
  );
  const dri = await fetch(`${legacy.url}/api/public/dataset-run-items`, {
    method: 'POST',
    headers: { authorization: basicAuth(project), 'content-type': 'application/json' },
    body: JSON.stringify({ runName: 'run-1', datasetItemId: 'item1', traceId: 'h-0' }),
  });
  expect(dri.status).toBe(200);
  // Trace h-1 becomes an experiment trace with two run items on two subtrees: run-a on h-1-s
  // (above h-1-g) and run-b on a second subtree h-1-b (above h-1-b1); h-1-e and the root stay out.
  const ts = Date.parse(MONTHS[1]!) + 60_000;
  const at = new Date(ts).toISOString();
  await ingest(legacy.url, [
    {
      id: 'h-1-b-ev',
      type: 'span-create',
      timestamp: at,
      body: { id: 'h-1-b', traceId: 'h-1', name: 'b', startTime: at },
    },
    {
      id: 'h-1-b1-ev',
      type: 'generation-create',
      timestamp: at,
      body: { id: 'h-1-b1', traceId: 'h-1', parentObservationId: 'h-1-b', name: 'b1', startTime: at },
    },
  ]);
  await stores.pool.query(
    `INSERT INTO dataset_items (id, project_id, dataset_id, input, expected_output) VALUES ('item2', $1, 'ds1', '{"q":1}', '"43"')`,
    [project.projectId],
  );
  for (const [runName, datasetItemId, observationId] of [
    ['run-a', 'item1', 'h-1-s'],
    ['run-b', 'item2', 'h-1-b'],
  ]) {
    const res = await fetch(`${legacy.url}/api/public/dataset-run-items`, {
      method: 'POST',
      headers: { authorization: basicAuth(project), 'content-type': 'application/json' },
      body: JSON.stringify({ runName, datasetItemId, traceId: 'h-1', observationId }),
    });
    expect(res.status).toBe(200);
  }
  // Bookmarks are set on the trace (a newer version of its row, as the version 3 UI writes it).
  await stores.ch.client.command({
    query: `INSERT INTO traces SELECT * REPLACE (true AS bookmarked, event_ts + INTERVAL 1 SECOND AS event_ts)
            FROM traces FINAL WHERE project_id = '${project.projectId}' AND id IN ('h-1', 'h-6')`,
  });
  await legacy.stop();
}, 300_000);

afterAll(() => stopStores(stores));

describe('the historic backfill chain', () => {
  it('refuses to run while the write mode is legacy, and out of order', async () => {
    const legacy = await backfill(1, LEGACY);
    expect(legacy.code).toBe(1);
    expect(legacy.stderr).toContain('only once dual write is active');
    const early = await backfill(3);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain('waits for step 2');
    const rows = await stores.pool.query(
      'SELECT count(*) AS n FROM background_migrations WHERE failed_at IS NOT NULL',
    );
    expect(Number(rows.rows[0].n)).toBe(0);
  });

  it('runs step 1 in chunks of the size its environment names, and records the tuning in its row', async () => {
    const run = await backfill(1, TUNING);
    expect(run.code, run.stderr).toBe(0);
    // Its statements are bounded for long work and carry progress headers: the client has nothing to warn about.
    expect(run.stderr).not.toContain('request_timeout is set');
    const row = await stores.pool.query('SELECT args, state FROM background_migrations WHERE name LIKE $1', [
      '%step_1%',
    ]);
    expect(row.rows[0].args).toMatchObject({ chunkRows: CHUNK_ROWS, throttleMs: 150 });
    const chunks = row.rows[0].state.chunks as Parameters<typeof keyRange>[1][];
    // Each chunk's key range holds about CHUNK_ROWS source rows (a sampled boundary may shift it by
    // a row; the bookmarked traces have a second, unmerged version), never a whole partition.
    const sizes: number[] = [];
    for (const chunk of chunks) {
      const range = keyRange(TRACES_KEY, chunk);
      const [n] = await query<{ n: number }>(
        `SELECT count() AS n FROM traces WHERE _partition_id = {partition:String} AND ${range.sql}`,
        range.params,
      );
      sizes.push(Number(n!.n));
    }
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(TRACES);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(CHUNK_ROWS + 1);
    expect(chunks.length).toBeGreaterThanOrEqual(Math.floor(TRACES / CHUNK_ROWS));
  });

  it('runs steps 2-3 in small chunks, resuming after SIGKILLs without losing or duplicating rows', async () => {
    const doneChunks = async (step: number) => {
      const r = await stores.pool.query('SELECT state FROM background_migrations WHERE name LIKE $1', [
        `%step_${step}%`,
      ]);
      return ((r.rows[0].state.chunks ?? []) as { done: boolean }[]).filter((c) => c.done).length;
    };
    for (const step of [2, 3]) {
      for (let kill = 0; kill < 3; kill++) {
        const before = await doneChunks(step);
        const child = startProcess(
          `backfill-${step}`,
          process.execPath,
          [`${ROOT}/server/bin/observatory.ts`, 'backfill', 'run', '--step', String(step)],
          {
            env: { PATH: process.env['PATH'], ...stores.env, ...DUAL, ...TUNING },
          },
        );
        // Killed mid-step: once its checkpoint shows one more chunk done (bounded wait).
        for (let i = 0; i < 600 && (await doneChunks(step)) === before; i++)
          await new Promise((r) => setTimeout(r, 100));
        await child.kill('SIGKILL');
      }
      const progress = await stores.pool.query('SELECT state FROM background_migrations WHERE name LIKE $1', [
        `%step_${step}%`,
      ]);
      const chunks = (progress.rows[0].state.chunks ?? []) as { done: boolean }[];
      expect(chunks.length).toBeGreaterThan(3);
      // The rest with two chunks in flight at once.
      const done = await backfill(step, { ...TUNING, SERVICE_BACKFILL_CONCURRENCY: '2' });
      expect(done.code, done.stderr).toBe(0);
    }
    const again = await backfill(3);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('already finished');
  });

  it('puts every historic trace and observation into events_full exactly once with the spec fields', async () => {
    const traces = await query<StoreRow>('SELECT * FROM traces FINAL WHERE project_id = {p:String}');
    const observations = await query<StoreRow>(
      'SELECT * FROM observations FINAL WHERE project_id = {p:String}',
    );
    const events = await query<StoreRow>('SELECT * FROM events_full FINAL WHERE project_id = {p:String}');
    expect(traces).toHaveLength(TRACES);
    expect(traces.filter((t) => t['bookmarked']).map((t) => t['id'])).toEqual(
      expect.arrayContaining(['h-1', 'h-6']),
    );
    expect(observations).toHaveLength(TRACES * 3 + 2);
    expect(events).toHaveLength(traces.length + observations.length);
    const bySpan = new Map(events.map((e) => [e['span_id'], e]));
    expect(bySpan.size).toBe(events.length);
    const traceById = new Map(traces.map((t) => [t['id'], t]));
    const meta = (e: StoreRow) =>
      Object.fromEntries((e['metadata_names'] as string[]).map((n, i) => [n, e['metadata_values'][i]]));
    const same = (a: string, b: string) =>
      expect(Date.parse(`${a.replace(' ', 'T')}Z`)).toBe(Date.parse(`${b.replace(' ', 'T')}Z`));

    for (const t of traces) {
      const e = bySpan.get(`t-${t['id']}`)!;
      expect(e, `root of ${t['id']}`).toBeDefined();
      expect(e).toMatchObject({
        trace_id: t['id'],
        parent_span_id: '',
        type: 'SPAN',
        name: t['name'],
        trace_name: t['name'],
        user_id: t['user_id'] ?? '',
        session_id: t['session_id'] ?? '',
        tags: t['tags'],
        release: t['release'] ?? '',
        version: t['version'] ?? '',
        public: t['public'],
        bookmarked: t['bookmarked'],
        input: t['input'],
        output: t['output'],
        source: 'ingestion-api-backfill',
      });
      same(e['start_time'], t['timestamp']);
      expect(meta(e)).toEqual(t['metadata']);
    }
    for (const o of observations) {
      const e = bySpan.get(o['id'])!;
      const t = traceById.get(o['trace_id'])!;
      expect(e, `event of ${o['id']}`).toBeDefined();
      expect(e).toMatchObject({
        trace_id: o['trace_id'],
        parent_span_id: o['parent_observation_id'] ?? `t-${o['trace_id']}`,
        type: o['type'],
        name: o['name'],
        trace_name: t['name'],
        user_id: t['user_id'] ?? '',
        session_id: t['session_id'] ?? '',
        tags: t['tags'],
        release: t['release'] ?? '',
        version: o['version'] ?? t['version'] ?? '',
        public: t['public'],
        bookmarked: t['bookmarked'],
        provided_model_name: o['provided_model_name'] ?? '',
      });
      same(e['start_time'], o['start_time']);
      // Trace metadata is deliberately not copied onto child events by the backfill.
      expect(meta(e)).toEqual(o['metadata']);
      expect(e['usage_details']).toEqual(o['usage_details']);
    }
  });

  it('enriches the trace tree below each dataset run item (step 4), idempotently, and drops the scratch table (step 5)', async () => {
    const experimentTraces = "trace_id IN ('h-0', 'h-1')";
    const before = await query<StoreRow>(
      `SELECT * FROM events_full FINAL WHERE project_id = {p:String} AND ${experimentTraces} ORDER BY span_id`,
    );
    expect((await backfill(4)).code).toBe(0);
    const after = await query<StoreRow>(
      `SELECT * FROM events_full FINAL WHERE project_id = {p:String} AND ${experimentTraces} ORDER BY span_id`,
    );
    const runs = await query<StoreRow>(
      'SELECT dataset_run_id, dataset_run_name FROM dataset_run_items_rmt FINAL WHERE project_id = {p:String}',
    );
    const runId = new Map(runs.map((r) => [r['dataset_run_name'], r['dataset_run_id']]));
    const run = (name: string, item: string, expected: string, root: string) => ({
      experiment_id: runId.get(name),
      experiment_name: name,
      experiment_dataset_id: 'ds1',
      experiment_item_id: item,
      experiment_item_expected_output: expected,
      experiment_item_root_span_id: root,
    });
    const none = {
      experiment_id: '',
      experiment_name: '',
      experiment_dataset_id: '',
      experiment_item_id: '',
      experiment_item_expected_output: '',
      experiment_item_root_span_id: '',
    };
    const run1 = run('run-1', 'item1', '"42"', 't-h-0');
    const runA = run('run-a', 'item1', '"42"', 'h-1-s');
    const runB = run('run-b', 'item2', '"43"', 'h-1-b');
    const expected: Record<string, object> = {
      't-h-0': run1,
      'h-0-s': run1,
      'h-0-g': run1,
      'h-0-e': run1,
      't-h-1': none,
      'h-1-s': runA,
      'h-1-g': runA,
      'h-1-b': runB,
      'h-1-b1': runB,
      'h-1-e': none,
    };
    expect(after.map((e) => e['span_id'])).toEqual(Object.keys(expected).sort());
    const experimentColumn = (c: string) => c.startsWith('experiment_') || c === 'event_ts';
    for (const e of after) {
      expect(e, e['span_id']).toMatchObject(expected[e['span_id']]!);
      // Everything but the experiment fields is the row as it was before the step.
      const was = before.find((b) => b['span_id'] === e['span_id'])!;
      for (const [column, value] of Object.entries(e))
        if (!experimentColumn(column)) expect(value, `${e['span_id']}.${column}`).toEqual(was[column]);
    }
    expect(
      (
        await query(
          `SELECT 1 FROM events_full FINAL WHERE project_id = {p:String} AND experiment_id != '' AND NOT ${experimentTraces}`,
        )
      ).length,
    ).toBe(0);
    // Run again (the step re-opened): nothing changes, no row is added.
    await stores.pool.query(
      "UPDATE background_migrations SET finished_at = NULL, state = '{}' WHERE name LIKE '%step_4%'",
    );
    expect((await backfill(4)).code).toBe(0);
    const again = await query<StoreRow>(
      `SELECT * FROM events_full FINAL WHERE project_id = {p:String} AND ${experimentTraces} ORDER BY span_id`,
    );
    expect(again).toEqual(after);
    expect((await backfill(5)).code).toBe(0);
    const scratch = await query(
      "SELECT name FROM system.tables WHERE database = currentDatabase() AND name = 'observations_pid_tid_sorting'",
    );
    expect(scratch).toHaveLength(0);
    const status = await cli(['backfill', 'status', '--json'], { ...stores.env, ...DUAL });
    const steps = (JSON.parse(status.stdout) as { steps: { status: string }[] }).steps;
    expect(steps.map((s) => s.status)).toEqual(['finished', 'finished', 'finished', 'finished', 'finished']);
  });

  it('records a failure, halts, and resumes after `backfill retry`', async () => {
    // Re-open step 4 and make its source table disappear for a moment.
    await stores.pool.query(
      "UPDATE background_migrations SET finished_at = NULL, state = '{}' WHERE name LIKE '%step_4%'",
    );
    await stores.ch.client.command({
      query: 'RENAME TABLE dataset_run_items_rmt TO dataset_run_items_rmt_away',
    });
    const failed = await backfill(4);
    expect(failed.code).toBe(1);
    const row = await stores.pool.query(
      "SELECT failed_at, failed_reason FROM background_migrations WHERE name LIKE '%step_4%'",
    );
    expect(row.rows[0].failed_at).not.toBeNull();
    expect(row.rows[0].failed_reason).toContain('dataset_run_items_rmt');
    expect((await backfill(4)).stderr).toContain('backfill retry --step 4');
    await stores.ch.client.command({
      query: 'RENAME TABLE dataset_run_items_rmt_away TO dataset_run_items_rmt',
    });
    expect((await cli(['backfill', 'retry', '--step', '4'], { ...stores.env, ...DUAL })).code).toBe(0);
    const resumed = await backfill(4);
    expect(resumed.code, resumed.stderr).toBe(0);
  });
});
