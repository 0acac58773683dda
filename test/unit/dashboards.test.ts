import { describe, expect, it } from 'vitest';
import { HOME_DASHBOARD, PRESETS } from '../../server/features/dashboards/home.ts';
import {
  chartConfigFor,
  filtersFor,
  placeNew,
  rangeOf,
  type WidgetDefinition,
  widgetProblem,
  widgetQuery,
} from '../../server/features/dashboards/model.ts';
import type { FilterCondition } from '../../server/features/reads/filters.ts';
import { buildMetrics } from '../../server/features/reads/metrics.ts';
import { METRICS_V2_VIEWS } from '../../server/features/reads/metrics-views.ts';

const range = { fromTimestamp: '2026-11-01T00:00:00.000Z', toTimestamp: '2026-11-02T00:00:00.000Z' };
const prod: FilterCondition = { column: 'environment', type: 'string', operator: '=', value: 'prod' };
const byUser: FilterCondition = { column: 'userId', type: 'string', operator: '=', value: 'u1' };
const byScoreName: FilterCondition = { column: 'name', type: 'string', operator: '=', value: 'accuracy' };

const w = (over: Partial<WidgetDefinition>): WidgetDefinition => ({
  name: 'w',
  description: '',
  view: 'observations',
  dimensions: [],
  metrics: [{ measure: 'count', agg: 'count' }],
  filters: [],
  chartType: 'NUMBER',
  chartConfig: { type: over.chartType ?? 'NUMBER' },
  ...over,
});

describe('widget -> Metrics v2 query', () => {
  it.each([
    [
      'a number: no time bucket, no config',
      w({}),
      [],
      { timeDimension: null, filters: [], orderBy: null, config: undefined },
    ],
    [
      'a time series: auto buckets and a row limit for every series',
      w({ chartType: 'LINE_TIME_SERIES', chartConfig: { type: 'LINE_TIME_SERIES', row_limit: 5 } }),
      [],
      { timeDimension: { granularity: 'auto' }, config: { row_limit: 1000 } },
    ],
    [
      "the dashboard's filters after the widget's own",
      w({ filters: [byUser] }),
      [prod],
      { filters: [byUser, prod] },
    ],
    [
      'a bar chart keeps its row limit and sort',
      w({
        chartType: 'HORIZONTAL_BAR',
        dimensions: [{ field: 'name' }],
        chartConfig: {
          type: 'HORIZONTAL_BAR',
          row_limit: 7,
          defaultSort: { column: 'count_count', order: 'ASC' },
        },
      }),
      [],
      { config: { row_limit: 7 }, orderBy: [{ field: 'count_count', direction: 'asc' }] },
    ],
    [
      'a histogram keeps its bins',
      w({
        chartType: 'HISTOGRAM',
        metrics: [{ measure: 'latency', agg: 'histogram' }],
        chartConfig: { type: 'HISTOGRAM', bins: 20 },
      }),
      [],
      { config: { bins: 20 }, metrics: [{ measure: 'latency', aggregation: 'histogram' }] },
    ],
    [
      'a scores widget drops dashboard filters its view cannot apply',
      w({ view: 'scores-numeric', metrics: [{ measure: 'value', agg: 'avg' }] }),
      [byUser, byScoreName, prod],
      { view: 'scores-numeric', filters: [byScoreName, prod] },
    ],
  ])('%s', (_name, widget, dashboardFilters, expected) => {
    const q = widgetQuery(widget, dashboardFilters, range);
    expect(q).toMatchObject({ ...range, view: widget.view, dimensions: widget.dimensions });
    for (const [k, v] of Object.entries(expected)) expect(q[k as keyof typeof q]).toEqual(v);
  });

  it.each([
    ['observations', [prod, byUser], [prod, byUser]],
    ['scores-categorical', [prod, byUser], [prod]],
    ['nope', [prod], []],
  ])('filtersFor(%s)', (view, filters, kept) => {
    expect(filtersFor(view, filters)).toEqual(kept);
  });
});

describe('widget checks', () => {
  it.each([
    ['LINE_TIME_SERIES', undefined, { type: 'LINE_TIME_SERIES' }],
    ['PIE', { row_limit: 3 }, { type: 'PIE', row_limit: 3 }],
    ['PIE', { type: 'PIE' as const }, { type: 'PIE' }],
    ['PIE', { type: 'NUMBER' as const }, 'chartConfig.type: NUMBER does not match chartType PIE'],
  ] as const)('chartConfigFor(%s, %j)', (type, input, out) => {
    expect(chartConfigFor(type, input)).toEqual(out);
  });

  it.each([
    [w({}), undefined],
    [
      w({ dimensions: [{ field: 'nope' }] }),
      'dimensions.0.field: unknown dimension nope for view observations',
    ],
    [
      w({ metrics: [{ measure: 'value', agg: 'avg' }] }),
      'metrics.0.measure: unknown measure value for view observations',
    ],
    [w({ dimensions: [{ field: 'userId' }] }), /chartConfig.row_limit: required to group by userId/],
    [w({ dimensions: [{ field: 'userId' }], chartConfig: { type: 'NUMBER', row_limit: 10 } }), undefined],
    [w({ dimensions: [{ field: 'userId' }], chartType: 'BAR_TIME_SERIES' }), undefined],
    [w({ view: 'scores-categorical', metrics: [{ measure: 'value', agg: 'avg' }] }), /metrics.0.measure/],
  ])('widgetProblem #%#', (widget, problem) => {
    const got = widgetProblem(widget);
    if (problem instanceof RegExp) expect(got).toMatch(problem);
    else expect(got).toBe(problem);
  });
});

describe('placements', () => {
  const tile = { type: 'preset' as const, presetId: 'total-cost', x: 0, y: 0, width: 6, height: 4 };
  it.each([
    [
      'an empty dashboard: top left, 6x6',
      [],
      { type: 'widget', widgetId: 'w' },
      { id: 'gen', x: 0, y: 0, width: 6, height: 6 },
    ],
    [
      'below the lowest tile',
      [
        { ...tile, id: 'a' },
        { ...tile, id: 'b', y: 4, height: 3 },
      ],
      { type: 'widget', widgetId: 'w' },
      { y: 7 },
    ],
    [
      'given position and id kept',
      [{ ...tile, id: 'a' }],
      { type: 'preset', presetId: 'p', id: 'mine', x: 6, y: 0, width: 3 },
      { id: 'mine', x: 6, y: 0, width: 3, height: 6, presetId: 'p' },
    ],
  ] as const)('%s', (_name, existing, req, expected) => {
    expect(placeNew([...existing], { ...req }, 'gen')).toMatchObject(expected);
  });
});

describe('the home dashboard', () => {
  it('places every preset once, on the 12-column grid, without overlap', () => {
    const tiles = HOME_DASHBOARD.definition.widgets;
    expect(tiles.map((t) => (t.type === 'preset' ? t.presetId : ''))).toEqual(Object.keys(PRESETS));
    const cells = new Set<string>();
    for (const t of tiles) {
      expect(t.x + t.width).toBeLessThanOrEqual(12);
      for (let x = t.x; x < t.x + t.width; x++)
        for (let y = t.y; y < t.y + t.height; y++) {
          expect(cells.has(`${x},${y}`)).toBe(false);
          cells.add(`${x},${y}`);
        }
    }
  });

  it.each(Object.entries(PRESETS))(
    '%s passes the checks and compiles with dashboard filters',
    (_id, preset) => {
      expect(widgetProblem(preset)).toBeUndefined();
      const q = widgetQuery(preset, [prod], range);
      const built = buildMetrics(METRICS_V2_VIEWS[preset.view]!, 'p', q);
      expect(built.sql).toContain('environment');
    },
  );

  it('covers what the issue names: volume, cost, tokens, latency percentiles, levels, scores, users, sessions', () => {
    const fields = Object.values(PRESETS).flatMap((p) => [
      ...p.dimensions.map((d) => d.field),
      ...p.metrics.map((m) => `${m.agg}_${m.measure}`),
      p.view,
    ]);
    for (const f of [
      'count_count',
      'sum_totalCost',
      'sum_inputTokens',
      'p95_latency',
      'level',
      'scores-numeric',
      'userId',
      'sessionId',
      'providedModelName',
    ])
      expect(fields).toContain(f);
  });
});

describe('ranges', () => {
  it.each([
    ['1h', '2026-11-02T11:00:00.000Z'],
    ['24h', '2026-11-01T12:00:00.000Z'],
    ['7d', '2026-10-26T12:00:00.000Z'],
  ] as const)('%s', (preset, from) => {
    expect(rangeOf(preset, new Date('2026-11-02T12:00:00.000Z'))).toEqual({
      fromTimestamp: from,
      toTimestamp: '2026-11-02T12:00:00.000Z',
    });
  });
});

describe('top-N by an id in the compiler', () => {
  it('groups by userId with a row limit and refuses without one', () => {
    const q = widgetQuery(
      w({
        dimensions: [{ field: 'userId' }],
        chartType: 'HORIZONTAL_BAR',
        chartConfig: { type: 'HORIZONTAL_BAR', row_limit: 10 },
      }),
      [],
      range,
    );
    expect(buildMetrics(METRICS_V2_VIEWS['observations']!, 'p', q).sql).toContain('user_id AS d0');
    expect(() => buildMetrics(METRICS_V2_VIEWS['observations']!, 'p', { ...q, config: {} })).toThrow(
      /too many distinct values/,
    );
  });
});
