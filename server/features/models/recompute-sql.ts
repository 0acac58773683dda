/**
 * Recomputing stored costs with the current model definitions (`observatory recompute-costs`):
 * which rows a batch reads, what a row's computed columns become, and the in-place update that
 * writes them. Only rows without a sent cost are read and updated: an SDK-sent cost never changes.
 * The new values come from the same pricing ingestion uses (./apply.ts). Pure: no I/O.
 */

import { type Dialect, onCluster } from '../../platform/migrations/analytics/dialect.ts';
import type { UpdateForm } from '../write-model/trace-events-update.ts';
import { type ProjectPricing, priceEventRow, priceLegacyRow } from './apply.ts';
import { usageWithTotal } from './pricing.ts';

type Row = Record<string, unknown>;

/** The legacy `observations` table, or the events tables (`events_full` and `events_core`). */
export type CostSource = 'observations' | 'events';
export const COST_SOURCES: readonly CostSource[] = ['observations', 'events'];

/** Where a recomputation stands: the last row done, in the batches' order. */
export interface Cursor {
  source: CostSource;
  startTime: string;
  projectId: string;
  traceId: string;
  id: string;
}

/** A half-open range of start times in the store's text form, and optionally one project. */
export interface CostRange {
  from: string;
  to: string;
  projectId?: string | undefined;
}

export interface Statement {
  query: string;
  params: Record<string, unknown>;
}

interface Layout {
  read: string;
  id: string;
  modelId: string;
  extraWhere: string;
}

const LAYOUT: Record<CostSource, Layout> = {
  observations: {
    read: `FROM observations FINAL`,
    id: 'id',
    modelId: 'internal_model_id',
    extraWhere: 'AND is_deleted = 0',
  },
  events: { read: 'FROM events_full FINAL', id: 'span_id', modelId: 'model_id', extraWhere: '' },
};

const PRICED_COLUMNS =
  'provided_model_name, provided_usage_details, provided_cost_details, usage_details, cost_details, usage_pricing_tier_id, usage_pricing_tier_name, input, output, model_parameters';

/** The next batch after `after` (the source's first row when null), oldest first. */
export function batchQuery(
  source: CostSource,
  range: CostRange,
  after: Cursor | null,
  limit: number,
): Statement {
  const l = LAYOUT[source];
  const params: Record<string, unknown> = { from: range.from, to: range.to, limit };
  const where = [
    "start_time >= toDateTime64({from:String}, 6, 'UTC') AND start_time < toDateTime64({to:String}, 6, 'UTC')",
    "ifNull(provided_model_name, '') != '' AND empty(provided_cost_details)",
  ];
  if (range.projectId !== undefined) {
    where.push('project_id = {project_id:String}');
    params['project_id'] = range.projectId;
  }
  if (after) {
    where.push(
      `(start_time, project_id, trace_id, ${l.id}) > (toDateTime64({after_time:String}, 6, 'UTC'), {after_project:String}, {after_trace:String}, {after_id:String})`,
    );
    Object.assign(params, {
      after_time: after.startTime,
      after_project: after.projectId,
      after_trace: after.traceId,
      after_id: after.id,
    });
  }
  const extra =
    source === 'observations'
      ? 'metadata, internal_model_id, total_cost'
      : 'metadata_names, metadata_values, model_id';
  const query = [
    `SELECT project_id, trace_id, ${l.id} AS id, start_time, ${PRICED_COLUMNS}, ${extra}`,
    l.read,
    `WHERE ${where.join(' AND ')} ${l.extraWhere}`,
    `ORDER BY start_time, project_id, trace_id, ${l.id}`,
    'LIMIT {limit:UInt32}',
  ].join('\n');
  return { query, params };
}

/** What a row's computed columns become. */
export interface CostChange {
  projectId: string;
  traceId: string;
  id: string;
  startTime: string;
  modelId: string;
  usage: Record<string, number>;
  cost: Record<string, number>;
  tierId: string;
  tierName: string;
  totalCost: string;
}

const numbers = (v: unknown): Record<string, number> =>
  Object.fromEntries(
    Object.entries((v ?? {}) as Record<string, unknown>)
      .map(([k, n]): [string, number] => [k, Number(n)])
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
/** Costs bound as text: the store reads decimal text exactly, where a float would round. */
const decimalText = (n: number) => n.toFixed(12);
const text = (v: unknown) => (v === null || v === undefined ? '' : String(v));

function computedOf(source: CostSource, r: Row) {
  return {
    modelId: text(r[LAYOUT[source].modelId]),
    usage: numbers(r['usage_details']),
    cost: numbers(r['cost_details']),
    tierId: text(r['usage_pricing_tier_id']),
    tierName: text(r['usage_pricing_tier_name']),
    // The legacy table's own column; the events tables' is an alias of cost_details['total'].
    totalCost:
      source === 'observations' && r['total_cost'] != null ? decimalText(Number(r['total_cost'])) : '',
  };
}

/**
 * The row's computed columns priced with `pricing` (what ingestion would store now), or null when
 * they are what is stored already: a batch done twice writes nothing the second time.
 */
export function recomputeRow(pricing: ProjectPricing, source: CostSource, row: Row): CostChange | null {
  const priced: Row = { ...row };
  if (source === 'observations') priceLegacyRow(pricing, priced);
  else {
    // From what was sent, as a new event: a name no definition matches any more loses its cost.
    Object.assign(priced, {
      model_id: '',
      usage_details: usageWithTotal(numbers(row['provided_usage_details'])),
      cost_details: {},
      usage_pricing_tier_id: null,
      usage_pricing_tier_name: null,
    });
    priceEventRow(pricing, priced);
  }
  const before = computedOf(source, row);
  const after = computedOf(source, priced);
  if (JSON.stringify(before) === JSON.stringify(after)) return null;
  return {
    projectId: String(row['project_id']),
    traceId: String(row['trace_id']),
    id: String(row['id']),
    startTime: String(row['start_time']),
    ...after,
  };
}

/** The cursor after a batch: its last row. */
export function cursorAfter(source: CostSource, rows: Row[]): Cursor | null {
  const last = rows.at(-1);
  if (!last) return null;
  return {
    source,
    startTime: String(last['start_time']),
    projectId: String(last['project_id']),
    traceId: String(last['trace_id']),
    id: String(last['id']),
  };
}

/** The tables holding cost: the legacy ones (staging waits there for propagation) and the events ones. */
export type CostTable = 'observations' | 'observations_batch_staging' | 'events_full' | 'events_core';

const COST_TYPE: Record<CostTable, string> = {
  observations: 'Map(LowCardinality(String), Decimal64(12))',
  observations_batch_staging: 'Map(LowCardinality(String), Decimal64(12))',
  events_full: 'Map(LowCardinality(String), Decimal(18, 12))',
  events_core: 'Map(LowCardinality(String), Decimal(18, 12))',
};
const USAGE_TYPE = 'Map(LowCardinality(String), UInt64)';

/**
 * Writes one project's changes in place, so no row is duplicated however often it runs: a
 * lightweight `UPDATE` or a waited-for mutation on the events tables (their configured form), a
 * mutation on the legacy tables (they have no block numbers for lightweight updates). A row whose cost
 * was sent meanwhile is left alone.
 */
export function updateStatement(
  table: CostTable,
  form: UpdateForm,
  dialect: Dialect,
  changes: CostChange[],
): Statement {
  const legacy = table === 'observations' || table === 'observations_batch_staging';
  // Staging rows have no tier columns: propagation carries the cost into the events tables.
  const tiers = table !== 'observations_batch_staging';
  const times = changes.map((c) => c.startTime).sort();
  const params: Record<string, unknown> = {
    project_id: changes[0]!.projectId,
    trace_ids: changes.map((c) => c.traceId),
    ids: changes.map((c) => c.id),
    model_ids: changes.map((c) => c.modelId),
    usage_keys: changes.map((c) => Object.keys(c.usage)),
    usage_values: changes.map((c) => Object.values(c.usage)),
    cost_keys: changes.map((c) => Object.keys(c.cost)),
    cost_values: changes.map((c) => Object.values(c.cost).map(decimalText)),
    ...(tiers ? { tier_ids: changes.map((c) => c.tierId), tier_names: changes.map((c) => c.tierName) } : {}),
    ...(legacy ? { totals: changes.map((c) => c.totalCost) } : {}),
    min_time: times[0],
    max_time: times.at(-1),
  };
  const idColumn = legacy ? 'id' : 'span_id';
  const i = `indexOf(arrayZip({trace_ids:Array(String)}, {ids:Array(String)}), (trace_id, ${idColumn}))`;
  const cost = `CAST(mapFromArrays({cost_keys:Array(Array(String))}[${i}], arrayMap(v -> toDecimal128(v, 12), {cost_values:Array(Array(String))}[${i}])), '${COST_TYPE[table]}')`;
  const set = [
    `${legacy ? 'internal_model_id' : 'model_id'} = ${legacy ? `nullIf({model_ids:Array(String)}[${i}], '')` : `{model_ids:Array(String)}[${i}]`}`,
    `usage_details = CAST(mapFromArrays({usage_keys:Array(Array(String))}[${i}], {usage_values:Array(Array(UInt64))}[${i}]), '${USAGE_TYPE}')`,
    `cost_details = ${cost}`,
    ...(legacy ? [`total_cost = toDecimal64OrNull({totals:Array(String)}[${i}], 12)`] : []),
    ...(tiers
      ? [
          `usage_pricing_tier_id = nullIf({tier_ids:Array(String)}[${i}], '')`,
          `usage_pricing_tier_name = nullIf({tier_names:Array(String)}[${i}], '')`,
        ]
      : []),
  ].join(', ');
  const where = [
    'project_id = {project_id:String}',
    "start_time >= toDateTime64({min_time:String}, 6, 'UTC') AND start_time <= toDateTime64({max_time:String}, 6, 'UTC')",
    'trace_id IN {trace_ids:Array(String)}',
    `${idColumn} IN {ids:Array(String)}`,
    `${i} > 0`,
    'empty(provided_cost_details)',
  ].join(' AND ');
  const target = `${table}${onCluster(dialect)}`;
  const query =
    form === 'lightweight' && !legacy
      ? `UPDATE ${target} SET ${set} WHERE ${where}`
      : `ALTER TABLE ${target} UPDATE ${set} WHERE ${where} SETTINGS mutations_sync = 2`;
  return { query, params };
}
