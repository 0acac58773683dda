/**
 * Experiments (`GET /api/public/experiments`) and their items (`GET /api/public/experiment-items`)
 * read from the experiment columns of the events tables: an experiment is the set of events
 * carrying its id, an item is the root span of one dataset item's run (its span id is the item's
 * `experiment_item_root_span_id`). Pure builders and mappers.
 */

import { BadRequest } from '../../kernel/errors.ts';
import type { FilterCondition } from './filters.ts';
import { own } from './lookup.ts';
import { orNull, spanOf, toIso, withFieldGroups, zipMetadata } from './row-values.ts';
import { decodeCursor, encodeCursor, Params, type Query, Where } from './sql.ts';

/**
 * The columns each endpoint filters on, by the name of both its csv parameter and the column of its
 * structured `filter` conditions.
 */
const EXPERIMENT_FILTER_COLUMNS = {
  id: 'experiment_id',
  name: 'experiment_name',
  datasetId: 'experiment_dataset_id',
} as const;
const ITEM_FILTER_COLUMNS = {
  experimentId: 'experiment_id',
  experimentName: 'experiment_name',
  experimentItemId: 'experiment_item_id',
  datasetId: 'experiment_dataset_id',
} as const;

/** The csv filters of a read, one list of values per filter column of its endpoint. */
type CsvFilters<Columns> = { [Name in keyof Columns]?: string[] | undefined };

/** csv filters plus `filter` conditions of types string/stringOptions on the allowed columns. */
function idFilters<Columns extends Record<string, string>>(
  where: Where,
  r: CsvFilters<Columns> & { filters: FilterCondition[] },
  columns: Columns,
): Where {
  const { p } = where;
  for (const [name, column] of Object.entries(columns)) where.anyOf(column, r[name]);
  for (const f of r.filters) {
    const col = own(columns, f.column);
    if (!col)
      throw new BadRequest(
        `filter: unsupported column ${f.column} (allowed: ${Object.keys(columns).join(', ')})`,
      );
    const vs = Array.isArray(f.value) ? f.value : [f.value];
    if (!vs.every((v) => typeof v === 'string'))
      throw new BadRequest(`filter ${f.column}: values must be strings`);
    if (f.operator === '=' || f.operator === 'any of') where.add(`${col} IN ${p.strs(vs as string[])}`);
    else if (f.operator === 'none of' || f.operator === '!=')
      where.add(`${col} NOT IN ${p.strs(vs as string[])}`);
    else throw new BadRequest(`filter ${f.column}: operator ${f.operator} is not supported`);
  }
  return where;
}

interface TimeCursor {
  t: string;
  id: string;
}

function parseCursor(text: string | undefined): TimeCursor | undefined {
  if (!text) return undefined;
  const c = decodeCursor(text) as { v?: unknown; t?: unknown; id?: unknown } | undefined;
  if (c?.v !== 1 || typeof c.t !== 'string' || typeof c.id !== 'string') {
    throw new BadRequest('cursor: not a cursor returned by this endpoint');
  }
  return { t: c.t, id: c.id };
}

/** Versioned so a future ordering change can refuse old cursors cleanly. */
export const timeCursor = (t: unknown, id: unknown) => encodeCursor({ v: 1, t: String(t), id: String(id) });

/** What both experiment reads take: the project, a start-time window, a cursor page and filters. */
interface ExperimentWindowRequest {
  projectId: string;
  fromStartTime: string;
  toStartTime?: string | undefined;
  limit: number;
  cursor?: string | undefined;
  filters: FilterCondition[];
}

/** Where both experiment reads look: the project's experiment spans (`narrower` still) in the window. */
const windowWhere = (p: Params, r: ExperimentWindowRequest, narrower: string[] = []) =>
  new Where(p, `project_id = ${p.str(r.projectId)}`, "experiment_id != ''", ...narrower).range(
    'start_time',
    r.fromStartTime,
    r.toStartTime,
  );

export type ExperimentsRequest = ExperimentWindowRequest & CsvFilters<typeof EXPERIMENT_FILTER_COLUMNS>;

/** One row per experiment, ordered by its latest activity, newest first. */
export function buildExperiments(r: ExperimentsRequest): Query {
  const p = new Params();
  const where = idFilters(windowWhere(p, r), r, EXPERIMENT_FILTER_COLUMNS);
  const cursor = parseCursor(r.cursor);
  const sql = [
    'SELECT experiment_id AS id,',
    "  anyIf(experiment_name, experiment_name != '') AS exp_name,",
    "  anyIf(experiment_description, experiment_description != '') AS exp_description,",
    "  anyIf(experiment_dataset_id, experiment_dataset_id != '') AS exp_dataset_id,",
    '  argMax(experiment_metadata_names, length(experiment_metadata_names)) AS exp_metadata_names,',
    '  argMax(experiment_metadata_values, length(experiment_metadata_names)) AS exp_metadata_values,',
    '  min(start_time) AS first_start,',
    '  max(greatest(start_time, ifNull(end_time, start_time))) AS last_end,',
    "  uniqExactIf(experiment_item_id, experiment_item_id != '') AS item_count,",
    '  max(start_time) AS last_activity',
    'FROM events_core FINAL',
    `WHERE ${where.sql()}`,
    'GROUP BY experiment_id',
    ...(cursor ? [`HAVING (last_activity, id) < (${p.time(cursor.t)}, ${p.str(cursor.id)})`] : []),
    'ORDER BY last_activity DESC, id DESC',
    `LIMIT ${p.add(r.limit + 1, 'UInt32')}`,
  ].join('\n');
  return { sql, params: p.values };
}

export function mapExperiment(row: Record<string, unknown>, withMetadata: boolean): Record<string, unknown> {
  // Aggregates are aliased apart from column names, which ClickHouse would otherwise substitute in WHERE.
  return {
    id: row['id'],
    name: row['exp_name'] ?? '',
    description: orNull(row['exp_description']),
    startTime: toIso(row['first_start']),
    endTime: toIso(row['last_end']),
    itemCount: Number(row['item_count']),
    datasetId: orNull(row['exp_dataset_id']),
    ...(withMetadata ? { metadata: zipMetadata(row['exp_metadata_names'], row['exp_metadata_values']) } : {}),
  };
}

export const ITEM_FIELD_GROUPS = [
  'core',
  'dataset',
  'io',
  'metadata',
  'itemMetadata',
  'experimentMetadata',
  'scores',
] as const;
export type ItemFieldGroup = (typeof ITEM_FIELD_GROUPS)[number];

export interface ExperimentItemsRequest
  extends ExperimentWindowRequest,
    CsvFilters<typeof ITEM_FILTER_COLUMNS> {
  groups: Set<ItemFieldGroup>;
}

/** Item root spans, newest first; input and output need `events_full` (core keeps them truncated). */
export function buildExperimentItems(r: ExperimentItemsRequest): Query {
  const p = new Params();
  const where = idFilters(
    windowWhere(p, r, ['span_id = experiment_item_root_span_id']),
    r,
    ITEM_FILTER_COLUMNS,
  );
  const cursor = parseCursor(r.cursor);
  if (cursor) where.add(`(start_time, span_id) < (${p.time(cursor.t)}, ${p.str(cursor.id)})`);
  const full = r.groups.has('io') || r.groups.has('metadata');
  const sql = [
    'SELECT span_id, trace_id, start_time, end_time, level, environment, experiment_id, experiment_name,',
    '  experiment_item_id, experiment_dataset_id, experiment_item_version, experiment_description,',
    '  experiment_metadata_names, experiment_metadata_values, experiment_item_metadata_names, experiment_item_metadata_values,',
    `  ${full ? 'input, output, metadata_names, metadata_values, ' : ''}experiment_item_expected_output`,
    `FROM ${full ? 'events_full' : 'events_core'} FINAL`,
    `WHERE ${where.sql()}`,
    'ORDER BY start_time DESC, span_id DESC',
    `LIMIT ${p.add(r.limit + 1, 'UInt32')}`,
  ].join('\n');
  return { sql, params: p.values };
}

export function mapExperimentItem(
  row: Record<string, unknown>,
  groups: Set<ItemFieldGroup>,
): Record<string, unknown> {
  const base = {
    ...spanOf(row),
    level: row['level'],
    environment: row['environment'],
    experimentId: row['experiment_id'],
    experimentName: row['experiment_name'],
    experimentItemId: row['experiment_item_id'],
  };
  return withFieldGroups(base, groups, {
    dataset: () => ({
      experimentDatasetId: orNull(row['experiment_dataset_id']),
      experimentItemVersion: toIso(row['experiment_item_version']),
    }),
    io: () => ({
      input: orNull(row['input']),
      output: orNull(row['output']),
      expectedOutput: orNull(row['experiment_item_expected_output']),
    }),
    metadata: () => ({ metadata: zipMetadata(row['metadata_names'], row['metadata_values']) }),
    itemMetadata: () => ({
      experimentItemMetadata: zipMetadata(
        row['experiment_item_metadata_names'],
        row['experiment_item_metadata_values'],
      ),
    }),
    experimentMetadata: () => ({
      experimentMetadata: zipMetadata(row['experiment_metadata_names'], row['experiment_metadata_values']),
      experimentDescription: orNull(row['experiment_description']),
    }),
  });
}

/** Scores of a page's subjects, at most `limit` per subject (`column` is trace_id or dataset_run_id). */
export function buildSubjectScores(
  projectId: string,
  column: 'trace_id' | 'dataset_run_id',
  ids: string[],
  limit: number,
): Query {
  const p = new Params();
  const sql = [
    'SELECT * FROM scores FINAL',
    `WHERE project_id = ${p.str(projectId)} AND ${column} IN ${p.strs(ids)}`,
    'ORDER BY timestamp DESC, id DESC',
    `LIMIT ${p.add(limit, 'UInt32')} BY ${column}`,
  ].join('\n');
  return { sql, params: p.values };
}
