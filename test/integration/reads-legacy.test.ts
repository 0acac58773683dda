/**
 * Datasets (every mode) and the deprecated reads (legacy and dual; 404 in events_only), driven
 * through `@langfuse/client` 5.x and raw HTTP against `observatory web` on real PostgreSQL and the
 * ClickHouse engine. Data is seeded through the write path (batch ingestion, run-item links).
 */
import { LangfuseClient } from '@langfuse/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { modeWebsForSuite } from '../fixtures/mode-webs.ts';
import { basicAuth, MODE_ENV, type Project } from '../fixtures/service.ts';

const MODES = MODE_ENV;
type Mode = keyof typeof MODES;

const s = modeWebsForSuite('reads');
const { webs, projects } = s;

const sdk = (mode: Mode, p: Project = projects[mode]) =>
  new LangfuseClient({ publicKey: p.publicKey, secretKey: p.secretKey, baseUrl: webs[mode].url });

async function call(mode: Mode, method: string, path: string, body?: unknown, p: Project = projects[mode]) {
  const res = await fetch(`${webs[mode].url}${path}`, {
    method,
    headers: { authorization: basicAuth(p), ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown> & { data?: Record<string, unknown>[] },
  };
}

describe('datasets', () => {
  it('creates a dataset and items; an item id makes a retry update instead of duplicating', async () => {
    const lf = sdk('events_only');
    const ds = await lf.api.datasets.create({
      name: 'qa',
      description: 'questions',
      metadata: { owner: 'me' },
    });
    expect(ds).toMatchObject({
      name: 'qa',
      description: 'questions',
      metadata: { owner: 'me' },
      inputSchema: null,
    });
    const first = await lf.dataset.createItem({
      datasetName: 'qa',
      id: 'src-1',
      input: { q: 'a?' },
      expectedOutput: 'A',
    });
    expect(first).toMatchObject({
      id: 'src-1',
      status: 'ACTIVE',
      input: { q: 'a?' },
      expectedOutput: 'A',
      datasetName: 'qa',
    });
    const retry = await lf.dataset.createItem({
      datasetName: 'qa',
      id: 'src-1',
      input: { q: 'a (fixed)?' },
      metadata: { n: 1 },
    });
    expect(retry).toMatchObject({
      id: 'src-1',
      input: { q: 'a (fixed)?' },
      expectedOutput: 'A',
      metadata: { n: 1 },
    });
    const list = await lf.api.datasetItems.list({ datasetName: 'qa' });
    expect(list.data.map((i) => i.id)).toEqual(['src-1']);
    expect(list.meta).toEqual({ page: 1, limit: 50, totalItems: 1, totalPages: 1 });
    expect((await lf.api.datasets.get('qa')).id).toBe(ds.id);
  });

  it('refuses to move an item to another dataset', async () => {
    const lf = sdk('events_only');
    await lf.api.datasets.create({ name: 'other-ds' });
    const res = await call('events_only', 'POST', '/api/public/dataset-items', {
      datasetName: 'other-ds',
      id: 'src-1',
      input: 1,
    });
    expect(res.status).toBe(400);
    expect(res.body['message']).toMatch(/cannot move/);
    expect((await lf.api.datasetItems.get('src-1')).datasetName).toBe('qa');
  });

  it('serves a dataset of 600 items with pages of 500 (dataset.get)', async () => {
    const lf = sdk('events_only');
    await lf.api.datasets.create({ name: 'big' });
    for (let i = 0; i < 600; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          lf.api.datasetItems.create({ datasetName: 'big', id: `big-${i + j}`, input: { i: i + j } }),
        ),
      );
    }
    const page = await lf.api.datasetItems.list({ datasetName: 'big', limit: 500, page: 1 });
    expect(page.data).toHaveLength(500);
    expect(page.meta).toEqual({ page: 1, limit: 500, totalItems: 600, totalPages: 2 });
    const ds = await lf.dataset.get('big', { fetchItemsPageSize: 500 });
    expect(ds.items).toHaveLength(600);
    expect(new Set(ds.items.map((i) => i.id)).size).toBe(600);
    const listed = await lf.api.datasets.list({ limit: 10 });
    expect(listed.data.map((d) => d.name).sort()).toEqual(['big', 'other-ds', 'qa']);
  });

  it('gets and deletes an item; s.other projects see nothing', async () => {
    const lf = sdk('events_only');
    await lf.api.datasetItems.create({ datasetName: 'qa', id: 'gone', input: 'x' });
    expect((await lf.api.datasetItems.get('gone')).input).toBe('x');
    expect(await lf.api.datasetItems.delete('gone')).toEqual({
      message: 'Dataset item successfully deleted',
    });
    expect((await call('events_only', 'GET', '/api/public/dataset-items/gone')).status).toBe(404);
    expect((await call('events_only', 'GET', '/api/public/v2/datasets/qa', undefined, s.other)).status).toBe(
      404,
    );
    expect(
      (await call('events_only', 'GET', '/api/public/dataset-items/src-1', undefined, s.other)).status,
    ).toBe(404);
    const v1 = await call('events_only', 'GET', '/api/public/datasets/qa');
    expect(v1.status).toBe(200);
    expect((v1.body['items'] as unknown[]).length).toBe(1);
  });
});

/** One trace with a span, a generation and a score, through batch ingestion. */
async function seedLegacy(mode: Mode, traceId: string) {
  const ts = new Date().toISOString();
  const at = (s: number) => new Date(Date.now() - 60_000 + s * 1000).toISOString();
  const res = await call(mode, 'POST', '/api/public/ingestion', {
    batch: [
      {
        id: `${traceId}-t`,
        type: 'trace-create',
        timestamp: ts,
        body: {
          id: traceId,
          name: 'chat',
          userId: 'u-1',
          sessionId: `sess-${traceId}`,
          tags: ['x'],
          timestamp: at(0),
        },
      },
      {
        id: `${traceId}-s`,
        type: 'span-create',
        timestamp: ts,
        body: { id: `${traceId}-span`, traceId, name: 'retrieve', startTime: at(0), endTime: at(1) },
      },
      {
        id: `${traceId}-g`,
        type: 'generation-create',
        timestamp: ts,
        body: {
          id: `${traceId}-gen`,
          traceId,
          name: 'answer',
          model: 'gpt-4o',
          startTime: at(1),
          endTime: at(3),
          usage: { input: 10, output: 20 },
          costDetails: { input: 0.001, output: 0.002 },
        },
      },
      {
        id: `${traceId}-sc`,
        type: 'score-create',
        timestamp: ts,
        body: { id: `${traceId}-score`, traceId, name: 'quality', value: 0.8 },
      },
    ],
  });
  expect(res.status).toBe(207);
  expect(res.body['errors']).toEqual([]);
}

describe.each(['legacy', 'dual'] as const)('legacy reads in %s', (mode) => {
  const traceId = `legacy-read-${mode}`;
  beforeAll(async () => {
    await seedLegacy(mode, traceId);
    // A dataset run through the deprecated run-item link, for the run reads.
    const lf = sdk(mode);
    await lf.api.datasets.create({ name: 'runs-ds' });
    await lf.api.datasetItems.create({ datasetName: 'runs-ds', id: `item-${mode}`, input: 'q' });
    await lf.api.datasetRunItems.create({ runName: 'run-1', datasetItemId: `item-${mode}`, traceId });
  });

  it('traces, observations and sessions', async () => {
    const lf = sdk(mode);
    const traces = await lf.api.trace.list({ userId: 'u-1' });
    expect(traces.data.map((t) => t.id)).toEqual([traceId]);
    expect(traces.data[0]).toMatchObject({
      name: 'chat',
      tags: ['x'],
      htmlPath: expect.stringContaining(traceId),
    });
    expect(traces.data[0]!.observations).toHaveLength(2);
    expect(traces.data[0]!.latency).toBeCloseTo(3, 1);
    const full = await lf.api.trace.get(traceId);
    expect(full.observations.map((o) => o.name).sort()).toEqual(['answer', 'retrieve']);
    expect(full.scores.map((s) => s.name)).toEqual(['quality']);
    const gen = full.observations.find((o) => o.type === 'GENERATION')!;
    expect(gen).toMatchObject({ model: 'gpt-4o', usageDetails: { input: 10, output: 20, total: 30 } });
    expect(gen.calculatedTotalCost).toBeCloseTo(0.003);
    const obs = await call(mode, 'GET', `/api/public/observations?traceId=${traceId}&type=GENERATION`);
    expect(obs.body.data!.map((o) => o['id'])).toEqual([`${traceId}-gen`]);
    expect((await call(mode, 'GET', `/api/public/observations/${traceId}-span`)).body['name']).toBe(
      'retrieve',
    );
    const sessions = await call(mode, 'GET', '/api/public/sessions');
    expect(sessions.body.data!.map((s) => s['id'])).toEqual([`sess-${traceId}`]);
    const session = await call(mode, 'GET', `/api/public/sessions/sess-${traceId}`);
    expect((session.body['traces'] as { id: string }[]).map((t) => t.id)).toEqual([traceId]);
  });

  it('scores (v1 and v2) and metrics (query and daily)', async () => {
    for (const path of ['/api/public/scores', '/api/public/v2/scores']) {
      const list = await call(mode, 'GET', `${path}?name=quality`);
      expect(list.body.data!.map((s) => s['id'])).toEqual([`${traceId}-score`]);
      expect(list.body.data![0]).toMatchObject({
        value: 0.8,
        dataType: 'NUMERIC',
        trace: { userId: 'u-1', tags: ['x'] },
      });
      expect((await call(mode, 'GET', `${path}/${traceId}-score`)).body['value']).toBe(0.8);
    }
    const now = Date.now();
    const query = {
      view: 'observations',
      dimensions: [{ field: 'type' }],
      metrics: [{ measure: 'count', aggregation: 'count' }],
      fromTimestamp: new Date(now - 86_400_000).toISOString(),
      toTimestamp: new Date(now + 60_000).toISOString(),
      orderBy: [{ field: 'type', direction: 'asc' }],
    };
    const metrics = await sdk(mode).api.legacy.metricsV1.metrics({ query: JSON.stringify(query) });
    expect(metrics.data).toEqual([
      { type: 'GENERATION', count_count: 1 },
      { type: 'SPAN', count_count: 1 },
    ]);
    const daily = await call(mode, 'GET', '/api/public/metrics/daily');
    expect(daily.body.data).toHaveLength(1);
    expect(daily.body.data![0]).toMatchObject({ countTraces: 1, countObservations: 2 });
    expect((daily.body.data![0]!['usage'] as unknown[])[0]).toMatchObject({
      model: 'gpt-4o',
      inputUsage: 10,
      outputUsage: 20,
    });
  });

  it('dataset runs and run items, and the delete of a run', async () => {
    const lf = sdk(mode);
    const ds = await lf.api.datasets.get('runs-ds');
    const items = await lf.api.datasetRunItems.list({ datasetId: ds.id, runName: 'run-1' });
    expect(items.data.map((i) => i.traceId)).toEqual([traceId]);
    const runs = await lf.api.datasets.getRuns('runs-ds');
    expect(runs.data.map((r) => r.name)).toEqual(['run-1']);
    const run = await lf.api.datasets.getRun('runs-ds', 'run-1');
    expect(run.datasetRunItems.map((i) => i.datasetItemId)).toEqual([`item-${mode}`]);
    expect(await lf.api.datasets.deleteRun('runs-ds', 'run-1')).toEqual({
      message: 'Dataset run successfully deleted',
    });
    expect((await call(mode, 'GET', '/api/public/datasets/runs-ds/runs/run-1')).status).toBe(404);
    const rs = await s.stores.ch.client.query({
      query: 'SELECT count() AS n FROM dataset_run_items_rmt FINAL WHERE project_id = {p:String}',
      query_params: { p: projects[mode].projectId },
      format: 'JSONEachRow',
    });
    expect(Number((await rs.json<{ n: string }>())[0]!.n)).toBe(0);
  });

  it('isolates projects', async () => {
    expect((await call(mode, 'GET', `/api/public/traces/${traceId}`, undefined, s.other)).status).toBe(404);
    expect((await call(mode, 'GET', '/api/public/traces', undefined, s.other)).body.data).toEqual([]);
    expect((await call(mode, 'GET', `/api/public/scores/${traceId}-score`, undefined, s.other)).status).toBe(
      404,
    );
  });
});

describe('legacy reads in events_only', () => {
  const paths = [
    ['GET', '/api/public/traces'],
    ['GET', '/api/public/traces/x'],
    ['GET', '/api/public/observations'],
    ['GET', '/api/public/observations/x'],
    ['GET', '/api/public/sessions'],
    ['GET', '/api/public/sessions/x'],
    ['GET', '/api/public/scores'],
    ['GET', '/api/public/scores/x'],
    ['GET', '/api/public/v2/scores'],
    ['GET', '/api/public/v2/scores/x'],
    ['GET', '/api/public/metrics?query=%7B%7D'],
    ['GET', '/api/public/metrics/daily'],
    ['GET', '/api/public/dataset-run-items?datasetId=d&runName=r'],
    ['GET', '/api/public/datasets/qa/runs'],
    ['GET', '/api/public/datasets/qa/runs/r'],
    ['DELETE', '/api/public/datasets/qa/runs/r'],
  ] as const;
  it.each(paths)('%s %s answers 404', async (method, path) => {
    const res = await call('events_only', method, path);
    expect(res.status).toBe(404);
    expect(res.body['message']).toMatch(/events_only/);
  });
});
