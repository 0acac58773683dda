/**
 * Dashboards and their widgets, in the reference's unstable API shapes (`/api/public/unstable/
 * dashboards`, `/dashboard-widgets`), and how a widget becomes a Metrics v2 query: the widget's
 * own query with the dashboard's time range and the dashboard filters its view knows. The query
 * is then compiled by the Metrics v2 compiler (../reads/metrics.ts), so a widget and
 * `GET /api/public/v2/metrics` cannot disagree. Pure.
 */
import { z } from 'zod';
import { AGGREGATIONS, type Aggregation } from '../reads/aggregations.ts';
import { type FilterCondition, filterCondition } from '../reads/filters.ts';
import { own } from '../reads/lookup.ts';
import type { MetricsQuery } from '../reads/metrics.ts';
import { METRICS_V2_VIEWS } from '../reads/metrics-views.ts';
import { CHART_TYPES } from './catalog.ts';

export type ChartType = (typeof CHART_TYPES)[number];

/** A change: any of the fields of `fields`, at least one (`message` when none). */
const someOf = <Shape extends z.ZodRawShape>(fields: z.ZodObject<Shape>, message: string) =>
  fields.partial().refine((v) => Object.keys(v).length > 0, message);

/** Charts drawn over time: their query groups by a time bucket. */
export const TIME_SERIES: ReadonlySet<ChartType> = new Set([
  'LINE_TIME_SERIES',
  'AREA_TIME_SERIES',
  'BAR_TIME_SERIES',
]);

/** The views a widget may read; the reference's legacy `traces` view is not served. */
export const WIDGET_VIEWS = [
  'observations',
  'genai-metrics',
  'scores-numeric',
  'scores-categorical',
] as const;

/** Time-series rows: up to ~50 buckets times the series of a dimension. */
const TIME_SERIES_ROW_LIMIT = 1000;

export const TIME_RANGES = ['1h', '24h', '7d', '30d', '90d'] as const;
export type TimeRange = (typeof TIME_RANGES)[number];
const RANGE_MS: Record<TimeRange, number> = {
  '1h': 3_600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
  '90d': 90 * 86_400_000,
};

/** The absolute range a preset means when read at `now`. */
export function rangeOf(preset: TimeRange, now: Date): { fromTimestamp: string; toTimestamp: string } {
  return {
    fromTimestamp: new Date(now.getTime() - RANGE_MS[preset]).toISOString(),
    toTimestamp: now.toISOString(),
  };
}

const sortOrder = z.object({ column: z.string().min(1), order: z.enum(['ASC', 'DESC']) });
const chartConfigInput = z.object({
  type: z.enum(CHART_TYPES).optional(),
  row_limit: z.number().int().min(1).max(1000).optional(),
  show_value_labels: z.boolean().optional(),
  bins: z.number().int().min(1).max(100).optional(),
  defaultSort: sortOrder.optional(),
});
export type ChartConfig = z.infer<typeof chartConfigInput> & { type: ChartType };

const dimension = z.object({ field: z.string().min(1) });
const metric = z.object({ measure: z.string().min(1), agg: z.enum(AGGREGATIONS) });

export const createWidgetRequest = z.object({
  name: z.string().min(1).max(200),
  description: z.string().max(2000).optional(),
  view: z.enum(WIDGET_VIEWS),
  dimensions: z.array(dimension).max(2),
  metrics: z.array(metric).min(1).max(10),
  filters: z.array(filterCondition).max(50),
  chartType: z.enum(CHART_TYPES),
  chartConfig: chartConfigInput.optional(),
});
export const updateWidgetRequest = someOf(createWidgetRequest, 'at least one field is required');
export type CreateWidget = z.infer<typeof createWidgetRequest>;
export type UpdateWidget = z.infer<typeof updateWidgetRequest>;

/** What a widget draws, stored or built in. */
export interface WidgetDefinition {
  name: string;
  description: string;
  view: (typeof WIDGET_VIEWS)[number];
  dimensions: { field: string }[];
  metrics: { measure: string; agg: Aggregation }[];
  filters: FilterCondition[];
  chartType: ChartType;
  chartConfig: ChartConfig;
}
export interface Widget extends WidgetDefinition {
  id: string;
  createdAt: string;
  updatedAt: string;
}

const placementFields = {
  x: z.number().int().min(0).max(11),
  y: z.number().int().min(0).max(10_000),
  width: z.number().int().min(1).max(12),
  height: z.number().int().min(1).max(100),
};
export const placement = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('widget'),
    id: z.string().min(1),
    widgetId: z.string().min(1),
    ...placementFields,
  }),
  z.object({
    type: z.literal('preset'),
    id: z.string().min(1),
    presetId: z.string().min(1),
    ...placementFields,
  }),
]);
export type Placement = z.infer<typeof placement>;

const optionalPlacement = {
  id: z.string().min(1).max(200).optional(),
  x: placementFields.x.optional(),
  y: placementFields.y.optional(),
  width: placementFields.width.optional(),
  height: placementFields.height.optional(),
};
export const createPlacementRequest = z.discriminatedUnion('type', [
  z.object({ type: z.literal('widget'), widgetId: z.string().min(1), ...optionalPlacement }),
  z.object({ type: z.literal('preset'), presetId: z.string().min(1), ...optionalPlacement }),
]);
export type CreatePlacement = z.infer<typeof createPlacementRequest>;

/** A move or resize: the fields given change, the rest (and the tile's content and id) stay. */
export const updatePlacementRequest = someOf(
  z.strictObject(placementFields),
  'At least one of x, y, width, height is required',
);
export type UpdatePlacement = z.infer<typeof updatePlacementRequest>;

const definition = z.object({ widgets: z.array(placement).max(100) });
const dashboardFields = {
  name: z.string().min(1).max(200),
  description: z.string().max(2000).optional(),
  definition: definition.optional(),
  filters: z.array(filterCondition).max(50).optional(),
  /** Not in the reference: the range a dashboard opens with. */
  defaultTimeRange: z.enum(TIME_RANGES).optional(),
};
export const createDashboardRequest = z.object(dashboardFields);
export const updateDashboardRequest = someOf(z.object(dashboardFields), 'At least one field is required');
export type CreateDashboard = z.infer<typeof createDashboardRequest>;
export type UpdateDashboard = z.infer<typeof updateDashboardRequest>;

export interface Dashboard {
  id: string;
  createdAt: string;
  updatedAt: string;
  name: string;
  description: string;
  definition: { widgets: Placement[] };
  filters: FilterCondition[];
  defaultTimeRange: TimeRange;
}

/** The widget's config with `type` filled in, or a message naming the mismatch. */
export function chartConfigFor(
  chartType: ChartType,
  input: z.infer<typeof chartConfigInput> | undefined,
): ChartConfig | string {
  if (input?.type && input.type !== chartType) {
    return `chartConfig.type: ${input.type} does not match chartType ${chartType}`;
  }
  return { ...input, type: chartType };
}

/**
 * Why a widget's query cannot run, naming the field, or undefined. Checked on write so that a
 * stored widget always compiles; the compiler checks again on every read.
 */
export function widgetProblem(
  w: Pick<WidgetDefinition, 'view' | 'dimensions' | 'metrics' | 'chartType' | 'chartConfig'>,
): string | undefined {
  const view = own(METRICS_V2_VIEWS, w.view);
  if (!view) return `view: unknown view ${w.view}`;
  for (const [i, d] of w.dimensions.entries()) {
    if (own(view.dimensions, d.field) !== undefined) continue;
    if (own(view.highCardinalityDimensions ?? {}, d.field) === undefined) {
      return `dimensions.${i}.field: unknown dimension ${d.field} for view ${w.view}`;
    }
    if (!TIME_SERIES.has(w.chartType) && w.chartConfig.row_limit === undefined) {
      return `chartConfig.row_limit: required to group by ${d.field} (a top-N of many distinct values)`;
    }
  }
  for (const [i, m] of w.metrics.entries()) {
    if (own(view.measures, m.measure) === undefined) {
      return `metrics.${i}.measure: unknown measure ${m.measure} for view ${w.view}`;
    }
  }
  return undefined;
}

/** The dashboard filters that apply to a view: those naming a column the view can filter on. */
export function filtersFor(view: string, filters: FilterCondition[]): FilterCondition[] {
  const columns = own(METRICS_V2_VIEWS, view)?.filters;
  return columns ? filters.filter((f) => own(columns, f.column) !== undefined) : [];
}

/**
 * The Metrics v2 query of a widget over a range, with the dashboard's filters AND-ed to its own.
 * Time series group by an automatic time bucket; other charts keep their row limit and bins.
 */
export function widgetQuery(
  w: WidgetDefinition,
  dashboardFilters: FilterCondition[],
  range: { fromTimestamp: string; toTimestamp: string },
): MetricsQuery {
  const timeSeries = TIME_SERIES.has(w.chartType);
  const rowLimit = timeSeries ? TIME_SERIES_ROW_LIMIT : w.chartConfig.row_limit;
  const config = {
    ...(rowLimit !== undefined ? { row_limit: rowLimit } : {}),
    ...(w.chartConfig.bins !== undefined ? { bins: w.chartConfig.bins } : {}),
  };
  const sort = w.chartConfig.defaultSort;
  return {
    view: w.view,
    dimensions: w.dimensions,
    metrics: w.metrics.map((m) => ({ measure: m.measure, aggregation: m.agg })),
    filters: [...w.filters, ...filtersFor(w.view, dashboardFilters)],
    timeDimension: timeSeries ? { granularity: 'auto' } : null,
    fromTimestamp: range.fromTimestamp,
    toTimestamp: range.toTimestamp,
    orderBy: sort ? [{ field: sort.column, direction: sort.order === 'ASC' ? 'asc' : 'desc' }] : null,
    ...(Object.keys(config).length > 0 ? { config } : {}),
  };
}

/** Where a new tile goes when the request leaves it out: below every tile, 6x6 (the reference's). */
export function placeNew(existing: Placement[], req: CreatePlacement, id: string): Placement {
  const below = existing.reduce((max, p) => Math.max(max, p.y + p.height), 0);
  const pos = {
    id: req.id ?? id,
    x: req.x ?? 0,
    y: req.y ?? below,
    width: req.width ?? 6,
    height: req.height ?? 6,
  };
  return req.type === 'widget'
    ? { type: 'widget', widgetId: req.widgetId, ...pos }
    : { type: 'preset', presetId: req.presetId, ...pos };
}
