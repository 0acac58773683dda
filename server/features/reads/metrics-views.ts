/**
 * The views of the metrics APIs. Version 4 (`/api/public/v2/metrics`) reads observations from
 * `events_core`; the legacy endpoint (`/api/public/metrics`) reads the version 3 tables. Both
 * share the score views over `scores`, which version 4 keeps.
 */
import {
  INPUT_TOKENS,
  IS_ROOT,
  LATENCY_MS,
  millisBetween,
  OBSERVATION_COLUMNS,
  OUTPUT_TOKENS,
  TOTAL_COST,
  TOTAL_TOKENS,
  TTFT_MS,
} from './events-columns.ts';
import type { ColumnTable } from './filters.ts';
import type { MetricsView } from './metrics.ts';

const perSecond = (tokens: string) => `(${tokens} / nullIf(${LATENCY_MS} / 1000, 0))`;

const EVENTS_OBSERVATIONS: MetricsView = {
  table: 'events_core',
  final: true,
  timeColumn: 'start_time',
  dimensions: {
    environment: 'environment',
    type: 'type',
    name: 'name',
    level: 'level',
    version: 'version',
    tags: 'tags',
    release: 'release',
    traceName: 'trace_name',
    traceRelease: 'release',
    traceVersion: 'version',
    providedModelName: 'provided_model_name',
    promptName: 'prompt_name',
    promptVersion: 'prompt_version',
    isRootObservation: IS_ROOT,
    startTimeMonth: "formatDateTime(start_time, '%Y-%m')",
  },
  highCardinality: ['id', 'traceId', 'userId', 'sessionId', 'parentObservationId'],
  highCardinalityDimensions: {
    id: 'span_id',
    traceId: 'trace_id',
    userId: 'user_id',
    sessionId: 'session_id',
    parentObservationId: 'parent_span_id',
  },
  measures: {
    count: '1',
    latency: LATENCY_MS,
    streamingLatency: millisBetween('completion_start_time', 'end_time'),
    inputTokens: INPUT_TOKENS,
    outputTokens: OUTPUT_TOKENS,
    totalTokens: TOTAL_TOKENS,
    outputTokensPerSecond: perSecond(OUTPUT_TOKENS),
    tokensPerSecond: perSecond(TOTAL_TOKENS),
    inputCost: 'calculated_input_cost',
    outputCost: 'calculated_output_cost',
    totalCost: TOTAL_COST,
    timeToFirstToken: TTFT_MS,
  },
  filters: OBSERVATION_COLUMNS,
};

/** Filters on text columns: the API's name -> the column. */
const textFilters = (columns: Record<string, string>): ColumnTable =>
  Object.fromEntries(Object.entries(columns).map(([name, expr]) => [name, { expr, kind: 'string' }]));

/** The version 3 tables' and the scores' `metadata` map, filtered by key. */
const METADATA_MAP: ColumnTable[string] = {
  expr: 'metadata',
  kind: 'metadata',
  value: (k) => `metadata[${k}]`,
};

const SCORE_FILTERS: ColumnTable = {
  ...textFilters({
    id: 'id',
    name: 'name',
    source: 'source',
    dataType: 'data_type',
    environment: 'environment',
    configId: 'config_id',
    traceId: 'trace_id',
    sessionId: 'session_id',
    observationId: 'observation_id',
  }),
  value: { expr: 'value', kind: 'number' },
  stringValue: { expr: 'string_value', kind: 'string' },
  timestamp: { expr: 'timestamp', kind: 'datetime' },
  metadata: METADATA_MAP,
};

const scoreView = (types: string[], extra: Record<string, string>): MetricsView => ({
  table: 'scores',
  final: true,
  timeColumn: 'timestamp',
  where: [`data_type IN (${types.map((t) => `'${t}'`).join(', ')})`],
  dimensions: {
    environment: 'environment',
    name: 'name',
    source: 'source',
    dataType: 'data_type',
    configId: 'config_id',
    timestampMonth: "formatDateTime(timestamp, '%Y-%m')",
    timestampDay: "formatDateTime(timestamp, '%Y-%m-%d')",
    ...extra,
  },
  highCardinality: ['id', 'traceId', 'userId', 'sessionId', 'observationId'],
  highCardinalityDimensions: {
    id: 'id',
    traceId: 'trace_id',
    sessionId: 'session_id',
    observationId: 'observation_id',
  },
  measures: types.includes('CATEGORICAL') ? { count: '1' } : { count: '1', value: 'value' },
  filters: SCORE_FILTERS,
});

const SCORE_VIEWS: Record<string, MetricsView> = {
  'scores-numeric': scoreView(['NUMERIC', 'BOOLEAN'], { value: 'value' }),
  'scores-boolean': scoreView(['BOOLEAN'], {
    booleanValue: "if(value = 1, 'true', 'false')",
    value: 'value',
  }),
  'scores-categorical': scoreView(['CATEGORICAL'], { stringValue: 'string_value' }),
};

/** The GenAI metrics' text columns (`genai_metrics`), each a dimension and a filter. */
const GENAI_METRIC_TEXT = {
  metricName: 'metric_name',
  unit: 'unit',
  model: 'model',
  requestModel: 'request_model',
  responseModel: 'response_model',
  provider: 'provider',
  operation: 'operation',
  tokenType: 'token_type',
  serviceName: 'service_name',
  environment: 'environment',
  serverAddress: 'server_address',
  errorType: 'error_type',
  temporality: 'temporality',
};

/**
 * `genai-metrics`: the histogram points of the OTel GenAI metrics sent to
 * `/api/public/otel/v1/metrics` (or MetricsService over gRPC). `value` is a point's sum (tokens,
 * seconds), `measurements` its count; a series' cumulative points count once (the newest).
 */
const GENAI_METRICS: MetricsView = {
  table: 'genai_metrics',
  final: true,
  timeColumn: 'timestamp',
  dimensions: { ...GENAI_METRIC_TEXT, timestampMonth: "formatDateTime(timestamp, '%Y-%m')" },
  highCardinality: [],
  measures: { count: '1', value: 'sum', measurements: 'count', min: 'min', max: 'max' },
  filters: {
    ...textFilters(GENAI_METRIC_TEXT),
    timestamp: { expr: 'timestamp', kind: 'datetime' },
    attributes: { expr: 'attributes', kind: 'metadata', value: (k) => `attributes[${k}]` },
  },
};

export const METRICS_V2_VIEWS: Record<string, MetricsView> = {
  observations: EVENTS_OBSERVATIONS,
  'genai-metrics': GENAI_METRICS,
  ...SCORE_VIEWS,
};

/** The legacy traces' text columns, each a dimension and a filter. */
const LEGACY_TRACE_TEXT = {
  id: 'id',
  name: 'name',
  userId: 'user_id',
  sessionId: 'session_id',
  release: 'release',
  version: 'version',
  environment: 'environment',
};
const LEGACY_TRACES: MetricsView = {
  table: 'traces',
  final: true,
  timeColumn: 'timestamp',
  dimensions: { ...LEGACY_TRACE_TEXT, tags: 'tags', timestampMonth: "formatDateTime(timestamp, '%Y-%m')" },
  highCardinality: [],
  measures: { count: '1' },
  filters: {
    ...textFilters(LEGACY_TRACE_TEXT),
    tags: { expr: 'tags', kind: 'array' },
    timestamp: { expr: 'timestamp', kind: 'datetime' },
    metadata: METADATA_MAP,
  },
};

const legacyLatency = millisBetween('start_time', 'end_time');
/** The legacy observations' text columns, each a dimension and a filter. */
const LEGACY_OBSERVATION_TEXT = {
  id: 'id',
  traceId: 'trace_id',
  type: 'type',
  name: 'name',
  level: 'level',
  environment: 'environment',
  version: 'version',
  providedModelName: 'provided_model_name',
};
const LEGACY_OBSERVATIONS: MetricsView = {
  table: 'observations',
  final: true,
  timeColumn: 'start_time',
  dimensions: {
    ...LEGACY_OBSERVATION_TEXT,
    promptName: 'prompt_name',
    promptVersion: 'prompt_version',
    startTimeMonth: "formatDateTime(start_time, '%Y-%m')",
  },
  highCardinality: [],
  measures: {
    count: '1',
    latency: legacyLatency,
    timeToFirstToken: millisBetween('start_time', 'completion_start_time'),
    inputTokens: "usage_details['input']",
    outputTokens: "usage_details['output']",
    totalTokens: "usage_details['total']",
    inputCost: "cost_details['input']",
    outputCost: "cost_details['output']",
    totalCost: 'total_cost',
  },
  filters: {
    ...textFilters(LEGACY_OBSERVATION_TEXT),
    startTime: { expr: 'start_time', kind: 'datetime' },
    metadata: METADATA_MAP,
  },
};

export const METRICS_V1_VIEWS: Record<string, MetricsView> = {
  traces: LEGACY_TRACES,
  observations: LEGACY_OBSERVATIONS,
  ...SCORE_VIEWS,
};
