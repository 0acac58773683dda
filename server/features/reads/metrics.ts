/**
 * The metrics query language (`?query={view, dimensions, metrics, filters, timeDimension, ...}`)
 * compiled over a view definition: a table plus fixed maps from API names to SQL expressions.
 * Metrics API v2 and the legacy v1 endpoint differ only in their views (metrics-views.ts).
 * Output keys follow the reference: dimension field names, `time_dimension`,
 * `<aggregation>_<measure>`. Pure.
 */
import { z } from 'zod';
import { BadRequest } from '../../kernel/errors.ts';
import { isoDateTime, parseIsoDateTime } from '../../kernel/iso-datetime.ts';
import { AGGREGATIONS, type Aggregation } from './aggregations.ts';
import {
  type ColumnTable,
  type CompileContext,
  compileFilters,
  filterList,
  parseJsonParam,
} from './filters.ts';
import { own } from './lookup.ts';
import { toIso } from './row-values.ts';
import { Params, type Query, Where } from './sql.ts';

export const GRANULARITIES = ['auto', 'minute', 'hour', 'day', 'week', 'month'] as const;
type Granularity = (typeof GRANULARITIES)[number];

const isoDate = isoDateTime();

export const metricsQuerySchema = z.object({
  view: z.string(),
  dimensions: z
    .array(z.object({ field: z.string() }))
    .optional()
    .default([]),
  metrics: z.array(z.object({ measure: z.string(), aggregation: z.enum(AGGREGATIONS) })).min(1),
  filters: filterList.optional().default([]),
  timeDimension: z.object({ granularity: z.enum(GRANULARITIES) }).nullish(),
  fromTimestamp: isoDate,
  toTimestamp: isoDate,
  orderBy: z.array(z.object({ field: z.string(), direction: z.enum(['asc', 'desc']) })).nullish(),
  config: z
    .object({
      bins: z.number().int().min(1).max(100).optional(),
      row_limit: z.number().int().min(1).max(1000).optional(),
    })
    .optional(),
});
export type MetricsQuery = z.infer<typeof metricsQuerySchema>;

export interface MetricsView {
  table: string;
  /** Replacing tables are read FINAL so re-sent rows count once. */
  final: boolean;
  timeColumn: string;
  /** Conditions every row of the view satisfies (e.g. a score data type). */
  where?: string[];
  dimensions: Record<string, string>;
  /** Dimensions refused as group-bys (too many distinct values) unless the query sets a row limit. */
  highCardinality: string[];
  /** The SQL of those that a top-N query may group by. */
  highCardinalityDimensions?: Record<string, string>;
  /** Per-row value of each measure; `count` counts rows. */
  measures: Record<string, string>;
  filters: ColumnTable;
}

/** Parses `?query=` text; malformed JSON or shape is a 400. */
export function parseMetricsQuery(text: string): MetricsQuery {
  return parseJsonParam('query', text, metricsQuerySchema);
}

const INTERVAL: Record<Exclude<Granularity, 'auto'>, string> = {
  minute: 'toStartOfMinute',
  hour: 'toStartOfHour',
  day: 'toStartOfDay',
  week: 'toMonday',
  month: 'toStartOfMonth',
};
const SPAN_MS: Record<Exclude<Granularity, 'auto'>, number> = {
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 7 * 86_400_000,
  month: 30 * 86_400_000,
};

/** `auto`: the finest granularity giving at most about 50 buckets over the range. */
export function autoGranularity(fromIso: string, toIso: string): Exclude<Granularity, 'auto'> {
  const range = Date.parse(toIso) - Date.parse(fromIso);
  for (const g of ['minute', 'hour', 'day', 'week'] as const) if (range / SPAN_MS[g] <= 50) return g;
  return 'month';
}

function aggregate(agg: Aggregation, expr: string, isCount: boolean, p: Params, bins: number): string {
  if (agg === 'count') return isCount ? 'count()' : `count(${expr})`;
  if (agg === 'histogram') return `histogram(${p.add(bins, 'UInt32')})(toFloat64(${expr}))`;
  if (agg.startsWith('p')) return `quantile(${Number(agg.slice(1)) / 100})(${expr})`;
  return `${agg}(${expr})`;
}

export interface BuiltMetrics extends Query {
  /** SQL alias -> output key. */
  keys: Record<string, string>;
  timeDimension: boolean;
}

export function buildMetrics(view: MetricsView, projectId: string, q: MetricsQuery): BuiltMetrics {
  const p = new Params();
  const from = parseIsoDateTime(q.fromTimestamp)!;
  const to = parseIsoDateTime(q.toTimestamp)!;
  if (!(to > from)) throw new BadRequest('query: toTimestamp must be after fromTimestamp');
  const select: string[] = [];
  const group: string[] = [];
  const keys: Record<string, string> = {};
  const orderable: Record<string, string> = {};

  q.dimensions.forEach((d, i) => {
    // A top-N (an explicit row limit) may group by an id; an unbounded group-by may not.
    const topN = q.config?.row_limit !== undefined;
    if (view.highCardinality.includes(d.field) && !topN) {
      throw new BadRequest(
        `query: dimension ${d.field} has too many distinct values to group by; use it as a filter or set config.row_limit`,
      );
    }
    const expr = own(view.dimensions, d.field) ?? own(view.highCardinalityDimensions ?? {}, d.field);
    if (!expr) throw new BadRequest(`query: unknown dimension ${d.field} for view ${q.view}`);
    select.push(`${expr} AS d${i}`);
    group.push(`d${i}`);
    keys[`d${i}`] = d.field;
    orderable[d.field] = `d${i}`;
  });
  if (q.timeDimension) {
    const g =
      q.timeDimension.granularity === 'auto'
        ? autoGranularity(q.fromTimestamp, q.toTimestamp)
        : q.timeDimension.granularity;
    select.push(`${INTERVAL[g]}(${view.timeColumn}) AS time_dimension`);
    group.push('time_dimension');
    keys['time_dimension'] = 'time_dimension';
    orderable['time_dimension'] = 'time_dimension';
  }
  const bins = q.config?.bins ?? 10;
  q.metrics.forEach((m, i) => {
    const expr = own(view.measures, m.measure);
    if (expr === undefined) throw new BadRequest(`query: unknown measure ${m.measure} for view ${q.view}`);
    select.push(`${aggregate(m.aggregation, expr, m.measure === 'count', p, bins)} AS m${i}`);
    const key = `${m.aggregation}_${m.measure}`;
    keys[`m${i}`] = key;
    orderable[key] = `m${i}`;
  });

  const ctx: CompileContext = { params: p, textIndex: false };
  const where = new Where(
    p,
    `project_id = ${p.str(projectId)}`,
    `${view.timeColumn} >= ${p.time(q.fromTimestamp)}`,
    `${view.timeColumn} < ${p.time(q.toTimestamp)}`,
    ...(view.where ?? []),
    ...compileFilters(q.filters, view.filters, ctx),
  );
  const order = (q.orderBy ?? []).map((o) => {
    const alias = own(orderable, o.field);
    if (!alias)
      throw new BadRequest(
        `query: cannot order by ${o.field}; order by a dimension, a metric or time_dimension`,
      );
    return `${alias} ${o.direction === 'asc' ? 'ASC' : 'DESC'}`;
  });
  if (order.length === 0) order.push(q.timeDimension ? 'time_dimension ASC' : 'm0 DESC');

  const sql = [
    `SELECT ${select.join(', ')}`,
    `FROM ${view.table}${view.final ? ' FINAL' : ''}`,
    `WHERE ${where.sql()}`,
    ...(group.length > 0 ? [`GROUP BY ${group.join(', ')}`] : []),
    `ORDER BY ${order.join(', ')}`,
    `LIMIT ${p.add(q.config?.row_limit ?? 100, 'UInt32')}`,
  ].join('\n');
  return { sql, params: p.values, keys, timeDimension: Boolean(q.timeDimension) };
}

/** A result row with the API's keys; the time bucket as ISO text. */
export function mapMetricsRow(
  row: Record<string, unknown>,
  keys: Record<string, string>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [alias, key] of Object.entries(keys)) {
    const v = row[alias];
    out[key] = key === 'time_dimension' ? toIso(v) : v;
  }
  return out;
}
