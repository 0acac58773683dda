/**
 * Column lists of the analytics tables, as data: the migrations render their DDL from these, and
 * the writers, the materialized view and the backfill take their column names from here, so a
 * column is declared once. Types and defaults follow the reference schema (research notes §1).
 */

export interface Column {
  name: string;
  type: string;
  /** Text after the type: DEFAULT, MATERIALIZED, ALIAS, CODEC. */
  extra?: string;
}

const c = (name: string, type: string, extra?: string): Column =>
  extra ? { name, type, extra } : { name, type };

export const renderColumns = (cols: readonly Column[]): string[] =>
  cols.map((col) => `${col.name} ${col.type}${col.extra ? ` ${col.extra}` : ''}`);

/** Columns a writer provides (no MATERIALIZED or ALIAS columns). */
export const insertable = (cols: readonly Column[]): string[] =>
  cols.filter((col) => !/^(MATERIALIZED|ALIAS)\b/.test(col.extra ?? '')).map((col) => col.name);

const META_MAP = 'Map(LowCardinality(String), String)';
const USAGE_MAP = 'Map(LowCardinality(String), UInt64)';
const COST_MAP_V3 = 'Map(LowCardinality(String), Decimal64(12))';
const CREATED_AT = c('created_at', 'DateTime64(3)', 'DEFAULT now()');
const CREATED_UPDATED = [CREATED_AT, c('updated_at', 'DateTime64(3)', 'DEFAULT now()')];
/** What a ReplacingMergeTree keeps the latest row by (`event_ts`) and deletes with (`is_deleted`). */
const ROW_VERSION_ONLY = [c('event_ts', 'DateTime64(3)'), c('is_deleted', 'UInt8')];
const ROW_VERSION = [...CREATED_UPDATED, ...ROW_VERSION_ONLY];

export const TRACES_V1: Column[] = [
  c('id', 'String'),
  c('timestamp', 'DateTime64(3)'),
  c('name', 'String'),
  c('user_id', 'Nullable(String)'),
  c('metadata', META_MAP),
  c('release', 'Nullable(String)'),
  c('version', 'Nullable(String)'),
  c('project_id', 'String'),
  c('public', 'Bool'),
  c('bookmarked', 'Bool'),
  c('tags', 'Array(String)'),
  c('input', 'Nullable(String)', 'CODEC(ZSTD(3))'),
  c('output', 'Nullable(String)', 'CODEC(ZSTD(3))'),
  c('session_id', 'Nullable(String)'),
  ...ROW_VERSION,
];

export const OBSERVATIONS_V1: Column[] = [
  c('id', 'String'),
  c('trace_id', 'String'),
  c('project_id', 'String'),
  c('type', 'LowCardinality(String)'),
  c('parent_observation_id', 'Nullable(String)'),
  c('start_time', 'DateTime64(3)'),
  c('end_time', 'Nullable(DateTime64(3))'),
  c('name', 'String'),
  c('metadata', META_MAP),
  c('level', 'LowCardinality(String)'),
  c('status_message', 'Nullable(String)'),
  c('version', 'Nullable(String)'),
  c('input', 'Nullable(String)', 'CODEC(ZSTD(3))'),
  c('output', 'Nullable(String)', 'CODEC(ZSTD(3))'),
  c('provided_model_name', 'Nullable(String)'),
  c('internal_model_id', 'Nullable(String)'),
  c('model_parameters', 'Nullable(String)'),
  c('provided_usage_details', USAGE_MAP),
  c('usage_details', USAGE_MAP),
  c('provided_cost_details', COST_MAP_V3),
  c('cost_details', COST_MAP_V3),
  c('total_cost', 'Nullable(Decimal64(12))'),
  c('completion_start_time', 'Nullable(DateTime64(3))'),
  c('prompt_id', 'Nullable(String)'),
  c('prompt_name', 'Nullable(String)'),
  c('prompt_version', 'Nullable(UInt16)'),
  ...ROW_VERSION,
];

export const SCORES_V1: Column[] = [
  c('id', 'String'),
  c('timestamp', 'DateTime64(3)'),
  c('project_id', 'String'),
  c('trace_id', 'Nullable(String)'),
  c('observation_id', 'Nullable(String)'),
  c('name', 'String'),
  c('value', 'Float64'),
  c('source', 'String'),
  c('comment', 'Nullable(String)', 'CODEC(ZSTD(1))'),
  ...ROW_VERSION,
];

/** Columns added to the version 3 tables after their creation, by migration. */
export const ENVIRONMENT = c('environment', 'LowCardinality(String)', "DEFAULT 'default'");
export const SCORES_ADDED: Record<string, Column[]> = {
  author_and_config: [c('author_user_id', 'Nullable(String)'), c('config_id', 'Nullable(String)')],
  data_type: [c('data_type', 'String', "DEFAULT 'NUMERIC'"), c('string_value', 'Nullable(String)')],
  queue: [c('queue_id', 'Nullable(String)')],
  metadata: [c('metadata', META_MAP)],
  session_and_run: [c('session_id', 'Nullable(String)'), c('dataset_run_id', 'Nullable(String)')],
  execution_trace: [c('execution_trace_id', 'Nullable(String)')],
  long_string: [c('long_string_value', 'String', "DEFAULT '' CODEC(ZSTD(3))")],
};
export const OBSERVATIONS_PRICING_TIER = [
  c('usage_pricing_tier_id', 'Nullable(String)'),
  c('usage_pricing_tier_name', 'Nullable(String)'),
];
export const OBSERVATIONS_TOOLS = [
  c('tool_definitions', 'Map(String, String)', 'DEFAULT map()'),
  c('tool_calls', 'Array(String)', 'DEFAULT []'),
  c('tool_call_names', 'Array(String)', 'DEFAULT []'),
];
export const ATTRIBUTION = [
  c('ingestion_api_key', 'String', "DEFAULT ''"),
  c('ingestion_sdk_name', 'LowCardinality(String)', "DEFAULT 'unknown'"),
  c('ingestion_sdk_version', 'LowCardinality(String)', "DEFAULT 'unknown'"),
];

export const OBSERVATIONS: Column[] = [
  ...OBSERVATIONS_V1,
  ENVIRONMENT,
  ...OBSERVATIONS_PRICING_TIER,
  ...OBSERVATIONS_TOOLS,
];

/** A run item and what it links, in both run-item tables. */
const RUN_ITEM = [
  c('id', 'String'),
  c('project_id', 'String'),
  c('dataset_run_id', 'String'),
  c('dataset_item_id', 'String'),
  c('dataset_id', 'String'),
  c('trace_id', 'String'),
  c('observation_id', 'Nullable(String)'),
];

export const DATASET_RUN_ITEMS_RMT: Column[] = [
  ...RUN_ITEM,
  c('error', 'Nullable(String)'),
  ...CREATED_UPDATED,
  c('dataset_run_name', 'String'),
  c('dataset_run_description', 'Nullable(String)'),
  c('dataset_run_metadata', META_MAP),
  c('dataset_run_created_at', 'DateTime64(3)'),
  c('dataset_item_input', 'Nullable(String)', 'CODEC(ZSTD(3))'),
  c('dataset_item_expected_output', 'Nullable(String)', 'CODEC(ZSTD(3))'),
  c('dataset_item_metadata', META_MAP),
  c('dataset_item_version', 'Nullable(DateTime64(3))'),
  ...ROW_VERSION_ONLY,
];

/** The older, append-only run-item table that version 4 drops. */
export const DATASET_RUN_ITEMS_LEGACY: Column[] = [...RUN_ITEM, CREATED_AT];

export const EVENT_LOG: Column[] = [
  c('id', 'String'),
  c('project_id', 'String'),
  c('entity_type', 'String'),
  c('entity_id', 'String'),
  c('event_id', 'Nullable(String)'),
  c('bucket_name', 'String'),
  c('bucket_path', 'String'),
  ...CREATED_UPDATED,
];

export const PROJECT_ENVIRONMENTS: Column[] = [
  c('project_id', 'String'),
  c('environment', 'String'),
  c('created_at', 'DateTime64(3)', 'DEFAULT now()'),
];

const STR_MAP = 'Map(LowCardinality(String), UInt64)';
const COST_MAP = 'Map(LowCardinality(String), Decimal(18, 12))';
const costSum = (part: string) =>
  `MATERIALIZED arraySum(mapValues(mapFilter((k, v) -> ${part}, cost_details)))`;

/** The wide events table (`events_full`); `events_core` has the same columns. */
export const EVENTS: Column[] = [
  c('project_id', 'String'),
  c('trace_id', 'String'),
  c('span_id', 'String'),
  c('parent_span_id', 'String'),
  c('start_time', 'DateTime64(6)'),
  c('end_time', 'Nullable(DateTime64(6))'),
  c('completion_start_time', 'Nullable(DateTime64(6))'),
  c('name', 'String'),
  c('type', 'LowCardinality(String)'),
  c('environment', 'LowCardinality(String)', "DEFAULT 'default'"),
  c('version', 'String'),
  c('release', 'String'),
  c('trace_name', 'String'),
  c('user_id', 'String'),
  c('session_id', 'String'),
  c('tags', 'Array(String)'),
  c('level', 'LowCardinality(String)'),
  c('status_message', 'String'),
  c('is_app_root', 'Bool', 'DEFAULT false'),
  c('bookmarked', 'Bool', 'DEFAULT false'),
  c('public', 'Bool', 'DEFAULT false'),
  c('prompt_id', 'String'),
  c('prompt_name', 'String'),
  c('prompt_version', 'Nullable(UInt16)'),
  c('model_id', 'String'),
  c('provided_model_name', 'String'),
  c('model_parameters', 'String'),
  c('provided_usage_details', STR_MAP),
  c('usage_details', STR_MAP),
  c('provided_cost_details', COST_MAP),
  c('cost_details', COST_MAP),
  c('calculated_input_cost', 'Decimal(18, 12)', costSum("positionCaseInsensitive(k, 'input') > 0")),
  c('calculated_output_cost', 'Decimal(18, 12)', costSum("positionCaseInsensitive(k, 'output') > 0")),
  c(
    'calculated_total_cost',
    'Decimal(18, 12)',
    costSum("positionCaseInsensitive(k, 'input') > 0 OR positionCaseInsensitive(k, 'output') > 0"),
  ),
  c('total_cost', 'Decimal(18, 12)', "ALIAS cost_details['total']"),
  c('usage_pricing_tier_id', 'Nullable(String)'),
  c('usage_pricing_tier_name', 'Nullable(String)'),
  c('tool_definitions', 'Map(String, String)'),
  c('tool_calls', 'Array(String)'),
  c('tool_call_names', 'Array(String)'),
  c('input', 'String', 'CODEC(ZSTD(3))'),
  c('input_length', 'UInt64', 'MATERIALIZED lengthUTF8(input)'),
  c('output', 'String', 'CODEC(ZSTD(3))'),
  c('output_length', 'UInt64', 'MATERIALIZED lengthUTF8(output)'),
  c('metadata_names', 'Array(String)'),
  c('metadata_values', 'Array(String)'),
  c('experiment_id', 'String'),
  c('experiment_name', 'String'),
  c('experiment_metadata_names', 'Array(String)'),
  c('experiment_metadata_values', 'Array(String)'),
  c('experiment_description', 'String'),
  c('experiment_dataset_id', 'String'),
  c('experiment_item_id', 'String'),
  c('experiment_item_version', 'Nullable(DateTime64(6))'),
  c('experiment_item_expected_output', 'String'),
  c('experiment_item_metadata_names', 'Array(String)'),
  c('experiment_item_metadata_values', 'Array(String)'),
  c('experiment_item_root_span_id', 'String'),
  c('source', 'LowCardinality(String)'),
  c('service_name', 'String'),
  c('service_version', 'String'),
  c('scope_name', 'String'),
  c('scope_version', 'String'),
  c('telemetry_sdk_language', 'LowCardinality(String)'),
  c('telemetry_sdk_name', 'String'),
  c('telemetry_sdk_version', 'String'),
  c('blob_storage_file_path', 'String'),
  c('event_bytes', 'UInt64'),
  c('created_at', 'DateTime64(6)', 'DEFAULT now()'),
  c('updated_at', 'DateTime64(6)', 'DEFAULT now()'),
  c('event_ts', 'DateTime64(6)'),
  c('is_deleted', 'UInt8'),
];

/** Columns of `events_core` that the materialized view truncates (characters kept). */
export const CORE_TRUNCATION = 200;

/**
 * `genai_metrics`: histogram points of the OTel GenAI metrics (features/otel/genai-metrics.ts), one row per
 * series and start time; a later cumulative point of the series replaces the earlier one.
 */
export const GENAI_METRICS: Column[] = [
  c('project_id', 'String'),
  c('metric_name', 'LowCardinality(String)'),
  c('unit', 'LowCardinality(String)'),
  c('series_id', 'String'),
  c('start_time', 'DateTime64(3)'),
  c('timestamp', 'DateTime64(3)'),
  c('temporality', 'LowCardinality(String)'),
  c('service_name', 'String'),
  c('environment', 'LowCardinality(String)'),
  c('operation', 'LowCardinality(String)'),
  c('provider', 'LowCardinality(String)'),
  c('request_model', 'String'),
  c('response_model', 'String'),
  c('model', 'String'),
  c('token_type', 'LowCardinality(String)'),
  c('server_address', 'String'),
  c('error_type', 'String'),
  c('count', 'UInt64'),
  c('sum', 'Float64'),
  c('min', 'Nullable(Float64)'),
  c('max', 'Nullable(Float64)'),
  c('bucket_counts', 'Array(UInt64)'),
  c('explicit_bounds', 'Array(Float64)'),
  c('attributes', META_MAP),
  c('event_ts', 'DateTime64(3)'),
];
