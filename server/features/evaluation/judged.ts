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

/** The key columns a batched read returns beside each row, to hand each row to its execution. */
interface Keyed {
  project_id: string;
  trace_id: string;
  span_id: string;
}
const keyOf = (projectId: string, traceId: string, observationId: string) =>
  `${projectId}\u0000${traceId}\u0000${observationId}`;

/**
 * One statement for the observations of `events_full` a batch of executions judges (targets
 * `observation` and `experiment`), each with its experiment item's columns and its key.
 */
export function buildJudgedEvents(keys: readonly JudgedKey[]) {
  const p = new Params();
  const tuples = keys.map(
    (e) =>
      `(${p.str(e.projectId)}, ${p.str(e.traceId)}, ${p.str(e.observationId)}, ${p.time(e.observationStartTime)})`,
  );
  const query = [
    'SELECT project_id, trace_id, span_id, input, output, metadata_names, metadata_values, tool_calls, environment,',
    '  experiment_item_expected_output AS expected_output, experiment_item_metadata_names AS item_metadata_names,',
    '  experiment_item_metadata_values AS item_metadata_values FROM events_full FINAL',
    `WHERE (project_id, trace_id, span_id, start_time) IN (${tuples.join(', ')})`,
    'LIMIT 1 BY project_id, trace_id, span_id',
  ].join('\n');
  return { query, params: p.values };
}

const readsEvents = (source: ScanSource) => source === 'observation' || source === 'experiment';

/**
 * The query of what a rule read from `source` judges: an observation of `events_full` (with its
 * experiment item's columns), a trace of the legacy `traces` table, or a dataset run item's
 * observation or trace in the legacy tables with the item's expected output and metadata.
 */
export function buildJudged(e: JudgedKey, source: ScanSource) {
  if (readsEvents(source)) return buildJudgedEvents([e]);
  const p = new Params();
  const query =
    source === 'trace'
      ? legacyRow({ ...e, observationId: e.traceId }, p, `, ${NO_ITEM}`)
      : [
          `SELECT * FROM (${legacyRow(e, p)}) AS j CROSS JOIN (`,
          "  SELECT coalesce(dataset_item_expected_output, '') AS expected_output,",
          '    mapKeys(dataset_item_metadata) AS item_metadata_names, mapValues(dataset_item_metadata) AS item_metadata_values',
          '  FROM dataset_run_items_rmt FINAL',
          `  WHERE project_id = ${p.str(e.projectId)} AND trace_id = ${p.str(e.traceId)}`,
          `    AND coalesce(observation_id, trace_id) = ${p.str(e.observationId)}`,
          '  ORDER BY created_at DESC LIMIT 1) AS r',
        ].join('\n');
  return { query, params: p.values };
}

async function rowsOf<R>(analytics: ClickHouseClient, q: { query: string; params: Record<string, unknown> }) {
  return (await analytics.query({ query: q.query, query_params: q.params, format: 'JSONEachRow' })).json<R>();
}

export async function readJudged(
  analytics: ClickHouseClient,
  e: JudgedKey,
  source: ScanSource,
): Promise<JudgedRow | undefined> {
  return (await readJudgedMany(analytics, [{ key: e, source }]))[0];
}

/**
 * What each of a batch of executions judges, in order (undefined where it is not readable yet):
 * the observations of `events_full` in one statement, so a worker's claimed batch costs the store
 * one read; the legacy rows (Legacy targets, dataset run items) one statement each.
 */
export async function readJudgedMany(
  analytics: ClickHouseClient,
  items: readonly { key: JudgedKey; source: ScanSource }[],
): Promise<(JudgedRow | undefined)[]> {
  const events = items.filter((i) => readsEvents(i.source)).map((i) => i.key);
  const found = new Map<string, JudgedRow>();
  if (events.length > 0)
    for (const r of await rowsOf<JudgedRow & Keyed>(analytics, buildJudgedEvents(events)))
      found.set(keyOf(r.project_id, r.trace_id, r.span_id), r);
  return Promise.all(
    items.map(async ({ key, source }) =>
      readsEvents(source)
        ? found.get(keyOf(key.projectId, key.traceId, key.observationId))
        : (await rowsOf<JudgedRow>(analytics, buildJudged(key, source)))[0],
    ),
  );
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
