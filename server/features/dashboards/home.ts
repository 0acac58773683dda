/**
 * The project home dashboard: built in, not stored, the same for every project. Its widgets are
 * also the presets a custom dashboard may place (`{type: 'preset', presetId}`). Pure data.
 */
import type { FilterCondition } from '../reads/filters.ts';
import type { ChartConfig, Dashboard, Placement, WidgetDefinition } from './model.ts';

const ROOT: FilterCondition = { column: 'isRootObservation', type: 'boolean', operator: '=', value: true };
const notEmpty = (column: string): FilterCondition => ({
  column,
  type: 'null',
  operator: 'is not null',
  value: '',
});

const metricNamed = (name: string): FilterCondition => ({
  column: 'metricName',
  type: 'string',
  operator: '=',
  value: name,
});

type PresetInput = Omit<WidgetDefinition, 'description' | 'chartConfig'> & {
  description?: string;
  chartConfig?: Omit<ChartConfig, 'type'>;
};
const widget = (w: PresetInput): WidgetDefinition => ({
  description: w.description ?? '',
  name: w.name,
  view: w.view,
  dimensions: w.dimensions,
  metrics: w.metrics,
  filters: w.filters,
  chartType: w.chartType,
  chartConfig: { type: w.chartType, ...w.chartConfig },
});

/** The `limit` values of `field` that rank first (observations without one left out), labelled. */
const topBy = (field: string, limit: number) => ({
  dimensions: [{ field }],
  filters: [notEmpty(field)],
  chartConfig: { row_limit: limit, show_value_labels: true },
});

/** Preset id -> widget; the order is the home dashboard's. */
export const PRESETS: Record<string, WidgetDefinition> = {
  'total-traces': widget({
    name: 'Traces',
    description: 'Traces started in the range (root observations).',
    view: 'observations',
    dimensions: [],
    metrics: [{ measure: 'count', agg: 'count' }],
    filters: [ROOT],
    chartType: 'NUMBER',
  }),
  'total-cost': widget({
    name: 'Total cost',
    description: 'Cost of every observation in the range.',
    view: 'observations',
    dimensions: [],
    metrics: [{ measure: 'totalCost', agg: 'sum' }],
    filters: [],
    chartType: 'NUMBER',
  }),
  'traces-over-time': widget({
    name: 'Traces over time',
    view: 'observations',
    dimensions: [],
    metrics: [{ measure: 'count', agg: 'count' }],
    filters: [ROOT],
    chartType: 'LINE_TIME_SERIES',
  }),
  'observations-over-time': widget({
    name: 'Observations by type over time',
    view: 'observations',
    dimensions: [{ field: 'type' }],
    metrics: [{ measure: 'count', agg: 'count' }],
    filters: [],
    chartType: 'BAR_TIME_SERIES',
  }),
  'cost-by-model': widget({
    name: 'Cost by model',
    view: 'observations',
    ...topBy('providedModelName', 20),
    metrics: [{ measure: 'totalCost', agg: 'sum' }],
    chartType: 'HORIZONTAL_BAR',
  }),
  'tokens-by-model': widget({
    name: 'Tokens by model',
    view: 'observations',
    ...topBy('providedModelName', 20),
    metrics: [
      { measure: 'inputTokens', agg: 'sum' },
      { measure: 'outputTokens', agg: 'sum' },
    ],
    chartType: 'VERTICAL_BAR',
  }),
  'latency-percentiles': widget({
    name: 'Latency percentiles by observation name (ms)',
    view: 'observations',
    dimensions: [{ field: 'name' }],
    metrics: [
      { measure: 'latency', agg: 'p50' },
      { measure: 'latency', agg: 'p90' },
      { measure: 'latency', agg: 'p95' },
      { measure: 'latency', agg: 'p99' },
    ],
    filters: [],
    chartType: 'PIVOT_TABLE',
    chartConfig: {
      row_limit: 20,
      defaultSort: { column: 'p95_latency', order: 'DESC' },
    },
  }),
  'levels-over-time': widget({
    name: 'Observations by level over time',
    view: 'observations',
    dimensions: [{ field: 'level' }],
    metrics: [{ measure: 'count', agg: 'count' }],
    filters: [],
    chartType: 'BAR_TIME_SERIES',
  }),
  // Beside the trace-derived figures: what the apps' own OTel GenAI metrics say (genai-metrics view).
  'genai-metric-tokens': widget({
    name: 'Tokens by model (OTel GenAI metrics)',
    description: 'Sum of gen_ai.client.token.usage sent to /api/public/otel/v1/metrics, by model.',
    view: 'genai-metrics',
    ...topBy('model', 20),
    filters: [metricNamed('gen_ai.client.token.usage')],
    metrics: [{ measure: 'value', agg: 'sum' }],
    chartType: 'HORIZONTAL_BAR',
  }),
  'genai-metric-duration': widget({
    name: 'Operation duration by model (OTel GenAI metrics)',
    description:
      'gen_ai.client.operation.duration by model: seconds in all, operations measured, the longest.',
    view: 'genai-metrics',
    dimensions: [{ field: 'model' }],
    metrics: [
      { measure: 'value', agg: 'sum' },
      { measure: 'measurements', agg: 'sum' },
      { measure: 'max', agg: 'max' },
    ],
    filters: [metricNamed('gen_ai.client.operation.duration')],
    chartType: 'PIVOT_TABLE',
    chartConfig: { row_limit: 20, defaultSort: { column: 'sum_value', order: 'DESC' } },
  }),
  'scores-over-time': widget({
    name: 'Average scores over time',
    view: 'scores-numeric',
    dimensions: [{ field: 'name' }],
    metrics: [{ measure: 'value', agg: 'avg' }],
    filters: [],
    chartType: 'LINE_TIME_SERIES',
  }),
  'top-users': widget({
    name: 'Top users by cost',
    view: 'observations',
    ...topBy('userId', 10),
    metrics: [
      { measure: 'totalCost', agg: 'sum' },
      { measure: 'count', agg: 'count' },
    ],
    chartType: 'HORIZONTAL_BAR',
  }),
  'top-sessions': widget({
    name: 'Top sessions by observations',
    view: 'observations',
    ...topBy('sessionId', 10),
    metrics: [{ measure: 'count', agg: 'count' }],
    chartType: 'HORIZONTAL_BAR',
  }),
};

export const HOME_DASHBOARD_ID = 'home';

/** Two tiles per row: numbers short, charts tall. */
function homeLayout(): Placement[] {
  const out: Placement[] = [];
  let x = 0;
  let y = 0;
  for (const [presetId, w] of Object.entries(PRESETS)) {
    const size = w.chartType === 'NUMBER' ? { width: 6, height: 2 } : { width: 6, height: 6 };
    out.push({ type: 'preset', id: presetId, presetId, x, y, ...size });
    x += size.width;
    if (x >= 12) {
      x = 0;
      y += size.height;
    }
  }
  return out;
}

export const HOME_DASHBOARD: Dashboard = {
  id: HOME_DASHBOARD_ID,
  createdAt: '1970-01-01T00:00:00.000Z',
  updatedAt: '1970-01-01T00:00:00.000Z',
  name: 'Home',
  description:
    'Built-in overview of the project: volume, cost, tokens, latency, levels, the OTel GenAI metrics, scores, users and sessions.',
  definition: { widgets: homeLayout() },
  filters: [],
  defaultTimeRange: '24h',
};
