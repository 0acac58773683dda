/**
 * What a judgment reads: the judged observation (or Legacy trace) and the values its rule's mapping
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
        '  [] AS tool_calls, environment FROM traces FINAL',
        `WHERE project_id = ${p.str(e.projectId)} AND id = ${p.str(e.traceId)} LIMIT 1`,
      ].join('\n')
    : [
        'SELECT input, output, metadata_names, metadata_values, tool_calls, environment FROM events_full FINAL',
        `WHERE project_id = ${p.str(e.projectId)} AND trace_id = ${p.str(e.traceId)} AND span_id = ${p.str(e.observationId)}`,
        `  AND start_time = ${p.time(e.observationStartTime)} LIMIT 1`,
      ].join('\n');
  const rows = await (
    await analytics.query({ query, query_params: p.values, format: 'JSONEachRow' })
  ).json<JudgedRow>();
  return rows[0];
}

function sourceValue(o: JudgedRow, m: MappingEntry): unknown {
  switch (m.source) {
    case 'input':
      return selectValue(tryParse(o.input), m.jsonPath);
    case 'output':
      return selectValue(tryParse(o.output), m.jsonPath);
    case 'metadata':
      return selectValue(
        Object.fromEntries(o.metadata_names.map((n, i) => [n, tryParse(o.metadata_values[i] ?? '')])),
        m.jsonPath,
      );
    case 'tool_calls':
      return selectValue(o.tool_calls.map(tryParse), m.jsonPath);
    default:
      return undefined;
  }
}

/** Each mapped variable's value, as the judge renders it into the prompt. */
export function mappedValues(o: JudgedRow, mapping: MappingEntry[]): Record<string, unknown> {
  return Object.fromEntries(mapping.map((m) => [m.variable, sourceValue(o, m)]));
}
