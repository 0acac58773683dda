/**
 * Dashboards against `observatory web` in events_only over real PostgreSQL and the embedded
 * ClickHouse: the unstable dashboards and dashboard-widgets API (create, read, update, delete,
 * placements, 400s naming the field, 404 for another project's, 409s), the same routes in the UI
 * with roles, and every tile of the home dashboard and of a custom dashboard equal, row for row,
 * to `GET /api/public/v2/metrics` for the same query, over data sent through the OTLP and batch
 * ingestion APIs.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HOME_DASHBOARD, PRESETS } from '../../server/features/dashboards/home.ts';
import { type WidgetDefinition, widgetQuery } from '../../server/features/dashboards/model.ts';
import type { FilterCondition } from '../../server/features/reads/filters.ts';
import { basicAuth, createProject, MODE_ENV, type Project } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';
import { type Browser, createProjectMember, type Row, request, signIn } from '../fixtures/ui-client.ts';

// The reference's `DashboardPlacement` (unstable/dashboards.yml), field by field.
const position = { id: z.string(), x: z.int(), y: z.int(), width: z.int(), height: z.int() };
const DashboardPlacement = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('widget'), widgetId: z.string(), ...position }),
  z.strictObject({ type: z.literal('preset'), presetId: z.string(), ...position }),
]);

let suite: ServiceSuite;
let other: Project;
let member: Browser;
let viewer: Browser;

const hex = (n: number) => randomBytes(n).toString('hex');
const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
const NOW = Date.now();
const range = {
  fromTimestamp: new Date(NOW - 6 * 3_600_000).toISOString(),
  toTimestamp: new Date(NOW + 60_000).toISOString(),
};
const nanos = (ms: number) => `${BigInt(ms) * 1_000_000n}`;

/** Traces over the last five hours: users, sessions, two models, some errors. */
function seedSpans() {
  const spans: unknown[] = [];
  for (let i = 0; i < 60; i++) {
    const start = NOW - 5 * 3_600_000 + i * 4 * 60_000;
    const traceId = hex(16);
    const rootId = hex(8);
    const common = [
      str('langfuse.user.id', `user-${i % 4}`),
      str('langfuse.session.id', `session-${i % 7}`),
      str('langfuse.environment', i % 3 ? 'prod' : 'staging'),
    ];
    spans.push({
      traceId,
      spanId: rootId,
      name: i % 2 ? 'chat' : 'search',
      kind: 1,
      startTimeUnixNano: nanos(start),
      endTimeUnixNano: nanos(start + 1000 + i * 10),
      attributes: [...common, str('langfuse.trace.name', 'request')],
    });
    spans.push({
      traceId,
      spanId: hex(8),
      parentSpanId: rootId,
      name: 'llm',
      kind: 1,
      startTimeUnixNano: nanos(start + 50),
      endTimeUnixNano: nanos(start + 500 + i * 7),
      attributes: [
        ...common,
        str('langfuse.observation.type', 'generation'),
        str('langfuse.observation.model.name', i % 5 ? 'gpt-4o-mini' : 'gpt-4o'),
        str('langfuse.observation.usage_details', JSON.stringify({ input: 10 + i, output: 5 + (i % 3) })),
        str('langfuse.observation.cost_details', JSON.stringify({ input: 0.001 * i, output: 0.002 })),
        ...(i % 6 === 0 ? [str('langfuse.observation.level', 'ERROR')] : []),
      ],
    });
  }
  return {
    resourceSpans: [
      { resource: { attributes: [] }, scopeSpans: [{ scope: { name: 'langfuse-sdk' }, spans }] },
    ],
  };
}

async function api(method: string, path: string, body?: unknown, p: Project = suite.project) {
  const res = await fetch(`${suite.web.url}${path}`, {
    method,
    headers: {
      authorization: basicAuth(p),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Row };
}

const ui = (b: Browser, method: string, path: string, body?: unknown) =>
  request(b, method, `/api/ui/projects/${suite.project.projectId}${path}`, {
    ...(body === undefined ? {} : { body }),
    headers: method === 'GET' ? {} : { 'x-csrf-token': b.csrf },
  });

const metricsV2 = async (query: unknown) =>
  api('GET', `/api/public/v2/metrics?query=${encodeURIComponent(JSON.stringify(query))}`);

beforeAll(async () => {
  suite = await startServiceSuite({ project: 'dash-a', env: MODE_ENV.events_only });
  other = await createProject(suite.env, 'dash-b');
  const [m, v] = await Promise.all([
    createProjectMember(suite.env, 'dash-member@example.com', suite.project.projectId, 'member'),
    createProjectMember(suite.env, 'dash-viewer@example.com', suite.project.projectId, 'viewer'),
  ]);
  [member, viewer] = await Promise.all([signIn(suite.web.url, m), signIn(suite.web.url, v)]);

  const otlp = await api('POST', '/api/public/otel/v1/traces', seedSpans());
  expect(otlp.status).toBe(200);
  const ts = (i: number) => new Date(NOW - 4 * 3_600_000 + i * 600_000).toISOString();
  const batch = Array.from({ length: 12 }, (_, i) => ({
    id: `e${i}`,
    type: 'score-create',
    timestamp: ts(i),
    body: {
      id: `score-${i}`,
      traceId: `t${i}`,
      name: i % 2 ? 'accuracy' : 'helpfulness',
      value: i / 12,
      timestamp: ts(i),
    },
  }));
  const scores = await api('POST', '/api/public/ingestion', { batch });
  expect(scores.body['errors']).toEqual([]);
  const metrics = await api('POST', '/api/public/otel/v1/metrics', seedGenAiMetrics());
  expect(metrics).toEqual({ status: 200, body: {} });
});

/** The OTel GenAI metrics an instrumented app sends (OTLP/JSON, delta points an hour ago). */
function seedGenAiMetrics() {
  const point = (model: string, attrs: unknown[], count: number, sum: number) => ({
    attributes: [str('gen_ai.operation.name', 'chat'), str('gen_ai.request.model', model), ...attrs],
    startTimeUnixNano: nanos(NOW - 3_660_000),
    timeUnixNano: nanos(NOW - 3_600_000),
    count: String(count),
    sum,
    bucketCounts: [String(count), '0'],
    explicitBounds: [1e9],
  });
  const histogram = (name: string, unit: string, dataPoints: unknown[]) => ({
    name,
    unit,
    histogram: { aggregationTemporality: 1, dataPoints },
  });
  return {
    resourceMetrics: [
      {
        resource: { attributes: [str('service.name', 'dash-app')] },
        scopeMetrics: [
          {
            scope: { name: 'opentelemetry.instrumentation.openai_v2' },
            metrics: [
              histogram('gen_ai.client.token.usage', '{token}', [
                point('gpt-4o-mini', [str('gen_ai.token.type', 'input')], 3, 300),
                point('gpt-4o-mini', [str('gen_ai.token.type', 'output')], 3, 90),
                point('gpt-4o', [str('gen_ai.token.type', 'input')], 1, 50),
              ]),
              histogram('gen_ai.client.operation.duration', 's', [
                point('gpt-4o-mini', [], 3, 2.5),
                point('gpt-4o', [], 1, 1.25),
              ]),
            ],
          },
        ],
      },
    ],
  };
}

afterAll(async () => {
  await stopServiceSuite(suite);
});

const costWidget = {
  name: 'Total cost by model',
  description: 'Total model cost grouped by provided model name.',
  view: 'observations',
  dimensions: [{ field: 'providedModelName' }],
  metrics: [{ measure: 'totalCost', agg: 'sum' }],
  filters: [],
  chartType: 'HORIZONTAL_BAR',
  chartConfig: { row_limit: 10 },
};

describe('the unstable dashboard-widgets API', () => {
  it('creates, reads, lists, updates and deletes a widget in the reference shape', async () => {
    const created = await api('POST', '/api/public/unstable/dashboard-widgets', costWidget);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      ...costWidget,
      chartConfig: { type: 'HORIZONTAL_BAR', row_limit: 10 },
      id: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const id = created.body['id'];
    expect((await api('GET', `/api/public/unstable/dashboard-widgets/${id}`)).body).toEqual(created.body);
    const list = await api('GET', '/api/public/unstable/dashboard-widgets?limit=10');
    expect(list.body['data'].map((w: Row) => w['id'])).toContain(id);
    expect(list.body['meta']).toMatchObject({ page: 1, limit: 10, totalItems: expect.any(Number) });

    // A new chart type without a config resets the config to that type's.
    const patched = await api('PATCH', `/api/public/unstable/dashboard-widgets/${id}`, { chartType: 'PIE' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      chartType: 'PIE',
      chartConfig: { type: 'PIE' },
      name: costWidget.name,
    });
    expect(patched.body['chartConfig']).not.toHaveProperty('row_limit');

    expect((await api('DELETE', `/api/public/unstable/dashboard-widgets/${id}`)).body).toEqual({
      message: 'Dashboard widget successfully deleted',
    });
    expect((await api('GET', `/api/public/unstable/dashboard-widgets/${id}`)).status).toBe(404);
  });

  it.each([
    [{ ...costWidget, name: undefined }, /name/],
    [{ ...costWidget, view: 'traces' }, /view/],
    [{ ...costWidget, chartType: 'DONUT' }, /chartType/],
    [{ ...costWidget, metrics: [] }, /metrics/],
    [{ ...costWidget, metrics: [{ measure: 'totalCost', agg: 'median' }] }, /metrics\.0\.agg/],
    [{ ...costWidget, metrics: [{ measure: 'nope', agg: 'sum' }] }, /metrics\.0\.measure/],
    [{ ...costWidget, dimensions: [{ field: 'nope' }] }, /dimensions\.0\.field/],
    [{ ...costWidget, chartConfig: { type: 'PIE' } }, /chartConfig\.type/],
    [{ ...costWidget, dimensions: [{ field: 'userId' }], chartConfig: {} }, /chartConfig\.row_limit/],
    [{ ...costWidget, filters: [{ column: 'name' }] }, /filters\.0/],
  ])('refuses a bad widget with a 400 naming the field (#%#)', async (body, field) => {
    const res = await api('POST', '/api/public/unstable/dashboard-widgets', body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_body', message: expect.stringMatching(field) });
  });

  it('refuses an empty patch', async () => {
    const { body } = await api('POST', '/api/public/unstable/dashboard-widgets', costWidget);
    const res = await api('PATCH', `/api/public/unstable/dashboard-widgets/${body['id']}`, {});
    expect(res.status).toBe(400);
    expect(res.body['message']).toMatch(/at least one field/);
  });
});

describe('the unstable dashboards API', () => {
  it('creates a dashboard, places tiles, moves and removes them, and deletes it', async () => {
    const widget = (await api('POST', '/api/public/unstable/dashboard-widgets', costWidget)).body;
    const created = await api('POST', '/api/public/unstable/dashboards', {
      name: 'Costs',
      filters: [{ column: 'environment', type: 'string', operator: '=', value: 'prod' }],
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      name: 'Costs',
      description: '',
      definition: { widgets: [] },
      defaultTimeRange: '24h',
    });
    const id = created.body['id'];

    const placements = `/api/public/unstable/dashboards/${id}/placements`;
    const first = await api('POST', placements, { type: 'widget', widgetId: widget['id'] });
    expect(first.status).toBe(200);
    expect(DashboardPlacement.parse(first.body)).toEqual({
      type: 'widget',
      id: expect.any(String),
      widgetId: widget['id'],
      x: 0,
      y: 0,
      width: 6,
      height: 6,
    });
    const second = await api('POST', placements, {
      type: 'preset',
      presetId: 'total-cost',
      id: 'cost-number',
    });
    expect(DashboardPlacement.parse(second.body)).toEqual({
      type: 'preset',
      id: 'cost-number',
      presetId: 'total-cost',
      x: 0,
      y: 6,
      width: 6,
      height: 6,
    });
    const again = await api('POST', placements, {
      type: 'preset',
      presetId: 'total-cost',
      id: 'cost-number',
    });
    expect(again.status).toBe(409);
    expect(again.body['code']).toBe('conflict');

    // A partial update: the fields given change, the rest stay.
    const m = await api('PATCH', `${placements}/cost-number`, { x: 6, y: 0, height: 2 });
    expect(m.status).toBe(200);
    const moved = {
      type: 'preset',
      id: 'cost-number',
      presetId: 'total-cost',
      x: 6,
      y: 0,
      width: 6,
      height: 2,
    };
    expect(DashboardPlacement.parse(m.body)).toEqual(moved);
    expect((await api('PATCH', `${placements}/cost-number`, { width: 4 })).body).toEqual({
      ...moved,
      width: 4,
    });
    const got = await api('GET', `/api/public/unstable/dashboards/${id}`);
    expect(got.body['definition']['widgets']).toContainEqual({ ...moved, width: 4 });
    for (const [body, field] of [
      [{}, /At least one/],
      [{ width: 0 }, /width/],
      [{ x: -1 }, /x/],
      // The content and the id of a placement never change.
      [{ x: 1, presetId: 'total-cost' }, /presetId/],
      [{ x: 1, id: 'other' }, /id/],
    ] as const) {
      const bad = await api('PATCH', `${placements}/cost-number`, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body).toMatchObject({ code: 'invalid_body', message: expect.stringMatching(field) });
    }
    expect((await api('PATCH', `${placements}/no-such`, { x: 1 })).status).toBe(404);
    const missingWidget = await api('POST', placements, { type: 'widget', widgetId: 'no-such-widget' });
    expect(missingWidget.status).toBe(404);
    expect((await api('POST', placements, { type: 'chart', widgetId: widget['id'] })).status).toBe(400);
    // The placement routes of the previous draft are not served.
    expect(
      (
        await api('POST', `/api/public/unstable/dashboards/${id}/widgets`, {
          type: 'preset',
          presetId: 'total-cost',
        })
      ).status,
    ).toBe(404);

    // A placed widget cannot be deleted.
    const del = await api('DELETE', `/api/public/unstable/dashboard-widgets/${widget['id']}`);
    expect(del.status).toBe(409);

    const renamed = await api('PATCH', `/api/public/unstable/dashboards/${id}`, { name: 'Costs (prod)' });
    expect(renamed.body).toMatchObject({ name: 'Costs (prod)', filters: created.body['filters'] });
    expect(renamed.body['definition']['widgets']).toHaveLength(2);
    const empty = await api('PATCH', `/api/public/unstable/dashboards/${id}`, {});
    expect(empty.status).toBe(400);
    expect(empty.body).toMatchObject({
      code: 'invalid_body',
      message: expect.stringMatching(/At least one/),
    });

    const removed = await api('DELETE', `${placements}/${first.body['id']}`);
    expect(removed.body).toEqual({ message: 'Placement successfully deleted' });
    expect((await api('DELETE', `${placements}/${first.body['id']}`)).status).toBe(404);
    expect((await api('GET', `/api/public/unstable/dashboards/${id}`)).body['definition']['widgets']).toEqual(
      [{ ...moved, width: 4 }],
    );
    expect((await api('DELETE', `/api/public/unstable/dashboard-widgets/${widget['id']}`)).status).toBe(200);

    expect((await api('DELETE', `/api/public/unstable/dashboards/${id}`)).body).toEqual({
      message: 'Dashboard successfully deleted',
    });
    expect((await api('GET', `/api/public/unstable/dashboards/${id}`)).status).toBe(404);
  });

  it.each([
    [{}, /name/],
    [{ name: 'x', filters: [{ column: 'environment', type: 'bogus', operator: '=' }] }, /filters\.0\.type/],
    [{ name: 'x', defaultTimeRange: '2y' }, /defaultTimeRange/],
    [
      {
        name: 'x',
        definition: {
          widgets: [{ type: 'preset', id: 'a', presetId: 'nope', x: 0, y: 0, width: 6, height: 6 }],
        },
      },
      /definition\.widgets\.0\.presetId/,
    ],
    [
      {
        name: 'x',
        definition: {
          widgets: [{ type: 'widget', id: 'a', widgetId: 'w', x: 12, y: 0, width: 6, height: 6 }],
        },
      },
      /definition\.widgets\.0\.x/,
    ],
  ])('refuses a bad dashboard with a 400 naming the field (#%#)', async (body, field) => {
    const res = await api('POST', '/api/public/unstable/dashboards', body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_body', message: expect.stringMatching(field) });
  });

  it("answers 404 for another project's dashboards and widgets, and never lists them", async () => {
    const widget = (await api('POST', '/api/public/unstable/dashboard-widgets', costWidget, other)).body;
    const dash = (await api('POST', '/api/public/unstable/dashboards', { name: 'theirs' }, other)).body;
    for (const [method, path, body] of [
      ['GET', `/api/public/unstable/dashboards/${dash['id']}`],
      ['PATCH', `/api/public/unstable/dashboards/${dash['id']}`, { name: 'mine' }],
      ['DELETE', `/api/public/unstable/dashboards/${dash['id']}`],
      [
        'POST',
        `/api/public/unstable/dashboards/${dash['id']}/placements`,
        { type: 'preset', presetId: 'total-cost' },
      ],
      ['GET', `/api/public/unstable/dashboard-widgets/${widget['id']}`],
      ['PATCH', `/api/public/unstable/dashboard-widgets/${widget['id']}`, { name: 'mine' }],
      ['DELETE', `/api/public/unstable/dashboard-widgets/${widget['id']}`],
    ] as const) {
      expect((await api(method, path, body)).status, `${method} ${path}`).toBe(404);
    }
    // Nor may one of ours place their widget.
    const ours = (await api('POST', '/api/public/unstable/dashboards', { name: 'ours' })).body;
    const place = await api('POST', `/api/public/unstable/dashboards/${ours['id']}/placements`, {
      type: 'widget',
      widgetId: widget['id'],
    });
    expect(place.status).toBe(404);
    expect(place.body['code']).toBe('resource_not_found');
    expect(place.body['message']).toMatch(/widgetId/);
    const lists = await Promise.all([
      api('GET', '/api/public/unstable/dashboards'),
      api('GET', '/api/public/unstable/dashboard-widgets'),
    ]);
    const ids = lists.flatMap((l) => l.body['data'].map((r: Row) => r['id']));
    expect(ids).not.toContain(dash['id']);
    expect(ids).not.toContain(widget['id']);
    expect((await api('GET', `/api/public/unstable/dashboards/${dash['id']}`, undefined, other)).status).toBe(
      200,
    );
  });
});

/** The rows of a tile and of the public API for the tile's query, in the API's order. */
async function tileAndApi(b: Browser, dashboardId: string, placementId: string, body: Row = range) {
  const tile = await ui(b, 'POST', `/dashboards/${dashboardId}/widgets/${placementId}/data`, body);
  expect(tile.status, JSON.stringify(tile.body)).toBe(200);
  const direct = await metricsV2(tile.body['query']);
  expect(direct.status, JSON.stringify(direct.body)).toBe(200);
  return { tile: tile.body, direct: direct.body };
}

describe('widget data equals Metrics API v2', () => {
  it.each(Object.keys(PRESETS))(
    'home tile %s: the same rows as GET /api/public/v2/metrics',
    async (presetId) => {
      const preset = PRESETS[presetId] as WidgetDefinition;
      const { tile, direct } = await tileAndApi(viewer, 'home', presetId);
      expect(tile['query']).toEqual(widgetQuery(preset, [], range));
      expect(tile['data']).toEqual(direct['data']);
      expect(tile['data'].length).toBeGreaterThan(0);
    },
  );

  it('the GenAI metrics tiles show what the app sent, beside the trace-derived figures', async () => {
    const tokens = (await tileAndApi(viewer, 'home', 'genai-metric-tokens')).tile['data'];
    expect(tokens).toEqual([
      { model: 'gpt-4o-mini', sum_value: 390 },
      { model: 'gpt-4o', sum_value: 50 },
    ]);
    const duration = (await tileAndApi(viewer, 'home', 'genai-metric-duration')).tile['data'];
    expect(duration).toEqual([
      { model: 'gpt-4o-mini', sum_value: 2.5, sum_measurements: 3, max_max: null },
      { model: 'gpt-4o', sum_value: 1.25, sum_measurements: 1, max_max: null },
    ]);
  });

  it('the seeded data shows where it should (top users, errors, models)', async () => {
    const users = (await tileAndApi(viewer, 'home', 'top-users')).tile['data'];
    expect(users.map((r: Row) => r['userId']).sort()).toEqual(['user-0', 'user-1', 'user-2', 'user-3']);
    expect(users.reduce((n: number, r: Row) => n + r['count_count'], 0)).toBe(120);
    const traces = (await tileAndApi(viewer, 'home', 'total-traces')).tile['data'];
    expect(traces).toEqual([{ count_count: 60 }]);
    const levels = (await tileAndApi(viewer, 'home', 'levels-over-time')).tile['data'];
    expect(
      levels
        .filter((r: Row) => r['level'] === 'ERROR')
        .reduce((n: number, r: Row) => n + r['count_count'], 0),
    ).toBe(10);
    const sessions = (await tileAndApi(viewer, 'home', 'top-sessions')).tile['data'];
    expect(sessions).toHaveLength(7);
  });

  it("applies the page's filters to every tile, as the API's query filters", async () => {
    const staging: FilterCondition = {
      column: 'environment',
      type: 'string',
      operator: '=',
      value: 'staging',
    };
    const { tile, direct } = await tileAndApi(viewer, 'home', 'total-traces', {
      ...range,
      filters: [staging],
    });
    expect(tile['query']['filters']).toContainEqual(staging);
    expect(tile['data']).toEqual(direct['data']);
    expect(tile['data']).toEqual([{ count_count: 20 }]);
  });

  it("a custom dashboard's tiles carry its saved filters, equal to the API", async () => {
    const widget = (
      await ui(member, 'POST', '/dashboard-widgets', {
        ...costWidget,
        name: 'Tokens by user',
        dimensions: [{ field: 'userId' }],
        metrics: [{ measure: 'totalTokens', agg: 'sum' }],
        chartType: 'VERTICAL_BAR',
        chartConfig: { row_limit: 10 },
      })
    ).body;
    expect(widget['id']).toEqual(expect.any(String));
    const dash = (
      await ui(member, 'POST', '/dashboards', {
        name: 'Prod tokens',
        filters: [{ column: 'environment', type: 'string', operator: '=', value: 'prod' }],
        definition: {
          widgets: [
            { type: 'widget', id: 'tokens', widgetId: widget['id'], x: 0, y: 0, width: 6, height: 6 },
            { type: 'preset', id: 'scores', presetId: 'scores-over-time', x: 6, y: 0, width: 6, height: 6 },
          ],
        },
      })
    ).body;
    const view = await ui(viewer, 'GET', `/dashboards/${dash['id']}/view`);
    expect(view.body['widgets']['tokens']).toMatchObject({ name: 'Tokens by user' });
    const tokens = await tileAndApi(viewer, dash['id'], 'tokens');
    expect(tokens.tile['query']['filters']).toEqual([dash['filters'][0]]);
    expect(tokens.tile['data']).toEqual(tokens.direct['data']);
    expect(tokens.tile['data']).toHaveLength(4);
    // The scores view has an environment column too: the dashboard filter applies there as well.
    const scores = await tileAndApi(viewer, dash['id'], 'scores');
    expect(scores.tile['data']).toEqual(scores.direct['data']);
  });

  it("the editor's preview runs an unsaved widget like the API", async () => {
    const res = await ui(viewer, 'POST', '/dashboard-widgets/preview', { ...range, widget: costWidget });
    expect(res.status).toBe(200);
    expect(res.body['data']).toEqual((await metricsV2(res.body['query'])).body['data']);
    // Spans without a model form their own group, as in the API.
    expect(res.body['data'].map((r: Row) => r['providedModelName']).sort()).toEqual([
      '',
      'gpt-4o',
      'gpt-4o-mini',
    ]);
    const bad = await ui(viewer, 'POST', '/dashboard-widgets/preview', {
      ...range,
      widget: { ...costWidget, dimensions: [{ field: 'nope' }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body['error']).toMatch(/dimensions\.0\.field/);
  });
});

describe('the UI routes', () => {
  it('serve the home dashboard, and writes to members, not viewers', async () => {
    const home = await ui(viewer, 'GET', '/dashboards/home/view');
    expect(home.body['dashboard']).toEqual(HOME_DASHBOARD);
    expect(Object.keys(home.body['widgets'])).toEqual(Object.keys(PRESETS));
    const refused = await ui(viewer, 'POST', '/dashboards', { name: 'nope' });
    expect(refused.status).toBe(403);
    const made = await ui(member, 'POST', '/dashboards', { name: 'mine' });
    expect(made.status).toBe(200);
    expect((await ui(viewer, 'GET', '/dashboards')).body['data'].map((d: Row) => d['id'])).toContain(
      made.body['id'],
    );
    expect((await ui(member, 'POST', '/dashboards/home/widgets/nope/data', range)).status).toBe(404);
  });

  it("answer 404 for another project's dashboard through this project's path", async () => {
    const theirs = (await api('POST', '/api/public/unstable/dashboards', { name: 'theirs' }, other)).body;
    expect((await ui(viewer, 'GET', `/dashboards/${theirs['id']}/view`)).status).toBe(404);
    expect((await ui(viewer, 'GET', `/dashboards/${theirs['id']}`)).status).toBe(404);
  });
});
