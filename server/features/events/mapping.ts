/**
 * The legacy-to-events mapping (pure): how a legacy observation row joined with its trace becomes an
 * `events_full` row. Shared by the dual-write propagation (worker) and the historic backfill;
 * ingestion tells OTLP-born legacy rows apart by the same test (FROM_OTLP).
 */
export interface ObservationMapping {
  /** Copy trace metadata under the observation's (dual write does; the historic backfill does not). */
  traceMetadata: boolean;
  /** Suffix of `source`: `dual-write` or `backfill`. */
  source: 'dual-write' | 'backfill';
}

/**
 * Column expressions that turn a legacy observation row `obs` joined with its trace `t` into an
 * `events_full` row, by column. Shared by the propagation job and the historic backfill.
 */
export function observationEventExpressions(m: ObservationMapping): Record<string, string> {
  const metadata = m.traceMetadata ? 'mapUpdate(t.metadata, obs.metadata)' : 'obs.metadata';
  return {
    ...BASE_EXPRESSIONS,
    metadata_names: `mapKeys(${metadata})`,
    metadata_values: `mapValues(${metadata})`,
    source: `if(${FROM_OTLP('obs')}, 'otel-${m.source}', 'ingestion-api-${m.source}')`,
  };
}

/** The trace columns the join needs. */
export const TRACE_JOIN_COLUMNS =
  'project_id, id, name, user_id, session_id, release, version, tags, public, bookmarked, metadata';

/** The observation came from an OTLP span (the OTLP mapping always records its resource). */
export const FROM_OTLP = (alias: string) => `mapContains(${alias}.metadata, 'resourceAttributes')`;

const BASE_EXPRESSIONS: Record<string, string> = {
  project_id: 'obs.project_id',
  trace_id: 'obs.trace_id',
  span_id: 'obs.id',
  // Top-level batch observations hang under the trace's virtual root; an OTLP trace's top-level
  // span is its root, as the direct write stores it, so both copies of a span are one row.
  parent_span_id: `if(obs.id = concat('t-', obs.trace_id), '', coalesce(obs.parent_observation_id, if(${FROM_OTLP('obs')}, '', concat('t-', obs.trace_id))))`,
  start_time: 'obs.start_time',
  end_time: 'obs.end_time',
  completion_start_time: 'obs.completion_start_time',
  name: 'obs.name',
  type: 'obs.type',
  environment: 'obs.environment',
  version: "coalesce(obs.version, t.version, '')",
  release: "coalesce(t.release, '')",
  trace_name: "coalesce(t.name, '')",
  user_id: "coalesce(t.user_id, '')",
  session_id: "coalesce(t.session_id, '')",
  tags: 't.tags',
  level: 'obs.level',
  status_message: "coalesce(obs.status_message, '')",
  is_app_root: 'false',
  // Trace-level flags reach every event of the trace, not only its top-level ones (the spec's
  // list of trace properties the backfill propagates onto child events).
  bookmarked: 'coalesce(t.bookmarked, false)',
  public: 'coalesce(t.public, false)',
  prompt_id: "coalesce(obs.prompt_id, '')",
  prompt_name: "coalesce(obs.prompt_name, '')",
  prompt_version: 'obs.prompt_version',
  model_id: "coalesce(obs.internal_model_id, '')",
  provided_model_name: "coalesce(obs.provided_model_name, '')",
  model_parameters: "coalesce(obs.model_parameters, '')",
  provided_usage_details: 'obs.provided_usage_details',
  usage_details: 'obs.usage_details',
  provided_cost_details: 'obs.provided_cost_details',
  cost_details: 'obs.cost_details',
  usage_pricing_tier_id: 'obs.usage_pricing_tier_id',
  usage_pricing_tier_name: 'obs.usage_pricing_tier_name',
  tool_definitions: 'obs.tool_definitions',
  tool_calls: 'obs.tool_calls',
  tool_call_names: 'obs.tool_call_names',
  input: "coalesce(obs.input, '')",
  output: "coalesce(obs.output, '')",
  // Observation metadata wins over trace metadata on equal keys.
  metadata_names: 'mapKeys(mapUpdate(t.metadata, obs.metadata))',
  metadata_values: 'mapValues(mapUpdate(t.metadata, obs.metadata))',
  event_bytes: "length(coalesce(obs.input, '')) + length(coalesce(obs.output, ''))",
  created_at: 'obs.created_at',
  updated_at: 'obs.updated_at',
  event_ts: 'obs.event_ts',
  is_deleted: 'obs.is_deleted',
  ingestion_api_key: 'obs.ingestion_api_key',
  ingestion_sdk_name: 'obs.ingestion_sdk_name',
  ingestion_sdk_version: 'obs.ingestion_sdk_version',
};

/** `expr AS col` lines for the columns an expression map fills, and the column list. */
export function selectList(
  expressions: Record<string, string>,
  columns: readonly string[],
): { columns: string[]; select: string } {
  const used = columns.filter((c) => c in expressions);
  return { columns: used, select: used.map((c) => `${expressions[c]} AS ${c}`).join(',\n  ') };
}

export const ATTRIBUTED = ['ingestion_api_key', 'ingestion_sdk_name', 'ingestion_sdk_version'];
