/**
 * SQL of the historic backfill steps (pure builders). Every step works in chunks: one partition of
 * its source table, split further into `buckets` slices by a hash of the trace id so that a chunk
 * stays small however large a month grows. A chunk's rows carry their source row's `event_ts`, so
 * running a chunk again writes identical rows that the replacing merge collapses.
 */

import { createTable, dropTable } from '../migrations/analytics/ddl.ts';
import type { Dialect } from '../migrations/analytics/dialect.ts';
import { EVENTS, insertable, OBSERVATIONS } from '../migrations/analytics/tables.ts';
import {
  FROM_OTLP,
  observationEventExpressions,
  selectList,
  TRACE_JOIN_COLUMNS,
} from '../worker/propagation/sql.ts';

export const SCRATCH_TABLE = 'observations_pid_tid_sorting';

/** A slice of a source table: partition id and hash bucket `bucket` of `buckets`. */
export interface Chunk {
  partition: string;
  bucket: number;
  buckets: number;
}

const EVENT_COLUMNS = insertable(EVENTS);
const slice = (idColumn: string) =>
  `_partition_id = {partition:String} AND xxHash32(${idColumn}) % {buckets:UInt32} = {bucket:UInt32}`;

/** Partitions of a table with their row counts, newest first. */
export function partitionsQuery(): string {
  return `SELECT partition_id AS partition, sum(rows) AS rows FROM system.parts
WHERE database = currentDatabase() AND table = {table:String} AND active
GROUP BY partition_id ORDER BY partition_id DESC`;
}

/**
 * Step 1: one virtual root span `t-<traceId>` per historic trace, with the trace's own fields.
 * Traces of OTLP spans have a root span of their own (step 3 keeps it a root) and get none.
 */
export function rootSpansStatement(): string {
  const expressions: Record<string, string> = {
    project_id: 'project_id',
    trace_id: 'id',
    span_id: "concat('t-', id)",
    parent_span_id: "''",
    start_time: 'timestamp',
    name: 'name',
    type: "'SPAN'",
    environment: 'environment',
    version: "coalesce(version, '')",
    release: "coalesce(release, '')",
    trace_name: 'name',
    user_id: "coalesce(user_id, '')",
    session_id: "coalesce(session_id, '')",
    tags: 'tags',
    level: "'DEFAULT'",
    bookmarked: 'bookmarked',
    public: 'public',
    input: "coalesce(input, '')",
    output: "coalesce(output, '')",
    metadata_names: 'mapKeys(metadata)',
    metadata_values: 'mapValues(metadata)',
    source: "if(mapContains(metadata, 'resourceAttributes'), 'otel-backfill', 'ingestion-api-backfill')",
    event_bytes: '0',
    created_at: 'created_at',
    updated_at: 'updated_at',
    event_ts: 'event_ts',
    is_deleted: 'is_deleted',
  };
  const { columns, select } = selectList(expressions, EVENT_COLUMNS);
  return `INSERT INTO events_full (${columns.join(', ')})
SELECT
  ${select}
FROM traces FINAL
WHERE ${slice('id')}
  AND (project_id, id) NOT IN (
    SELECT project_id, trace_id FROM observations
    WHERE xxHash32(trace_id) % {buckets:UInt32} = {bucket:UInt32} AND ${FROM_OTLP('observations')}
  )`;
}

/** Step 2: the scratch copy of `observations`, sorted by (project_id, trace_id, id). */
export function createScratchTable(d: Dialect): string {
  return createTable(d, SCRATCH_TABLE, OBSERVATIONS, {
    engine: 'ReplacingMergeTree',
    engineArgs: 'event_ts, is_deleted',
    partitionBy: 'toYYYYMM(start_time)',
    primaryKey: '(project_id, trace_id)',
    orderBy: '(project_id, trace_id, id)',
  });
}

export function copyToScratchStatement(): string {
  const cols = insertable(OBSERVATIONS).join(', ');
  return `INSERT INTO ${SCRATCH_TABLE} (${cols})
SELECT ${cols} FROM observations FINAL
WHERE ${slice('trace_id')}`;
}

/**
 * Step 3: child events from the scratch table joined with their live trace. Propagates name, user,
 * session, version, release, tags, public and bookmarked; not trace metadata.
 */
export function eventsFromObservationsStatement(): string {
  const expressions = observationEventExpressions({ traceMetadata: false, source: 'backfill' });
  const { columns, select } = selectList(expressions, EVENT_COLUMNS);
  return `INSERT INTO events_full (${columns.join(', ')})
SELECT
  ${select}
FROM (SELECT * FROM ${SCRATCH_TABLE} FINAL WHERE ${slice('trace_id')}) AS obs
LEFT ANY JOIN (
  SELECT ${TRACE_JOIN_COLUMNS} FROM traces FINAL
  WHERE (project_id, id) IN (SELECT project_id, trace_id FROM ${SCRATCH_TABLE} WHERE ${slice('trace_id')})
) AS t ON obs.project_id = t.project_id AND obs.trace_id = t.id
SETTINGS join_use_nulls = 1`;
}

const EXPERIMENT_COLUMNS: Record<string, string> = {
  experiment_id: 'dri.dataset_run_id',
  experiment_name: 'dri.dataset_run_name',
  experiment_metadata_names: 'mapKeys(dri.dataset_run_metadata)',
  experiment_metadata_values: 'mapValues(dri.dataset_run_metadata)',
  experiment_description: "coalesce(dri.dataset_run_description, '')",
  experiment_dataset_id: 'dri.dataset_id',
  experiment_item_id: 'dri.dataset_item_id',
  experiment_item_version: 'dri.dataset_item_version',
  experiment_item_expected_output: "coalesce(dri.dataset_item_expected_output, '')",
  experiment_item_metadata_names: 'mapKeys(dri.dataset_item_metadata)',
  experiment_item_metadata_values: 'mapValues(dri.dataset_item_metadata)',
  experiment_item_root_span_id: 'w.root_span_id',
  // One microsecond newer than the row it enriches, so the enriched version wins the merge.
  event_ts: 'e.event_ts + toIntervalMicrosecond(1)',
};

/** Deepest experiment tree the walk descends; deeper spans (or a parent cycle) stop there. */
export const EXPERIMENT_TREE_DEPTH = 1000;

/**
 * Step 4: the experiment's trace tree gets the experiment's fields from its dataset run item: the
 * run item's observation and its descendants, or the trace's root and its tree when the run item
 * names no observation. Spans of the trace outside that tree keep none; a span under two run items
 * takes the nearest one's. Rows already enriched are skipped, so a chunk run twice changes nothing
 * the second time.
 */
export function experimentEnrichmentStatement(): string {
  const expressions: Record<string, string> = Object.fromEntries(EVENT_COLUMNS.map((c) => [c, `e.${c}`]));
  Object.assign(expressions, EXPERIMENT_COLUMNS);
  const { columns, select } = selectList(expressions, EVENT_COLUMNS);
  return `INSERT INTO events_full (${columns.join(', ')})
WITH RECURSIVE
  runs AS (
    SELECT * FROM dataset_run_items_rmt FINAL WHERE ${slice('trace_id')}
    ORDER BY created_at DESC LIMIT 1 BY project_id, trace_id, observation_id
  ),
  spans AS (
    SELECT project_id, trace_id, span_id, parent_span_id FROM events_full FINAL
    WHERE (project_id, trace_id) IN (SELECT project_id, trace_id FROM runs)
  ),
  tree AS (
    SELECT s.project_id AS project_id, s.trace_id AS trace_id, s.span_id AS span_id,
      s.span_id AS root_span_id, r.id AS run_item_id, toUInt32(0) AS depth
    FROM spans AS s INNER JOIN runs AS r ON s.project_id = r.project_id AND s.trace_id = r.trace_id
    WHERE if(r.observation_id IS NULL, s.parent_span_id = '', s.span_id = assumeNotNull(r.observation_id))
    UNION ALL
    SELECT c.project_id, c.trace_id, c.span_id, tree.root_span_id, tree.run_item_id, tree.depth + 1
    FROM spans AS c INNER JOIN tree
      ON c.project_id = tree.project_id AND c.trace_id = tree.trace_id AND c.parent_span_id = tree.span_id
    WHERE tree.depth < ${EXPERIMENT_TREE_DEPTH}
  )
SELECT
  ${select}
FROM (SELECT * FROM events_full FINAL WHERE experiment_id = ''
      AND (project_id, trace_id) IN (SELECT project_id, trace_id FROM runs)) AS e
INNER JOIN (SELECT * FROM tree ORDER BY depth LIMIT 1 BY project_id, trace_id, span_id) AS w
  ON e.project_id = w.project_id AND e.trace_id = w.trace_id AND e.span_id = w.span_id
INNER JOIN runs AS dri ON dri.project_id = w.project_id AND dri.id = w.run_item_id`;
}

/** Step 5. */
export const dropScratchTable = (d: Dialect): string => dropTable(d, SCRATCH_TABLE);
