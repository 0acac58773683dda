/**
 * The deprecated read endpoints over the version 3 analytics tables (`traces`, `observations`,
 * `scores`, `dataset_run_items_rmt`): page-numbered lists, single reads and the daily metrics.
 * Pure builders and row mappers; the routes gate them on the write mode.
 */
import { BadRequest } from '../../kernel/errors.ts';
import { own } from './lookup.ts';
import { metadataObject, num, numberMap, orNull, parseMaybeJson, toIso } from './row-values.ts';
import { Params, type Query, Where } from './sql.ts';

type Row = Record<string, unknown>;

export interface Page {
  page: number;
  limit: number;
}

/** A list query and its count over the same WHERE. */
export interface PagedQuery {
  list: Query;
  count: Query;
}

function paged(where: Where, from: string, order: string, page: Page, select = '*'): PagedQuery {
  const { p } = where;
  const w = where.sql();
  const offset = p.add((page.page - 1) * page.limit, 'UInt32');
  const limit = p.add(page.limit, 'UInt32');
  return {
    list: {
      sql: `SELECT ${select} FROM ${from}\nWHERE ${w}\nORDER BY ${order}\nLIMIT ${limit} OFFSET ${offset}`,
      params: p.values,
    },
    count: { sql: `SELECT count() AS n FROM ${from}\nWHERE ${w}`, params: p.values },
  };
}

/** Trace ids matching trace-level filters, as a subquery for observation and score lists. */
function traceSubquery(
  p: Params,
  projectId: string,
  conds: { userId?: string | undefined; tags?: string[] | undefined; name?: string | undefined },
) {
  const w = new Where(p, `project_id = ${p.str(projectId)}`)
    .eq('user_id', conds.userId)
    .eq('name', conds.name)
    .hasAll('tags', conds.tags);
  return w.size > 1 ? `trace_id IN (SELECT id FROM traces FINAL WHERE ${w.sql(' AND ')})` : undefined;
}

export interface TraceListRequest extends Page {
  projectId: string;
  userId?: string | undefined;
  name?: string | undefined;
  sessionId?: string | undefined;
  fromTimestamp?: string | undefined;
  toTimestamp?: string | undefined;
  orderBy?: string | undefined;
  tags?: string[] | undefined;
  version?: string | undefined;
  release?: string | undefined;
  environment?: string[] | undefined;
}

const TRACE_ORDER: Record<string, string> = {
  id: 'id',
  timestamp: 'timestamp',
  name: 'name',
  userId: 'user_id',
  release: 'release',
  version: 'version',
  public: 'public',
  bookmarked: 'bookmarked',
  sessionId: 'session_id',
};

/**
 * Every column of the project's rows of `table` (each at its latest version: FINAL) whose `column`
 * is `value`, in `orderBy` when given.
 */
function rowsWhere(
  table: 'traces' | 'observations' | 'scores',
  column: string,
  value: string,
  projectId: string,
  orderBy?: string,
): Query {
  const p = new Params();
  const where = `project_id = ${p.str(projectId)} AND ${column} = ${p.str(value)}`;
  return {
    sql: `SELECT * FROM ${table} FINAL WHERE ${where}${orderBy ? ` ORDER BY ${orderBy}` : ''}`,
    params: p.values,
  };
}

export function buildTraceList(r: TraceListRequest): PagedQuery {
  const p = new Params();
  const where = new Where(p, `project_id = ${p.str(r.projectId)}`)
    .eq('user_id', r.userId)
    .eq('name', r.name)
    .eq('session_id', r.sessionId)
    .eq('version', r.version)
    .eq('release', r.release)
    .anyOf('environment', r.environment)
    .hasAll('tags', r.tags)
    .range('timestamp', r.fromTimestamp, r.toTimestamp);
  let order = 'timestamp DESC, id DESC';
  if (r.orderBy) {
    const [field, dir] = r.orderBy.split('.');
    const col = own(TRACE_ORDER, field ?? '');
    if (!col || (dir !== 'asc' && dir !== 'desc'))
      throw new BadRequest(
        `orderBy: expected <field>.<asc|desc>, field one of ${Object.keys(TRACE_ORDER).join(', ')}`,
      );
    order = `${col} ${dir.toUpperCase()}, id DESC`;
  }
  return paged(where, 'traces FINAL', order, r);
}

export const buildTraceById = (projectId: string, id: string): Query =>
  rowsWhere('traces', 'id', id, projectId);

/** Observation ids, latency and cost per trace, and score ids per trace, for a page of traces. */
export function buildTraceAggregates(
  projectId: string,
  traceIds: string[],
): { observations: Query; scores: Query } {
  const p = new Params();
  const project = p.str(projectId);
  const ids = p.strs(traceIds);
  return {
    observations: {
      sql: `SELECT trace_id, groupArray(id) AS ids, min(start_time) AS first_start,
  max(greatest(start_time, ifNull(end_time, start_time))) AS last_end, sum(ifNull(total_cost, 0)) AS cost
FROM observations FINAL WHERE project_id = ${project} AND trace_id IN ${ids} GROUP BY trace_id`,
      params: p.values,
    },
    scores: {
      sql: `SELECT trace_id, groupArray(id) AS ids FROM scores FINAL WHERE project_id = ${project} AND trace_id IN ${ids} GROUP BY trace_id`,
      params: p.values,
    },
  };
}

export function mapTrace(r: Row): Record<string, unknown> {
  return {
    id: r['id'],
    timestamp: toIso(r['timestamp']),
    name: orNull(r['name']),
    input: r['input'] == null ? null : parseMaybeJson(r['input']),
    output: r['output'] == null ? null : parseMaybeJson(r['output']),
    sessionId: orNull(r['session_id']),
    release: orNull(r['release']),
    version: orNull(r['version']),
    userId: orNull(r['user_id']),
    metadata: metadataObject(r['metadata']),
    tags: r['tags'] ?? [],
    public: Boolean(r['public']),
    environment: r['environment'],
  };
}

/** Seconds between the first observation start and the last observation end. */
export function traceLatency(agg: Row | undefined): number | null {
  if (!agg) return null;
  const start = Date.parse(toIso(agg['first_start'])!);
  const end = Date.parse(toIso(agg['last_end'])!);
  return Number.isFinite(start) && Number.isFinite(end) ? (end - start) / 1000 : null;
}

export function htmlPath(projectId: string, traceId: string): string {
  return `/project/${encodeURIComponent(projectId)}/traces/${encodeURIComponent(traceId)}`;
}

export interface ObservationListRequest extends Page {
  projectId: string;
  name?: string | undefined;
  userId?: string | undefined;
  type?: string | undefined;
  traceId?: string | undefined;
  level?: string | undefined;
  parentObservationId?: string | undefined;
  environment?: string[] | undefined;
  fromStartTime?: string | undefined;
  toStartTime?: string | undefined;
  version?: string | undefined;
}

export function buildObservationList(r: ObservationListRequest): PagedQuery {
  const p = new Params();
  const where = new Where(p, `project_id = ${p.str(r.projectId)}`)
    .eq('name', r.name)
    .eq('type', r.type)
    .eq('trace_id', r.traceId)
    .eq('level', r.level)
    .eq('parent_observation_id', r.parentObservationId)
    .eq('version', r.version)
    .anyOf('environment', r.environment)
    .range('start_time', r.fromStartTime, r.toStartTime);
  const sub = traceSubquery(p, r.projectId, { userId: r.userId });
  if (sub) where.add(sub);
  return paged(where, 'observations FINAL', 'start_time DESC, id DESC', r);
}

export const buildObservationById = (projectId: string, id: string): Query =>
  rowsWhere('observations', 'id', id, projectId);

export const buildObservationsOfTrace = (projectId: string, traceId: string): Query =>
  rowsWhere('observations', 'trace_id', traceId, projectId, 'start_time, id');

/** A legacy observation in the ObservationsView shape (usage, costs, latency). */
export function mapLegacyObservation(r: Row): Record<string, unknown> {
  const usage = numberMap(r['usage_details']);
  const cost = numberMap(r['cost_details']);
  const start = Date.parse(toIso(r['start_time'])!);
  const end = r['end_time'] ? Date.parse(toIso(r['end_time'])!) : Number.NaN;
  const first = r['completion_start_time'] ? Date.parse(toIso(r['completion_start_time'])!) : Number.NaN;
  return {
    id: r['id'],
    traceId: orNull(r['trace_id']),
    type: r['type'],
    name: orNull(r['name']),
    startTime: toIso(r['start_time']),
    endTime: toIso(r['end_time']),
    completionStartTime: toIso(r['completion_start_time']),
    model: orNull(r['provided_model_name']),
    modelParameters: r['model_parameters'] ? parseMaybeJson(r['model_parameters']) : null,
    input: r['input'] == null ? null : parseMaybeJson(r['input']),
    version: orNull(r['version']),
    metadata: metadataObject(r['metadata']),
    output: r['output'] == null ? null : parseMaybeJson(r['output']),
    usage: {
      input: usage['input'] ?? 0,
      output: usage['output'] ?? 0,
      total: usage['total'] ?? 0,
      unit: null,
      ...(cost['input'] !== undefined ? { inputCost: cost['input'] } : {}),
      ...(cost['output'] !== undefined ? { outputCost: cost['output'] } : {}),
      ...(cost['total'] !== undefined ? { totalCost: cost['total'] } : {}),
    },
    level: r['level'],
    statusMessage: orNull(r['status_message']),
    parentObservationId: orNull(r['parent_observation_id']),
    promptId: orNull(r['prompt_id']),
    usageDetails: usage,
    costDetails: cost,
    environment: r['environment'],
    promptName: orNull(r['prompt_name']),
    promptVersion: num(r['prompt_version']),
    modelId: orNull(r['internal_model_id']),
    inputPrice: null,
    outputPrice: null,
    totalPrice: null,
    calculatedInputCost: cost['input'] ?? null,
    calculatedOutputCost: cost['output'] ?? null,
    calculatedTotalCost: num(r['total_cost']),
    latency: Number.isFinite(end) ? (end - start) / 1000 : null,
    timeToFirstToken: Number.isFinite(first) ? (first - start) / 1000 : null,
  };
}

export interface SessionListRequest extends Page {
  projectId: string;
  fromTimestamp?: string | undefined;
  toTimestamp?: string | undefined;
  environment?: string[] | undefined;
}

/** Sessions are the distinct session ids of traces; created at their first trace. */
export function buildSessionList(r: SessionListRequest): PagedQuery {
  const p = new Params();
  const where = new Where(p, `project_id = ${p.str(r.projectId)}`, "ifNull(session_id, '') != ''").anyOf(
    'environment',
    r.environment,
  );
  // Aliases differ from column names: an alias named like a column would also replace it in WHERE.
  const inner = `(SELECT session_id AS id, min(timestamp) AS created_at, any(environment) AS session_environment
  FROM traces FINAL WHERE ${where.sql(' AND ')} GROUP BY session_id)`;
  const outer = new Where(p, '1').range('created_at', r.fromTimestamp, r.toTimestamp);
  return paged(outer, inner, 'created_at DESC, id DESC', r);
}

export const buildSessionTraces = (projectId: string, sessionId: string): Query =>
  rowsWhere('traces', 'session_id', sessionId, projectId, 'timestamp, id');

export interface ScoreListRequest extends Page {
  projectId: string;
  userId?: string | undefined;
  name?: string | undefined;
  fromTimestamp?: string | undefined;
  toTimestamp?: string | undefined;
  environment?: string[] | undefined;
  source?: string | undefined;
  operator?: string | undefined;
  value?: number | undefined;
  scoreIds?: string[] | undefined;
  configId?: string | undefined;
  sessionId?: string | undefined;
  datasetRunId?: string | undefined;
  traceId?: string | undefined;
  observationId?: string[] | undefined;
  queueId?: string | undefined;
  dataType?: string | undefined;
  traceTags?: string[] | undefined;
}

const VALUE_OPERATORS = new Set(['<', '>', '<=', '>=', '=', '!=']);

export function buildScoreList(r: ScoreListRequest): PagedQuery {
  const p = new Params();
  const where = new Where(p, `project_id = ${p.str(r.projectId)}`)
    .eq('name', r.name)
    .eq('source', r.source)
    .eq('config_id', r.configId)
    .eq('session_id', r.sessionId)
    .eq('dataset_run_id', r.datasetRunId)
    .eq('trace_id', r.traceId)
    .eq('queue_id', r.queueId)
    .eq('data_type', r.dataType)
    .anyOf('environment', r.environment)
    .anyOf('id', r.scoreIds)
    .anyOf('observation_id', r.observationId)
    .range('timestamp', r.fromTimestamp, r.toTimestamp);
  if (r.value !== undefined) {
    const op = r.operator ?? '=';
    if (!VALUE_OPERATORS.has(op)) throw new BadRequest(`operator: one of ${[...VALUE_OPERATORS].join(' ')}`);
    where.add(`value ${op} ${p.num(r.value)}`);
  }
  const sub = traceSubquery(p, r.projectId, { userId: r.userId, tags: r.traceTags });
  if (sub) where.add(sub);
  return paged(where, 'scores FINAL', 'timestamp DESC, id DESC', r);
}

export const buildScoreById = (projectId: string, id: string): Query =>
  rowsWhere('scores', 'id', id, projectId);

export const buildScoresOfTrace = (projectId: string, traceId: string): Query =>
  rowsWhere('scores', 'trace_id', traceId, projectId, 'timestamp, id');

/** `columns` of the project's traces with these ids. */
function tracesByIds(columns: string, projectId: string, ids: string[]): Query {
  const p = new Params();
  return {
    sql: `SELECT ${columns} FROM traces FINAL WHERE project_id = ${p.str(projectId)} AND id IN ${p.strs(ids)}`,
    params: p.values,
  };
}

/** Trace fields the score lists attach (`trace: {userId, tags, environment, sessionId}`). */
export const buildTracesByIds = (projectId: string, ids: string[]): Query =>
  tracesByIds('id, user_id, tags, environment, session_id', projectId, ids);

/** The outputs of traces, by id (a dataset run's results in the version 3 experience). */
export const buildTraceOutputs = (projectId: string, ids: string[]): Query =>
  tracesByIds('id, output', projectId, ids);

export interface DailyMetricsRequest {
  projectId: string;
  traceName?: string | undefined;
  userId?: string | undefined;
  tags?: string[] | undefined;
  environment?: string[] | undefined;
  fromTimestamp?: string | undefined;
  toTimestamp?: string | undefined;
}

/** Per day and model: observation counts, usage and cost; per day: trace counts. */
export function buildDailyMetrics(r: DailyMetricsRequest): { observations: Query; traces: Query } {
  const p = new Params();
  const project = p.str(r.projectId);
  const t = new Where(p, `project_id = ${project}`)
    .eq('name', r.traceName)
    .eq('user_id', r.userId)
    .anyOf('environment', r.environment)
    .hasAll('tags', r.tags)
    .range('timestamp', r.fromTimestamp, r.toTimestamp)
    .sql(' AND ');
  const o = [`project_id = ${project}`, `trace_id IN (SELECT id FROM traces FINAL WHERE ${t})`];
  return {
    traces: {
      sql: `SELECT toString(toDate(timestamp)) AS date, count() AS traces FROM traces FINAL WHERE ${t} GROUP BY date`,
      params: p.values,
    },
    observations: {
      sql: `SELECT toString(toDate(start_time)) AS date, ifNull(provided_model_name, '') AS model,
  count() AS observations, uniqExact(trace_id) AS traces,
  sum(usage_details['input']) AS input_usage, sum(usage_details['output']) AS output_usage,
  sum(usage_details['total']) AS total_usage, sum(ifNull(total_cost, 0)) AS cost
FROM observations FINAL WHERE ${o.join(' AND ')} GROUP BY date, model`,
      params: p.values,
    },
  };
}

/** Days newest first, each with its per-model usage. */
export function assembleDaily(traceRows: Row[], obsRows: Row[]) {
  const days = new Map<
    string,
    { date: string; countTraces: number; countObservations: number; totalCost: number; usage: Row[] }
  >();
  const day = (date: string) => {
    let d = days.get(date);
    if (!d) {
      d = { date, countTraces: 0, countObservations: 0, totalCost: 0, usage: [] };
      days.set(date, d);
    }
    return d;
  };
  for (const r of traceRows) day(String(r['date'])).countTraces = Number(r['traces']);
  for (const r of obsRows) {
    const d = day(String(r['date']));
    d.countObservations += Number(r['observations']);
    d.totalCost += Number(r['cost']);
    if (r['model'] !== '') {
      d.usage.push({
        model: r['model'],
        inputUsage: Number(r['input_usage']),
        outputUsage: Number(r['output_usage']),
        totalUsage: Number(r['total_usage']),
        countTraces: Number(r['traces']),
        countObservations: Number(r['observations']),
        totalCost: Number(r['cost']),
      });
    }
  }
  return [...days.values()].sort((a, b) => b.date.localeCompare(a.date));
}

/** Run items of one run, page-numbered, from the replacing run-item table. */
export function buildRunItems(
  projectId: string,
  datasetId: string,
  runId: string,
  page: Page | undefined,
): PagedQuery {
  const p = new Params();
  const where = new Where(p, `project_id = ${p.str(projectId)}`)
    .eq('dataset_id', datasetId)
    .eq('dataset_run_id', runId);
  return paged(
    where,
    'dataset_run_items_rmt FINAL',
    'created_at DESC, id DESC',
    page ?? { page: 1, limit: 100_000 },
  );
}

export function mapRunItem(r: Row): Record<string, unknown> {
  return {
    id: r['id'],
    datasetRunId: r['dataset_run_id'],
    datasetRunName: r['dataset_run_name'],
    datasetItemId: r['dataset_item_id'],
    traceId: r['trace_id'],
    observationId: orNull(r['observation_id']),
    createdAt: toIso(r['created_at']),
    updatedAt: toIso(r['updated_at']),
  };
}

/**
 * Deleting a run's items: tombstones (is_deleted = 1, newer event_ts) that the replacing merge
 * and every FINAL read apply, instead of a mutation that rewrites parts.
 */
export function buildRunItemTombstones(projectId: string, datasetId: string, runId: string): Query {
  const p = new Params();
  return {
    sql: `INSERT INTO dataset_run_items_rmt
SELECT * REPLACE (1 AS is_deleted, now64(3) AS event_ts, now64(3) AS updated_at)
FROM dataset_run_items_rmt FINAL
WHERE project_id = ${p.str(projectId)} AND dataset_id = ${p.str(datasetId)} AND dataset_run_id = ${p.str(runId)}`,
    params: p.values,
  };
}
