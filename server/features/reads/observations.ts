/**
 * Observations API v2 (`GET /api/public/v2/observations`): the list query over `events_core`
 * (or `events_full` when a full-text filter reads input or output, which `events_core` keeps
 * truncated and unindexed), keyset pagination, and the follow-up read of full input, output and
 * metadata from `events_full` for the page's rows only. Pure builders and row mappers.
 */

import { BadRequest } from '../../kernel/errors.ts';
import { decimalText } from '../models/definitions.ts';
import { LATENCY_MS, OBSERVATION_COLUMNS, TOTAL_COST, TOTAL_TOKENS, TTFT_MS } from './events-columns.ts';
import { type CompileContext, compileFilters, type FilterCondition, fullTextMatch } from './filters.ts';
import { own } from './lookup.ts';
import {
  num,
  numberMap,
  orNull,
  parseMaybeJson,
  spanOf,
  toIso,
  withFieldGroups,
  zipMetadata,
} from './row-values.ts';
import { decodeCursor, encodeCursor, Params, type Query, Where } from './sql.ts';

export const FIELD_GROUPS = [
  'core',
  'basic',
  'time',
  'io',
  'metadata',
  'model',
  'usage',
  'prompt',
  'metrics',
  'trace_context',
] as const;
export type FieldGroup = (typeof FIELD_GROUPS)[number];

/** `fields=a,b`: unknown names are ignored (as the reference does); core is always present. */
export function parseFieldGroups(text: string | undefined): Set<FieldGroup> {
  const asked = (text ?? 'core,basic').split(',').map((s) => s.trim());
  const out = new Set<FieldGroup>(['core']);
  for (const g of asked) if ((FIELD_GROUPS as readonly string[]).includes(g)) out.add(g as FieldGroup);
  return out;
}

/**
 * Position after the last row of a page: ties broken by start time, trace and span id; `s` is the
 * sort value when the page is ordered by another column than the start time.
 */
export interface ObservationCursor {
  s?: number | string;
  t: string;
  tr: string;
  id: string;
}

export function parseObservationCursor(text: string | undefined): ObservationCursor | undefined {
  if (text === undefined || text === '') return undefined;
  const c = decodeCursor(text) as Partial<ObservationCursor> | undefined;
  const sortOk = c?.s === undefined || typeof c.s === 'number' || typeof c.s === 'string';
  if (!c || typeof c.t !== 'string' || typeof c.tr !== 'string' || typeof c.id !== 'string' || !sortOk) {
    throw new BadRequest('cursor: not a cursor returned by this endpoint');
  }
  return { ...(c.s === undefined ? {} : { s: c.s }), t: c.t, tr: c.tr, id: c.id };
}

/**
 * Columns a page may be ordered by, as total orders: NULL sorts as -1 (below every real
 * latency, token count or cost), so the keyset comparison never meets a NULL.
 */
export const SORT_COLUMNS = {
  startTime: undefined,
  name: { expr: 'name', type: 'string' },
  latency: { expr: `ifNull(toFloat64(${LATENCY_MS}), -1)`, type: 'number' },
  totalTokens: { expr: `toFloat64(${TOTAL_TOKENS})`, type: 'number' },
  totalCost: { expr: `ifNull(toFloat64(${TOTAL_COST}), -1)`, type: 'number' },
} as const;
export type SortColumn = keyof typeof SORT_COLUMNS;

export interface ObservationOrder {
  column: SortColumn;
  dir: 'asc' | 'desc';
}
export const DEFAULT_ORDER: ObservationOrder = { column: 'startTime', dir: 'desc' };

/** The simple query parameters, as the structured filters they stand for. */
export interface SimpleObservationParams {
  name?: string | undefined;
  userId?: string | undefined;
  sessionId?: string | undefined;
  type?: string | undefined;
  traceId?: string | undefined;
  level?: string | undefined;
  parentObservationId?: string | undefined;
  isRootObservation?: boolean | undefined;
  environment?: string[] | undefined;
  fromStartTime?: string | undefined;
  toStartTime?: string | undefined;
  version?: string | undefined;
}

export function simpleFilters(q: SimpleObservationParams): FilterCondition[] {
  const out: FilterCondition[] = [];
  const eq = (column: string, value: string | undefined) => {
    if (value !== undefined) out.push({ type: 'string', column, operator: '=', value });
  };
  eq('name', q.name);
  eq('userId', q.userId);
  eq('sessionId', q.sessionId);
  eq('type', q.type);
  eq('traceId', q.traceId);
  eq('level', q.level);
  eq('parentObservationId', q.parentObservationId);
  eq('version', q.version);
  if (q.isRootObservation !== undefined) {
    out.push({ type: 'boolean', column: 'isRootObservation', operator: '=', value: q.isRootObservation });
  }
  if (q.environment && q.environment.length > 0) {
    out.push({ type: 'stringOptions', column: 'environment', operator: 'any of', value: q.environment });
  }
  if (q.fromStartTime)
    out.push({ type: 'datetime', column: 'startTime', operator: '>=', value: q.fromStartTime });
  if (q.toStartTime) out.push({ type: 'datetime', column: 'startTime', operator: '<', value: q.toStartTime });
  return out;
}

/** Input/output filters must include an `=` or `matches` (the reference refuses bare substring scans). */
function checkTextFilters(filters: FilterCondition[]): void {
  const text = filters.filter((f) => f.column === 'input' || f.column === 'output');
  if (text.length > 0 && !text.some((f) => f.operator === '=' || f.operator === 'matches')) {
    throw new BadRequest(
      'filter: an input or output filter needs at least one "=" or "matches" filter on input or output',
    );
  }
}

const GROUP_COLUMNS: Record<FieldGroup, string[]> = {
  core: [
    'span_id',
    'trace_id',
    'start_time',
    'end_time',
    'project_id',
    'parent_span_id',
    'type',
    'is_app_root',
  ],
  basic: [
    'name',
    'level',
    'status_message',
    'version',
    'environment',
    'bookmarked',
    'public',
    'user_id',
    'session_id',
  ],
  time: ['completion_start_time', 'created_at', 'updated_at'],
  io: [],
  metadata: ['metadata_names', 'metadata_values'],
  model: ['provided_model_name', 'model_id', 'model_parameters'],
  usage: ['usage_details', 'cost_details', `${TOTAL_COST} AS total_cost_value`, 'usage_pricing_tier_name'],
  prompt: ['prompt_id', 'prompt_name', 'prompt_version'],
  metrics: [`${LATENCY_MS} AS latency_ms`, `${TTFT_MS} AS ttft_ms`],
  trace_context: ['tags', 'release', 'trace_name'],
};

export interface ObservationListRequest {
  projectId: string;
  groups: Set<FieldGroup>;
  filters: FilterCondition[];
  limit: number;
  cursor?: ObservationCursor | undefined;
  /** The text indexes exist on `events_full` (ClickHouse >= 25.12 with migration 39 applied). */
  textIndex: boolean;
  /** Newest first when absent. */
  order?: ObservationOrder | undefined;
  /** Full-text search across input, output and metadata values. */
  search?: string | undefined;
}

export interface ObservationListQuery extends Query {
  table: 'events_core' | 'events_full';
}

/** The page query: one row more than the limit tells whether a next page exists. */
export function buildObservationList(req: ObservationListRequest): ObservationListQuery {
  checkTextFilters(req.filters);
  const params = new Params();
  const ctx: CompileContext = { params, textIndex: req.textIndex };
  const where = new Where(
    params,
    `project_id = ${params.str(req.projectId)}`,
    ...compileFilters(req.filters, OBSERVATION_COLUMNS, ctx),
  );
  if (req.search !== undefined && req.search.trim() !== '') where.add(fullTextMatch(req.search.trim(), ctx));
  const order = req.order ?? DEFAULT_ORDER;
  const sort = own(SORT_COLUMNS, order.column);
  const dir = order.dir === 'asc' ? 'ASC' : 'DESC';
  const keys = [...(sort ? [sort.expr] : []), 'start_time', 'trace_id', 'span_id'];
  if (req.cursor) {
    const c = req.cursor;
    const values = [params.time(c.t), params.str(c.tr), params.str(c.id)];
    if (sort) {
      if (typeof c.s !== (sort.type === 'number' ? 'number' : 'string')) {
        throw new BadRequest(`cursor: not a cursor of a page ordered by ${order.column}`);
      }
      values.unshift(sort.type === 'number' ? params.num(c.s as number) : params.str(c.s as string));
    }
    where.add(`(${keys.join(', ')}) ${dir === 'ASC' ? '>' : '<'} (${values.join(', ')})`);
  }
  const table = ctx.readsText ? 'events_full' : 'events_core';
  const columns = [...req.groups].flatMap((g) => GROUP_COLUMNS[g]);
  if (sort) columns.push(`${sort.expr} AS sort_value`);
  const sql = [
    `SELECT ${columns.join(', ')}`,
    `FROM ${table} FINAL`,
    `WHERE ${where.sql()}`,
    `ORDER BY ${keys.map((k) => `${k} ${dir}`).join(', ')}`,
    `LIMIT ${params.add(req.limit + 1, 'UInt32')}`,
  ].join('\n');
  return {
    sql,
    params: params.values,
    table,
    ...(ctx.usedTextIndex ? { settings: { enable_full_text_index: 1 } } : {}),
  };
}

export type Row = Record<string, unknown>;

/** Whether the page needs full values from `events_full`. */
export function needsDetails(groups: Set<FieldGroup>, expandMetadata: string[]): boolean {
  return groups.has('io') || (groups.has('metadata') && expandMetadata.length > 0);
}

/** Full input, output and metadata of the page's rows, located by primary key range and ids. */
export function buildObservationDetails(projectId: string, rows: Row[]): Query {
  const params = new Params();
  // The store's time text sorts chronologically.
  const times = rows.map((r) => String(r['start_time'])).sort();
  const min = times[0]!;
  const max = times.at(-1)!;
  const sql = [
    'SELECT span_id, trace_id, start_time, input, output, metadata_names, metadata_values, provided_cost_details',
    'FROM events_full FINAL',
    `WHERE project_id = ${params.str(projectId)}`,
    `  AND start_time >= ${params.time(min)} AND start_time <= ${params.time(max)}`,
    `  AND trace_id IN ${params.strs([...new Set(rows.map((r) => String(r['trace_id'])))])}`,
    `  AND span_id IN ${params.strs([...new Set(rows.map((r) => String(r['span_id'])))])}`,
  ].join('\n');
  return { sql, params: params.values };
}

export const rowKey = (r: Row) => `${r['trace_id']}\u0000${r['span_id']}\u0000${r['start_time']}`;

/**
 * One row -> an ObservationV2 with the requested groups; `prices` are the default tier's of the
 * row's matched model (by usage type), which the model group shows as decimal strings.
 */
export function mapObservation(
  r: Row,
  groups: Set<FieldGroup>,
  details: Row | undefined,
  expandMetadata: string[],
  prices: Record<string, number> = {},
): Record<string, unknown> {
  const price = (usage: string) => (prices[usage] === undefined ? null : decimalText(prices[usage]));
  const parent = orNull(r['parent_span_id']);
  const base = {
    ...spanOf(r),
    projectId: r['project_id'],
    parentObservationId: parent,
    type: r['type'],
    // Always present, null unless the model group is asked (the SDK types declare them required).
    modelId: null,
    inputPrice: null,
    outputPrice: null,
    totalPrice: null,
  };
  return withFieldGroups(base, groups, {
    basic: () => ({
      name: r['name'],
      level: r['level'],
      statusMessage: orNull(r['status_message']),
      version: orNull(r['version']),
      environment: r['environment'],
      bookmarked: Boolean(r['bookmarked']),
      public: Boolean(r['public']),
      userId: orNull(r['user_id']),
      sessionId: orNull(r['session_id']),
      isRootObservation: parent === null || Boolean(r['is_app_root']),
    }),
    time: () => ({
      completionStartTime: toIso(r['completion_start_time']),
      createdAt: toIso(r['created_at']),
      updatedAt: toIso(r['updated_at']),
    }),
    // Raw strings, as the reference returns them (parseIoAsJson is refused).
    io: () => ({ input: orNull(details?.['input']), output: orNull(details?.['output']) }),
    metadata: () => {
      const meta = zipMetadata(r['metadata_names'], r['metadata_values']);
      if (details) {
        const full = zipMetadata(details['metadata_names'], details['metadata_values']);
        for (const k of expandMetadata) if (k in full) meta[k] = full[k];
      }
      return { metadata: meta };
    },
    model: () => ({
      model: orNull(r['provided_model_name']),
      providedModelName: orNull(r['provided_model_name']),
      internalModelId: orNull(r['model_id']),
      modelId: orNull(r['model_id']),
      modelParameters: r['model_parameters'] ? parseMaybeJson(r['model_parameters']) : null,
      inputPrice: price('input'),
      outputPrice: price('output'),
      totalPrice: price('total'),
    }),
    usage: () => ({
      usageDetails: numberMap(r['usage_details']),
      costDetails: numberMap(r['cost_details']),
      totalCost: Object.keys(numberMap(r['cost_details'])).length > 0 ? num(r['total_cost_value']) : null,
      usagePricingTierName: orNull(r['usage_pricing_tier_name']),
    }),
    prompt: () => ({
      promptId: orNull(r['prompt_id']),
      promptName: orNull(r['prompt_name']),
      promptVersion: num(r['prompt_version']),
    }),
    metrics: () => ({ latency: seconds(num(r['latency_ms'])), timeToFirstToken: seconds(num(r['ttft_ms'])) }),
    trace_context: () => ({
      tags: r['tags'] ?? [],
      release: orNull(r['release']),
      traceName: orNull(r['trace_name']),
    }),
  });
}

const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);

/** The cursor after a full page; none when the page was the last. */
export function nextCursor(rows: Row[], limit: number): string | undefined {
  if (rows.length <= limit) return undefined;
  const last = rows[limit - 1]!;
  const s = last['sort_value'];
  return encodeCursor({
    ...(s === undefined ? {} : { s: typeof s === 'number' ? s : String(s) }),
    t: String(last['start_time']),
    tr: String(last['trace_id']),
    id: String(last['span_id']),
  });
}
