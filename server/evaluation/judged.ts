/**
 * What a judgment reads: the judged observation (an experiment item's root observation with its
 * dataset item's expected output and metadata, or a Legacy trace) and the values its rule's mapping
 * selects from it. The worker's judge and the rules page's live preview both use these, so the
 * preview shows exactly what the judge will be sent.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { Params } from '../reads/sql.ts';
import type { NewExecution } from './executions.ts';
import { type MappingEntry, selectValue, tryParse } from './rules.ts';
import type { ScanSource } from './scan.ts';

export interface JudgedRow {
  input: string;
  output: string;
  metadata_names: string[];
  metadata_values: string[];
  tool_calls: string[];
  environment: string;
  /** The experiment item's columns; empty for what is not an experiment item. */
  expected_output: string;
  item_metadata_names: string[];
  item_metadata_values: string[];
}

/** The judged row's key, as an execution names it. */
export type JudgedKey = Pick<
  NewExecution,
  'projectId' | 'traceId' | 'observationId' | 'observationStartTime'
>;

const NO_ITEM = "'' AS expected_output, [] AS item_metadata_names, [] AS item_metadata_values";

/** The legacy row judged (and `also`): the trace when the key names only a trace, else the observation. */
function legacyRow(e: JudgedKey, p: Params, also = ''): string {
  const trace = e.observationId === e.traceId;
  return [
    'SELECT input, output, mapKeys(metadata) AS metadata_names, mapValues(metadata) AS metadata_values,',
    `  ${trace ? '[]' : 'tool_calls'} AS tool_calls, environment${also}`,
    `FROM ${trace ? 'traces' : 'observations'} FINAL`,
    `WHERE project_id = ${p.str(e.projectId)} AND ${
      trace ? `id = ${p.str(e.traceId)}` : `trace_id = ${p.str(e.traceId)} AND id = ${p.str(e.observationId)}`
    } LIMIT 1`,
  ].join('\n');
}

/**
 * The query of what a rule read from `source` judges: an observation of `events_full` (with its
 * experiment item's columns), a trace of the legacy `traces` table, or a dataset run item's
 * observation or trace in the legacy tables with the item's expected output and metadata.
 */
export function buildJudged(e: JudgedKey, source: ScanSource) {
  const p = new Params();
  let query: string;
  if (source === 'trace') query = legacyRow({ ...e, observationId: e.traceId }, p, `, ${NO_ITEM}`);
  else if (source === 'run_item')
    query = [
      `SELECT * FROM (${legacyRow(e, p)}) AS j CROSS JOIN (`,
      "  SELECT coalesce(dataset_item_expected_output, '') AS expected_output,",
      '    mapKeys(dataset_item_metadata) AS item_metadata_names, mapValues(dataset_item_metadata) AS item_metadata_values',
      '  FROM dataset_run_items_rmt FINAL',
      `  WHERE project_id = ${p.str(e.projectId)} AND trace_id = ${p.str(e.traceId)}`,
      `    AND coalesce(observation_id, trace_id) = ${p.str(e.observationId)}`,
      '  ORDER BY created_at DESC LIMIT 1) AS r',
    ].join('\n');
  else
    query = [
      'SELECT input, output, metadata_names, metadata_values, tool_calls, environment,',
      '  experiment_item_expected_output AS expected_output, experiment_item_metadata_names AS item_metadata_names,',
      '  experiment_item_metadata_values AS item_metadata_values FROM events_full FINAL',
      `WHERE project_id = ${p.str(e.projectId)} AND trace_id = ${p.str(e.traceId)} AND span_id = ${p.str(e.observationId)}`,
      `  AND start_time = ${p.time(e.observationStartTime)} LIMIT 1`,
    ].join('\n');
  return { query, params: p.values };
}

export async function readJudged(
  analytics: ClickHouseClient,
  e: JudgedKey,
  source: ScanSource,
): Promise<JudgedRow | undefined> {
  const { query, params } = buildJudged(e, source);
  const rows = await (
    await analytics.query({ query, query_params: params, format: 'JSONEachRow' })
  ).json<JudgedRow>();
  return rows[0];
}

const zip = (names: string[], values: string[]) =>
  Object.fromEntries(names.map((n, i) => [n, tryParse(values[i] ?? '')]));

function sourceValue(o: JudgedRow, m: MappingEntry): unknown {
  switch (m.source) {
    case 'input':
      return selectValue(tryParse(o.input), m.jsonPath);
    case 'output':
      return selectValue(tryParse(o.output), m.jsonPath);
    case 'metadata':
      return selectValue(zip(o.metadata_names, o.metadata_values), m.jsonPath);
    case 'tool_calls':
      return selectValue(o.tool_calls.map(tryParse), m.jsonPath);
    case 'expected_output':
      return o.expected_output === '' ? undefined : selectValue(tryParse(o.expected_output), m.jsonPath);
    case 'experiment_item_metadata':
      return selectValue(zip(o.item_metadata_names, o.item_metadata_values), m.jsonPath);
  }
}

/** Each mapped variable's value, as the judge renders it into the prompt. */
export function mappedValues(o: JudgedRow, mapping: MappingEntry[]): Record<string, unknown> {
  return Object.fromEntries(mapping.map((m) => [m.variable, sourceValue(o, m)]));
}
