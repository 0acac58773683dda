/**
 * The version 4 reads through `@langfuse/client` 5.x against `observatory web` in events_only:
 * observations v2 (fetch by traceId, filters, cursor pagination over several pages and monthly
 * partitions, full-text `matches`), scores v3, metrics v2, experiments from the SDK's experiment
 * runner, the OpenAPI document, the mode gates and project isolation. Data goes in through the
 * write path (OTLP, batch ingestion for scores).
 */
import { randomBytes } from 'node:crypto';
import { LangfuseClient } from '@langfuse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildObservationList } from '../../server/features/reads/observations.ts';
import { withSdkTracer } from '../fixtures/sdk-tracer.ts';
import { basicAuth, createProject, type Project, startWeb, type WebServer } from '../fixtures/service.ts';
import { type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';

let stores: Stores;
let web: WebServer;
let dualNoPreview: WebServer;
let legacyWeb: WebServer;
let project: Project;
let other: Project;
let lf: LangfuseClient;

const MONTHS = ['2026-08-10T10:00:00.000Z', '2026-09-10T10:00:00.000Z', '2026-10-10T10:00:00.000Z'];
const TRACES_PER_MONTH = 40;
const hex = (n: number) => randomBytes(n).toString('hex');
const nanos = (iso: string, plusMs = 0) => `${BigInt(Date.parse(iso) + plusMs) * 1_000_000n}`;
const str = (key: string, value: string) => ({ key, value: { stringValue: value } });

interface Seeded {
  traceId: string;
  rootId: string;
  genId: string;
  start: string;
  user: string;
  env: string;
}
const seeded: Seeded[] = [];
let needleTrace: Seeded;

/** OTLP/JSON spans: a root span and a generation per trace, spread over three monthly partitions. */
function seedSpans() {
  const spans: unknown[] = [];
  MONTHS.forEach((month, m) => {
    for (let i = 0; i < TRACES_PER_MONTH; i++) {
      const start = new Date(Date.parse(month) + i * 60_000).toISOString();
      const s: Seeded = {
        traceId: hex(16),
        rootId: hex(8),
        genId: hex(8),
        start,
        user: `user-${i % 3}`,
        env: i % 2 ? 'staging' : 'prod',
      };
      seeded.push(s);
      const common = [str('langfuse.user.id', s.user), str('langfuse.environment', s.env)];
      const needle = m === 0 && i === 0;
      const decoy = m === 0 && i === 1;
      if (needle) needleTrace = s;
      spans.push({
        traceId: s.traceId,
        spanId: s.rootId,
        name: 'handle-request',
        kind: 1,
        startTimeUnixNano: nanos(start),
        endTimeUnixNano: nanos(start, 2000),
        attributes: [
          ...common,
          str('langfuse.trace.name', 'request'),
          str(
            'langfuse.observation.input',
            needle ? '{"question":"Where does the Aardvark sleep?"}' : '{"question":"hello"}',
          ),
          str('langfuse.observation.output', decoy ? 'the aardvark sleeps in a burrow' : 'ok'),
          ...(decoy ? [str('langfuse.observation.metadata.note', 'aardvark')] : []),
        ],
      });
      spans.push({
        traceId: s.traceId,
        spanId: s.genId,
        parentSpanId: s.rootId,
        name: 'llm',
        kind: 1,
        startTimeUnixNano: nanos(start, 100),
        endTimeUnixNano: nanos(start, 1600),
        attributes: [
          ...common,
          str('langfuse.observation.type', 'generation'),
          str('langfuse.observation.model.name', m === 2 ? 'gpt-4o' : 'gpt-4o-mini'),
          str('langfuse.observation.usage_details', JSON.stringify({ input: 10, output: 5, total: 15 })),
          str('langfuse.observation.cost_details', JSON.stringify({ input: 0.01, output: 0.02 })),
          str(
            'langfuse.observation.completion_start_time',
            JSON.stringify(new Date(Date.parse(start) + 400).toISOString()),
          ),
        ],
      });
    }
  });
  return {
    resourceSpans: [
      {
        resource: { attributes: [str('service.name', 'reads-test')] },
        scopeSpans: [{ scope: { name: 'langfuse-sdk', version: '5.0.0' }, spans }],
      },
    ],
  };
}

async function post(url: string, path: string, body: unknown, p: Project) {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      authorization: basicAuth(p),
      'content-type': 'application/json',
      'x-langfuse-ingestion-version': '4',
    },
    body: JSON.stringify(body),
  });
}

async function get(path: string, p: Project = project, url = web.url) {
  const res = await fetch(`${url}${path}`, { headers: { authorization: basicAuth(p) } });
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown> & { data: Record<string, unknown>[] },
  };
}

beforeAll(async () => {
  stores = await startStores();
  web = await startWeb({ ...stores.env, SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only' });
  [dualNoPreview, legacyWeb] = await Promise.all([
    startWeb({
      ...stores.env,
      SERVICE_MIGRATION_V4_WRITE_MODE: 'dual',
      SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR: 'dual_write',
      SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN: 'false',
    }),
    startWeb({
      ...stores.env,
      SERVICE_MIGRATION_V4_WRITE_MODE: 'legacy',
      SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR: 'dual_write',
      SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL: 'false',
    }),
  ]);
  project = await createProject(stores.env, 'v4-reads');
  other = await createProject(stores.env, 'v4-other');
  lf = new LangfuseClient({ publicKey: project.publicKey, secretKey: project.secretKey, baseUrl: web.url });
  const res = await post(web.url, '/api/public/otel/v1/traces', seedSpans(), project);
  expect(res.status).toBe(200);
  const ts = new Date().toISOString();
  const scores = await post(
    web.url,
    '/api/public/ingestion',
    {
      batch: [
        {
          id: 's1',
          type: 'score-create',
          timestamp: ts,
          body: {
            id: 'score-num',
            traceId: needleTrace.traceId,
            name: 'accuracy',
            value: 0.9,
            comment: 'good',
          },
        },
        {
          id: 's2',
          type: 'score-create',
          timestamp: ts,
          body: {
            id: 'score-cat',
            traceId: needleTrace.traceId,
            observationId: needleTrace.genId,
            name: 'tone',
            value: 'polite',
            dataType: 'CATEGORICAL',
          },
        },
        {
          id: 's3',
          type: 'score-create',
          timestamp: ts,
          body: { id: 'score-bool', sessionId: 'sess-1', name: 'resolved', value: 1, dataType: 'BOOLEAN' },
        },
      ],
    },
    project,
  );
  expect(((await scores.json()) as { errors: unknown[] }).errors).toEqual([]);
});

afterAll(async () => {
  await stopStores(stores, web, dualNoPreview, legacyWeb);
});

describe('observations v2', () => {
  it('fetches a trace by traceId without a time range, with its root flagged', async () => {
    const res = await lf.api.observations.getMany({
      traceId: needleTrace.traceId,
      fields: 'core,basic,io,usage,model,metrics,trace_context',
    });
    expect(res.data).toHaveLength(2);
    const root = res.data.find((o) => o.id === needleTrace.rootId)!;
    const gen = res.data.find((o) => o.id === needleTrace.genId)!;
    expect(root).toMatchObject({
      isRootObservation: true,
      parentObservationId: null,
      type: 'SPAN',
      traceName: 'request',
      userId: 'user-0',
    });
    expect(root.input).toBe('{"question":"Where does the Aardvark sleep?"}');
    expect(gen).toMatchObject({
      isRootObservation: false,
      parentObservationId: needleTrace.rootId,
      type: 'GENERATION',
      model: 'gpt-4o-mini',
      usageDetails: { input: 10, output: 5, total: 15 },
      latency: 1.5,
      timeToFirstToken: 0.3,
      startTime: new Date(Date.parse(needleTrace.start) + 100).toISOString(),
    });
    expect(gen.totalCost).toBeCloseTo(0.03);
    expect(res.meta.cursor).toBeUndefined();
  });

  it('pages through every event of several monthly partitions, stable under concurrent inserts', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await lf.api.observations.getMany({
        limit: 50,
        fromStartTime: '2026-08-01T00:00:00Z',
        toStartTime: '2026-11-01T00:00:00Z',
        ...(cursor ? { cursor } : {}),
      });
      seen.push(...page.data.map((o) => o.id));
      cursor = page.meta.cursor;
      if (pages === 0) {
        // Newer events arriving between pages (in and after the listed range) move nothing.
        const late = {
          traceId: hex(16),
          spanId: hex(8),
          name: 'late',
          kind: 1,
          startTimeUnixNano: nanos('2026-10-31T00:00:00Z'),
          endTimeUnixNano: nanos('2026-10-31T00:00:01Z'),
          attributes: [],
        };
        await post(
          web.url,
          '/api/public/otel/v1/traces',
          { resourceSpans: [{ scopeSpans: [{ scope: { name: 'langfuse-sdk' }, spans: [late] }] }] },
          project,
        );
      }
      pages++;
    } while (cursor);
    const expected = seeded.length * 2;
    expect(pages).toBe(Math.ceil(expected / 50));
    expect(seen).toHaveLength(expected);
    expect(new Set(seen).size).toBe(expected);
    const all = new Set(seeded.flatMap((s) => [s.rootId, s.genId]));
    expect(seen.every((id) => all.has(id))).toBe(true);
  });

  it('filters with the simple parameters and with the JSON filter', async () => {
    const gens = await lf.api.observations.getMany({
      type: 'GENERATION',
      environment: 'prod',
      userId: 'user-1',
      limit: 1000,
      fromStartTime: '2026-09-01T00:00:00Z',
      toStartTime: '2026-10-01T00:00:00Z',
    });
    const expected = seeded.filter(
      (s) => s.start.startsWith('2026-09') && s.env === 'prod' && s.user === 'user-1',
    );
    expect(gens.data.map((o) => o.id).sort()).toEqual(expected.map((s) => s.genId).sort());
    const roots = await lf.api.observations.getMany({
      isRootObservation: true,
      limit: 1000,
      fromStartTime: '2026-08-01T00:00:00Z',
      toStartTime: '2026-11-01T00:00:00Z',
    });
    // The seeded roots plus the one late root of the pagination test.
    expect(roots.data).toHaveLength(seeded.length + 1);
    const filter = [
      { type: 'string', column: 'model', operator: '=', value: 'gpt-4o' },
      { type: 'number', column: 'latency', operator: '>=', value: 1.4 },
      { type: 'stringOptions', column: 'environment', operator: 'any of', value: ['staging'] },
    ];
    const viaFilter = await lf.api.observations.getMany({ filter: JSON.stringify(filter), limit: 1000 });
    expect(viaFilter.data.map((o) => o.id).sort()).toEqual(
      seeded
        .filter((s) => s.start.startsWith('2026-10') && s.env === 'staging')
        .map((s) => s.genId)
        .sort(),
    );
    const bad = await get(
      `/api/public/v2/observations?filter=${encodeURIComponent(JSON.stringify([{ type: 'string', column: 'nope', operator: '=', value: 'x' }]))}`,
    );
    expect(bad.status).toBe(400);
  });

  it('finds a word of an input with matches, not the same word in outputs or metadata', async () => {
    const filter = [{ type: 'string', column: 'input', operator: 'matches', value: 'aardvark' }];
    const res = await lf.api.observations.getMany({ filter: JSON.stringify(filter), fields: 'core,io' });
    expect(res.data.map((o) => o.id)).toEqual([needleTrace.rootId]);
    const inOutput = await lf.api.observations.getMany({
      filter: JSON.stringify([{ type: 'string', column: 'output', operator: 'matches', value: 'AARDVARK' }]),
    });
    expect(inOutput.data).toHaveLength(1);
    expect(inOutput.data[0]!.id).not.toBe(needleTrace.rootId);
    const partial = await lf.api.observations.getMany({
      filter: JSON.stringify([{ type: 'string', column: 'input', operator: 'matches', value: 'aardv' }]),
    });
    expect(partial.data).toEqual([]);
    const meta = await lf.api.observations.getMany({
      filter: JSON.stringify([
        { type: 'stringObject', column: 'metadata', key: 'note', operator: 'matches', value: 'aardvark' },
      ]),
    });
    expect(meta.data).toHaveLength(1);
  });

  it('answers the same without the text index (the scanning fallback), run on the real engine', async () => {
    const filters = [
      { type: 'string' as const, column: 'input', operator: 'matches', value: 'Aardvark sleep' },
    ];
    const run = async (textIndex: boolean) => {
      const q = buildObservationList({
        projectId: project.projectId,
        groups: new Set(['core']),
        filters,
        limit: 10,
        textIndex,
      });
      const rs = await stores.ch.client.query({
        query: q.sql,
        query_params: q.params,
        format: 'JSONEachRow',
        ...(q.settings ? { clickhouse_settings: q.settings } : {}),
      });
      return (await rs.json<{ span_id: string }>()).map((r) => r.span_id);
    };
    const indexed = buildObservationList({
      projectId: 'p',
      groups: new Set(['core']),
      filters,
      limit: 10,
      textIndex: true,
    });
    expect(indexed.sql).toContain('hasAllTokens');
    expect(indexed.settings).toEqual({ enable_full_text_index: 1 });
    expect(await run(true)).toEqual([needleTrace.rootId]);
    expect(await run(false)).toEqual([needleTrace.rootId]);
  });

  it('isolates projects and follows the mode gates', async () => {
    const res = await get(`/api/public/v2/observations?traceId=${needleTrace.traceId}`, other);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect((await get('/api/public/v2/observations', project, dualNoPreview.url)).status).toBe(404);
    expect(
      (await get('/api/public/experiments?fromStartTime=2026-01-01T00:00:00Z', project, dualNoPreview.url))
        .status,
    ).toBe(404);
    const q = encodeURIComponent(
      JSON.stringify({
        view: 'observations',
        metrics: [{ measure: 'count', aggregation: 'count' }],
        fromTimestamp: '2026-01-01T00:00:00Z',
        toTimestamp: '2027-01-01T00:00:00Z',
      }),
    );
    expect((await get(`/api/public/v2/metrics?query=${q}`, project, legacyWeb.url)).status).toBe(404);
    expect((await get('/api/public/v3/scores', project, legacyWeb.url)).status).toBe(200);
  });
});

describe('scores v3', () => {
  it('returns typed values, field groups and subjects', async () => {
    const all = await lf.api.scoresV3.getManyV3({ fields: 'details,subject' });
    const byId = Object.fromEntries(all.data.map((s) => [s.id, s]));
    expect(byId['score-num']).toMatchObject({
      value: 0.9,
      dataType: 'NUMERIC',
      comment: 'good',
      subject: { kind: 'trace', id: needleTrace.traceId },
    });
    expect(byId['score-cat']).toMatchObject({
      value: 'polite',
      subject: { kind: 'observation', id: needleTrace.genId, traceId: needleTrace.traceId },
    });
    expect(byId['score-bool']).toMatchObject({
      value: true,
      dataType: 'BOOLEAN',
      subject: { kind: 'session', id: 'sess-1' },
    });
    expect(all.meta.limit).toBe(50);
    const first = await lf.api.scoresV3.getManyV3({ limit: 2 });
    expect(first.data).toHaveLength(2);
    const second = await lf.api.scoresV3.getManyV3({ limit: 2, cursor: first.meta.cursor! });
    expect(second.data).toHaveLength(1);
    expect(second.meta.cursor).toBeUndefined();
    const numeric = await lf.api.scoresV3.getManyV3({ dataType: 'numeric', valueMin: 0.5 });
    expect(numeric.data.map((s) => s.id)).toEqual(['score-num']);
    expect((await get('/api/public/v3/scores?limit=101')).status).toBe(400);
    expect((await get('/api/public/v3/scores?fields=nope')).status).toBe(400);
    expect((await get('/api/public/v3/scores?observationId=x')).status).toBe(400);
    expect((await get('/api/public/v3/scores', other)).body.data).toEqual([]);
  });
});

describe('metrics v2', () => {
  const range = { fromTimestamp: '2026-08-01T00:00:00Z', toTimestamp: '2026-11-01T00:00:00Z' };
  it('counts, latency, tokens and cost by dimension and time bucket', async () => {
    const query = {
      view: 'observations',
      dimensions: [{ field: 'providedModelName' }],
      metrics: [
        { measure: 'count', aggregation: 'count' },
        { measure: 'latency', aggregation: 'avg' },
        { measure: 'totalTokens', aggregation: 'sum' },
        { measure: 'totalCost', aggregation: 'sum' },
      ],
      filters: [{ column: 'type', operator: '=', value: 'GENERATION', type: 'string' }],
      orderBy: [{ field: 'providedModelName', direction: 'asc' }],
      ...range,
    };
    const res = await lf.api.metrics.metrics({ query: JSON.stringify(query) });
    expect(res.data).toHaveLength(2);
    expect(res.data[0]).toMatchObject({
      providedModelName: 'gpt-4o',
      count_count: 40,
      avg_latency: 1500,
      sum_totalTokens: 600,
    });
    expect(res.data[1]).toMatchObject({ providedModelName: 'gpt-4o-mini', count_count: 80 });
    expect(Number(res.data[1]!['sum_totalCost'])).toBeCloseTo(80 * 0.03);
    const monthly = await lf.api.metrics.metrics({
      query: JSON.stringify({
        view: 'observations',
        metrics: [{ measure: 'count', aggregation: 'count' }],
        timeDimension: { granularity: 'month' },
        ...range,
      }),
    });
    expect(monthly.data).toEqual([
      { time_dimension: '2026-08-01T00:00:00.000Z', count_count: 80 },
      { time_dimension: '2026-09-01T00:00:00.000Z', count_count: 80 },
      { time_dimension: '2026-10-01T00:00:00.000Z', count_count: 81 },
    ]);
  });

  it('refuses high-cardinality group-bys with 400', async () => {
    for (const field of ['traceId', 'userId', 'sessionId', 'id']) {
      const q = encodeURIComponent(
        JSON.stringify({
          view: 'observations',
          dimensions: [{ field }],
          metrics: [{ measure: 'count', aggregation: 'count' }],
          ...range,
        }),
      );
      const res = await get(`/api/public/v2/metrics?query=${q}`);
      expect(res.status).toBe(400);
      expect(res.body['message']).toMatch(/too many distinct values/);
    }
  });
});

describe('experiments', () => {
  it('lists the experiment and items the SDK experiment runner wrote', async () => {
    // The experiment runner's propagated attributes rely on the registered context manager.
    const result = await withSdkTracer(
      project,
      web.url,
      async () => {
        await lf.api.datasets.create({ name: 'capitals' });
        await lf.dataset.createItem({
          datasetName: 'capitals',
          id: 'fr',
          input: 'France',
          expectedOutput: 'Paris',
        });
        await lf.dataset.createItem({
          datasetName: 'capitals',
          id: 'de',
          input: 'Germany',
          expectedOutput: 'Berlin',
        });
        const dataset = await lf.dataset.get('capitals');
        return dataset.runExperiment({
          name: 'capital-quiz',
          runName: 'quiz-run-1',
          description: 'capitals of Europe',
          task: async (item) => (item.input === 'France' ? 'Paris' : 'Bonn'),
          evaluators: [
            async ({ output, expectedOutput }) => ({
              name: 'exact',
              value: output === expectedOutput ? 1 : 0,
            }),
          ],
        });
      },
      { exportMode: 'immediate' },
    );
    expect(result.itemResults).toHaveLength(2);
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const experiments = await lf.api.experiments.list({ fromStartTime: from, fields: 'core,metadata' });
    expect(experiments.data).toHaveLength(1);
    const exp = experiments.data[0]!;
    expect(exp).toMatchObject({
      id: result.experimentId,
      name: 'quiz-run-1',
      description: 'capitals of Europe',
      itemCount: 2,
    });
    const ds = await lf.api.datasets.get('capitals');
    expect(exp.datasetId).toBe(ds.id);
    const items = await lf.api.experiments.listItems({
      fromStartTime: from,
      experimentId: exp.id,
      fields: 'core,dataset,io,scores',
    });
    expect(items.data.map((i) => i.experimentItemId).sort()).toEqual(['de', 'fr']);
    const fr = items.data.find((i) => i.experimentItemId === 'fr')!;
    expect(fr).toMatchObject({
      experimentId: exp.id,
      experimentDatasetId: ds.id,
      output: 'Paris',
      input: 'France',
    });
    expect(fr.expectedOutput).toBe('Paris');
    expect(fr.scores?.map((s) => [s.name, s.value])).toEqual([['exact', 1]]);
  });
});

describe('openapi.json', () => {
  it('documents every read route from its schemas', async () => {
    const res = await get('/api/public/openapi.json');
    expect(res.status).toBe(200);
    const paths = res.body['paths'] as Record<string, Record<string, { parameters: { name: string }[] }>>;
    for (const p of [
      '/api/public/v2/observations',
      '/api/public/v3/scores',
      '/api/public/v2/metrics',
      '/api/public/experiments',
      '/api/public/dataset-items/{id}',
      '/api/public/traces',
    ]) {
      expect(paths[p], p).toBeDefined();
    }
    expect(paths['/api/public/v2/observations']!['get']!.parameters.map((x) => x.name)).toContain('traceId');
  });
});
