/**
 * What a judgment reads: the judged observation (an experiment item's root observation with its
 * dataset item's expected output and metadata, or a Legacy trace) and the values its rule's mapping
 * selects from it. The worker's judge and the rules page's live preview both use these, so the
 * preview shows exactly what the judge will be sent.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { Params } from '../reads/sql.ts';
import type { NewExecution } from './executions.ts';
import { isLegacyTarget, type MappingEntry, selectValue, type Target, tryParse } from './rules.ts';

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

/** What a rule judges: an observation of `events_full`, or a trace of the legacy `traces` table. */
export async function readJudged(
  analytics: ClickHouseClient,
  e: JudgedKey,
  target: Target,
): Promise<JudgedRow | undefined> {
  const p = new Params();
  const query = isLegacyTarget(target)
    ? [
        'SELECT input, output, mapKeys(metadata) AS metadata_names, mapValues(metadata) AS metadata_values,',
        "  [] AS tool_calls, environment, '' AS expected_output, [] AS item_metadata_names, [] AS item_metadata_values",
        'FROM traces FINAL',
        `WHERE project_id = ${p.str(e.projectId)} AND id = ${p.str(e.traceId)} LIMIT 1`,
      ].join('\n')
    : [
        'SELECT input, output, metadata_names, metadata_values, tool_calls, environment,',
        '  experiment_item_expected_output AS expected_output, experiment_item_metadata_names AS item_metadata_names,',
        '  experiment_item_metadata_values AS item_metadata_values FROM events_full FINAL',
        `WHERE project_id = ${p.str(e.projectId)} AND trace_id = ${p.str(e.traceId)} AND span_id = ${p.str(e.observationId)}`,
        `  AND start_time = ${p.time(e.observationStartTime)} LIMIT 1`,
      ].join('\n');
  const rows = await (
    await analytics.query({ query, query_params: p.values, format: 'JSONEachRow' })
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
