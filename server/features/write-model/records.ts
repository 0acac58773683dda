/**
 * Pure conversion of ingestion events into rows of the analytics tables, and the merge of an
 * entity's events (creates, then updates) onto its stored row. Rows are plain objects keyed by
 * column name, ready for a JSONEachRow insert.
 */
import { randomUUID } from 'node:crypto';
import type { GenerationBody, ObservationType, ScoreBody, TraceBody } from './bodies.ts';
import { chTime, fromChTime } from './time.ts';

export type Row = Record<string, unknown>;

export interface Attribution {
  apiKey: string;
  sdkName: string;
  sdkVersion: string;
}

/** JSON values as the legacy tables store them: strings verbatim, everything else serialized. */
export function jsonText(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** Metadata as a flat string map: top-level keys, values serialized. Non-objects go under `metadata`. */
export function metadataMap(v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) return { metadata: jsonText(v)! };
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) if (val !== undefined && val !== null) out[k] = jsonText(val)!;
  return out;
}

const given = <T>(v: T | null | undefined): v is T => v !== undefined && v !== null;

/**
 * A body merged onto its stored row: the fields it gives (not undefined/null) win, its metadata is
 * merged key by key (new values win), and the row takes this write's time.
 */
function mergeBody(row: Row, fields: Row, metadata: unknown, ctx: RowContext): Row {
  const out = { ...row };
  for (const [k, v] of Object.entries(fields)) if (given(v)) out[k] = v;
  out['metadata'] = { ...(row['metadata'] as Record<string, string>), ...metadataMap(metadata) };
  out['updated_at'] = chTime(ctx.now);
  out['event_ts'] = chTime(ctx.now);
  return out;
}

export interface RowContext {
  projectId: string;
  /** Time of this write; becomes `event_ts` so the newest write wins in the replacing merge. */
  now: number;
}

/**
 * The time a merged write is stamped with (its `event_ts`, the replacing merge's version): newer
 * than every stored row it merged onto, even when the request began before another request's
 * write of the same entity or the process that wrote it has a clock ahead of ours; otherwise the
 * merge would collapse to the row it read.
 */
export function mergedVersion(now: number, mergedOnto: Row[]): number {
  let version = now;
  for (const row of mergedOnto) {
    const stored = fromChTime(String(row['event_ts']));
    if (stored >= version) version = stored + 1;
  }
  return version;
}

export function emptyTraceRow(ctx: RowContext, id: string, timestamp: string): Row {
  return {
    id,
    project_id: ctx.projectId,
    timestamp: chTime(timestamp),
    name: '',
    user_id: null,
    metadata: {},
    release: null,
    version: null,
    environment: 'default',
    public: false,
    bookmarked: false,
    tags: [],
    input: null,
    output: null,
    session_id: null,
    created_at: chTime(ctx.now),
    updated_at: chTime(ctx.now),
    event_ts: chTime(ctx.now),
    is_deleted: 0,
  };
}

/** Merges one trace-create body onto the trace row (new values win; metadata merged; tags unioned). */
export function applyTrace(row: Row, body: TraceBody, ctx: RowContext): Row {
  const next = mergeBody(
    row,
    {
      timestamp: given(body.timestamp) ? chTime(body.timestamp) : undefined,
      name: body.name,
      user_id: body.userId,
      release: body.release,
      version: body.version,
      environment: body.environment,
      public: body.public,
      input: jsonText(body.input),
      output: jsonText(body.output),
      session_id: body.sessionId,
    },
    body.metadata,
    ctx,
  );
  if (body.tags) next['tags'] = [...new Set([...(row['tags'] as string[]), ...body.tags])].sort();
  return next;
}

export function emptyObservationRow(
  ctx: RowContext,
  id: string,
  traceId: string,
  type: ObservationType,
  startTime: string,
): Row {
  return {
    id,
    trace_id: traceId,
    project_id: ctx.projectId,
    type,
    parent_observation_id: null,
    start_time: chTime(startTime),
    end_time: null,
    name: '',
    metadata: {},
    level: 'DEFAULT',
    status_message: null,
    version: null,
    input: null,
    output: null,
    provided_model_name: null,
    internal_model_id: null,
    model_parameters: null,
    provided_usage_details: {},
    usage_details: {},
    provided_cost_details: {},
    cost_details: {},
    total_cost: null,
    completion_start_time: null,
    prompt_id: null,
    prompt_name: null,
    prompt_version: null,
    environment: 'default',
    usage_pricing_tier_id: null,
    usage_pricing_tier_name: null,
    tool_definitions: {},
    tool_calls: [],
    tool_call_names: [],
    created_at: chTime(ctx.now),
    updated_at: chTime(ctx.now),
    event_ts: chTime(ctx.now),
    is_deleted: 0,
  };
}

/** The observation fields an event may set; absent (undefined or null) fields keep their value. */
export type ObservationPatch = Partial<Omit<GenerationBody, 'usageDetails'>> & {
  type?: ObservationType | undefined;
  endTime?: string | null;
  usageDetails?: Record<string, number | Record<string, number | null | undefined> | null> | null;
};

/** Usage in the store's shape: `input`, `output`, `total` (+ any raw detail keys). */
export function usageDetails(body: ObservationPatch): Record<string, number> {
  const out: Record<string, number> = {};
  const u = body.usage as Record<string, number | null | undefined> | null | undefined;
  if (u) {
    const put = (k: string, v: number | null | undefined) => {
      if (typeof v === 'number') out[k] = v;
    };
    put('input', u['input'] ?? u['promptTokens']);
    put('output', u['output'] ?? u['completionTokens']);
    put('total', u['total'] ?? u['totalTokens']);
  }
  for (const [k, v] of Object.entries(body.usageDetails ?? {})) {
    if (typeof v === 'number') out[normalUsageKey(k)] = v;
    else if (v && typeof v === 'object') {
      // OpenAI detail objects: prompt_tokens_details.cached_tokens -> input_cached_tokens.
      const prefix = k.startsWith('prompt') || k.startsWith('input') ? 'input' : 'output';
      for (const [dk, dv] of Object.entries(v)) if (typeof dv === 'number') out[`${prefix}_${dk}`] = dv;
    }
  }
  if (out['total'] === undefined && (out['input'] !== undefined || out['output'] !== undefined)) {
    out['total'] = (out['input'] ?? 0) + (out['output'] ?? 0);
  }
  return out;
}

const USAGE_ALIASES: Record<string, string> = {
  prompt_tokens: 'input',
  input_tokens: 'input',
  completion_tokens: 'output',
  output_tokens: 'output',
  total_tokens: 'total',
};
const normalUsageKey = (k: string) => USAGE_ALIASES[k] ?? k;

export function costDetails(body: ObservationPatch): Record<string, number> {
  const out: Record<string, number> = { ...(body.costDetails ?? {}) };
  const u = body.usage as Record<string, number | null | undefined> | null | undefined;
  if (u) {
    if (typeof u['inputCost'] === 'number') out['input'] = u['inputCost'];
    if (typeof u['outputCost'] === 'number') out['output'] = u['outputCost'];
    if (typeof u['totalCost'] === 'number') out['total'] = u['totalCost'];
  }
  if (out['total'] === undefined && Object.keys(out).length > 0) {
    out['total'] = Object.values(out).reduce((a, b) => a + b, 0);
  }
  return out;
}

/** Merges one observation event body onto the observation row. */
export function applyObservation(row: Row, body: ObservationPatch, ctx: RowContext): Row {
  const next = mergeBody(
    row,
    {
      type: body.type,
      parent_observation_id: body.parentObservationId,
      start_time: given(body.startTime) ? chTime(body.startTime) : undefined,
      end_time: given(body.endTime) ? chTime(body.endTime) : undefined,
      name: body.name,
      level: body.level,
      status_message: body.statusMessage,
      version: body.version,
      input: jsonText(body.input),
      output: jsonText(body.output),
      provided_model_name: body.model,
      model_parameters: given(body.modelParameters) ? JSON.stringify(body.modelParameters) : undefined,
      completion_start_time: given(body.completionStartTime) ? chTime(body.completionStartTime) : undefined,
      prompt_name: body.promptName,
      prompt_version: body.promptVersion,
      environment: body.environment,
    },
    body.metadata,
    ctx,
  );
  const usage = usageDetails(body);
  if (Object.keys(usage).length > 0) {
    next['provided_usage_details'] = usage;
    next['usage_details'] = usage;
  }
  const cost = costDetails(body);
  if (Object.keys(cost).length > 0) {
    next['provided_cost_details'] = cost;
    next['cost_details'] = cost;
    next['total_cost'] = cost['total'] ?? null;
  }
  return next;
}

export function scoreRow(
  body: ScoreBody,
  eventTimestamp: string,
  ctx: RowContext,
  attribution: Attribution,
): Row {
  const numeric = typeof body.value === 'number';
  const dataType = body.dataType ?? (numeric ? 'NUMERIC' : 'CATEGORICAL');
  return {
    id: body.id ?? randomUUID(),
    timestamp: chTime(eventTimestamp),
    project_id: ctx.projectId,
    environment: body.environment ?? 'default',
    trace_id: body.traceId ?? null,
    session_id: body.sessionId ?? null,
    dataset_run_id: body.datasetRunId ?? null,
    observation_id: body.observationId ?? null,
    name: body.name,
    value: numeric ? body.value : 0,
    string_value: numeric ? null : body.value,
    long_string_value: dataType === 'TEXT' ? body.value : '',
    source: body.source ?? 'API',
    comment: body.comment ?? null,
    metadata: metadataMap(body.metadata),
    author_user_id: null,
    config_id: body.configId ?? null,
    data_type: dataType,
    queue_id: body.queueId ?? null,
    execution_trace_id: body.executionTraceId ?? null,
    created_at: chTime(ctx.now),
    updated_at: chTime(ctx.now),
    event_ts: chTime(ctx.now),
    is_deleted: 0,
    ingestion_api_key: attribution.apiKey,
    ingestion_sdk_name: attribution.sdkName,
    ingestion_sdk_version: attribution.sdkVersion,
  };
}

const attributionColumns = (a: Attribution) => ({
  ingestion_api_key: a.apiKey,
  ingestion_sdk_name: a.sdkName,
  ingestion_sdk_version: a.sdkVersion,
});

/** An observation row as staged for propagation, partitioned by the time it was first seen. */
export function stagedObservation(obs: Row, ctx: RowContext, a: Attribution): Row {
  return { ...obs, s3_first_seen_timestamp: chTime(ctx.now), ...attributionColumns(a) };
}

/** The span id of a trace's virtual root: the trace as the legacy tables hold it. */
export const virtualRootId = (traceId: string): string => `t-${traceId}`;

/**
 * Removes from `events_full` the virtual root a trace had before its timestamp moved (a trace
 * update carrying another timestamp): `start_time` is in the sorting key, so the root at the new
 * time is another row, and this newer deleted version collapses the old one, whether the old one
 * is already propagated or still staged.
 */
export function movedRootTombstone(projectId: string, traceId: string, oldStart: string, now: number): Row {
  return {
    project_id: projectId,
    trace_id: traceId,
    span_id: virtualRootId(traceId),
    parent_span_id: '',
    start_time: oldStart,
    type: 'SPAN',
    event_ts: chTime(now, 6),
    is_deleted: 1,
  };
}

/** A trace staged as its virtual root span `t-<traceId>` (type SPAN, no parent). */
export function stagedTraceRoot(trace: Row, ctx: RowContext, a: Attribution): Row {
  const root = emptyObservationRow(
    ctx,
    virtualRootId(String(trace['id'])),
    String(trace['id']),
    'SPAN',
    '1970-01-01T00:00:00Z',
  );
  return stagedObservation(
    {
      ...root,
      start_time: trace['timestamp'],
      name: trace['name'],
      environment: trace['environment'],
      version: trace['version'],
      metadata: trace['metadata'],
      input: trace['input'],
      output: trace['output'],
      created_at: trace['created_at'],
    },
    ctx,
    a,
  );
}
