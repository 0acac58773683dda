/**
 * The API columns of an observation as SQL over the events tables (`events_core` and
 * `events_full` share their columns). One table serves filters of the observations API and the
 * observations view of the metrics API, so a column means the same everywhere.
 */
import type { ColumnTable } from './filters.ts';

/** Logical root: no physical parent, or marked as the application's root by the SDK. */
export const IS_ROOT = "(parent_span_id = '' OR is_app_root)";

/** Sum of the usage (or cost) entries whose key mentions `part`, as the reference computes them. */
const usageSum = (part: string) =>
  `arraySum(mapValues(mapFilter((k, v) -> positionCaseInsensitive(k, '${part}') > 0, usage_details)))`;
export const INPUT_TOKENS = usageSum('input');
export const OUTPUT_TOKENS = usageSum('output');
export const TOTAL_TOKENS =
  "if(mapContains(usage_details, 'total'), usage_details['total'], arraySum(mapValues(usage_details)))";
export const TOTAL_COST =
  "if(mapContains(cost_details, 'total'), cost_details['total'], calculated_total_cost)";
/** Milliseconds between two columns, NULL while the later one is unknown. */
export const millisBetween = (from: string, to: string) =>
  `if(isNull(${to}), NULL, date_diff('millisecond', ${from}, ${to}))`;
export const LATENCY_MS = millisBetween('start_time', 'end_time');
export const TTFT_MS = millisBetween('start_time', 'completion_start_time');
export const metadataValue = (key: string) => `metadata_values[indexOf(metadata_names, ${key})]`;

export const OBSERVATION_COLUMNS: ColumnTable = {
  id: { expr: 'span_id', kind: 'string' },
  type: { expr: 'type', kind: 'string' },
  name: { expr: 'name', kind: 'string' },
  traceId: { expr: 'trace_id', kind: 'string' },
  startTime: { expr: 'start_time', kind: 'datetime' },
  endTime: { expr: 'end_time', kind: 'datetime' },
  environment: { expr: 'environment', kind: 'string' },
  level: { expr: 'level', kind: 'string' },
  statusMessage: { expr: 'status_message', kind: 'string' },
  version: { expr: 'version', kind: 'string' },
  userId: { expr: 'user_id', kind: 'string' },
  sessionId: { expr: 'session_id', kind: 'string' },
  parentObservationId: { expr: 'parent_span_id', kind: 'string' },
  isRootObservation: { expr: IS_ROOT, kind: 'boolean' },
  traceName: { expr: 'trace_name', kind: 'string' },
  traceTags: { expr: 'tags', kind: 'array' },
  tags: { expr: 'tags', kind: 'array' },
  release: { expr: 'release', kind: 'string' },
  latency: { expr: `(${LATENCY_MS} / 1000)`, kind: 'number' },
  timeToFirstToken: { expr: `(${TTFT_MS} / 1000)`, kind: 'number' },
  tokensPerSecond: {
    expr: `(${OUTPUT_TOKENS} / nullIf(${LATENCY_MS} / 1000, 0))`,
    kind: 'number',
  },
  inputTokens: { expr: INPUT_TOKENS, kind: 'number' },
  outputTokens: { expr: OUTPUT_TOKENS, kind: 'number' },
  totalTokens: { expr: TOTAL_TOKENS, kind: 'number' },
  tokens: { expr: TOTAL_TOKENS, kind: 'number' },
  inputCost: { expr: 'calculated_input_cost', kind: 'number' },
  outputCost: { expr: 'calculated_output_cost', kind: 'number' },
  totalCost: { expr: TOTAL_COST, kind: 'number' },
  model: { expr: 'provided_model_name', kind: 'string' },
  providedModelName: { expr: 'provided_model_name', kind: 'string' },
  promptName: { expr: 'prompt_name', kind: 'string' },
  promptVersion: { expr: 'prompt_version', kind: 'number' },
  input: { expr: 'input', kind: 'text' },
  output: { expr: 'output', kind: 'text' },
  metadata: { expr: 'metadata_values', kind: 'metadata', value: metadataValue },
};
