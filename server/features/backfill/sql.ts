/**
 * SQL of the historic backfill steps (pure builders). Every step works in chunks: one partition of
 * its source table and a range of the table's sort key (chunks.ts), so a chunk reads, merges and
 * joins only its own rows however large a month grows. Key ranges go to PREWHERE, which the store
 * applies before FINAL merges: correct for sort-key columns, which all versions of a row share. A
 * chunk's rows carry their source row's `event_ts`, so running a chunk again writes identical rows
 * that the replacing merge collapses.
 */

import { createTable, dropTable } from '../../platform/migrations/analytics/ddl.ts';
import type { Dialect } from '../../platform/migrations/analytics/dialect.ts';
import { EVENTS, insertable, OBSERVATIONS } from '../../platform/migrations/analytics/tables.ts';
import { FROM_OTLP, observationEventExpressions, selectList, TRACE_JOIN_COLUMNS } from '../events/mapping.ts';
import { notTombstoned } from '../tombstones/sql.ts';
import { type Chunk, type KeyColumn, keyRange } from './chunks.ts';

export const SCRATCH_TABLE = 'observations_pid_tid_sorting';

/**
 * A chunk's statement and the parameters it binds. Every statement also binds the tombstones'
 * (server/features/tombstones/sql.ts), which its runner adds: no chunk copies a deleted trace.
 */
export interface ChunkQuery {
  query: string;
  params: Record<string, string>;
}

const EVENT_COLUMNS = insertable(EVENTS);
const IN_PARTITION = '_partition_id = {partition:String}';
const text = (expr: string): KeyColumn => ({ expr, type: 'String' });
const day = (expr: string): KeyColumn => ({ expr, type: 'Date' });

/** The leading sort-key columns each step chunks its source table by. */
export const TRACES_KEY = [text('project_id'), day('toDate(timestamp)'), text('id')];
export const OBSERVATIONS_KEY = [text('project_id'), text('type'), day('toDate(start_time)'), text('id')];
/** By trace, so a trace's observations stay in one chunk with their trace. */
export const SCRATCH_KEY = [text('project_id'), text('trace_id')];
/** The scratch key's range over the trace table's columns. */
const TRACE_OF_SCRATCH_KEY = [text('project_id'), text('id')];
/**
 * By trace, which the enrichment needs whole in one chunk (the nearest run item of a span wins);
 * not the run items' sort key, so this range filters after FINAL instead of pruning.
 */
export const RUN_ITEMS_KEY = [text('project_id'), text('trace_id')];

/**
 * Store settings of every chunk statement: sorts and aggregations that outgrow this spill to disk
 * instead of failing or growing with the data (a chunk's range already bounds them in the common
 * case). No replacing merge of each inserted block: every chunk inserts rows read through FINAL,
 * one per key of the target, so that merge finds nothing to collapse, yet it copies every row
 * and was the largest part of the backfill's CPU time (measured: about a third of an insert into
 * events_full). Versions that do meet later (a chunk run again) collapse in the table's own merges
 * and under FINAL, with the same winner.
 */
export const CHUNK_SETTINGS = {
  max_bytes_before_external_sort: String(256 * 1024 * 1024),
  max_bytes_before_external_group_by: String(256 * 1024 * 1024),
  optimize_on_insert: 0,
} as const;

/** Partitions of a table with their row counts (from the parts' metadata), newest first. */
export function partitionsQuery(): string {
  return `SELECT partition_id AS partition, sum(rows) AS rows FROM system.parts
WHERE database = currentDatabase() AND table = {table:String} AND active
GROUP BY partition_id ORDER BY partition_id DESC`;
}

/**
 * A sorted sample of one partition's keys (chunks.ts), of a size that bounds its memory. Reads the
 * key columns only.
 */
export function keySampleQuery(table: string, key: readonly KeyColumn[], size: number): string {
  if (!Number.isSafeInteger(size) || size <= 0)
    throw new RangeError(`sample size ${size} is not a positive integer`);
  const values = key.map((_, i) => `toString(k.${i + 1})`).join(', ');
  const sample = `groupArraySample(${size})(tuple(${key.map((k) => k.expr).join(', ')}))`;
  return `SELECT arrayMap(k -> [${values}], arraySort(${sample})) AS sample
FROM ${table} WHERE _partition_id = {partition:String}`;
}

/**
 * Step 1: one virtual root span `t-<traceId>` per historic trace, with the trace's own fields.
 * Traces of OTLP spans have a root span of their own (step 3 keeps it a root) and get none.
 */
export function rootSpansStatement(chunk: Chunk): ChunkQuery {
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
  const range = keyRange(TRACES_KEY, chunk);
  return {
    query: `INSERT INTO events_full (${columns.join(', ')})
SELECT
  ${select}
FROM traces FINAL
PREWHERE ${range.sql}
WHERE ${IN_PARTITION} AND ${notTombstoned('project_id', 'id')}
  AND (project_id, id) NOT IN (
    SELECT project_id, trace_id FROM observations
    PREWHERE (project_id, trace_id) IN (SELECT project_id, id FROM traces PREWHERE ${range.sql} WHERE ${IN_PARTITION})
    WHERE ${FROM_OTLP('observations')}
  )`,
    params: range.params,
  };
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

export function copyToScratchStatement(chunk: Chunk): ChunkQuery {
  const cols = insertable(OBSERVATIONS).join(', ');
  const range = keyRange(OBSERVATIONS_KEY, chunk);
  return {
    query: `INSERT INTO ${SCRATCH_TABLE} (${cols})
SELECT ${cols} FROM observations FINAL
PREWHERE ${range.sql}
WHERE ${IN_PARTITION} AND ${notTombstoned('project_id', 'trace_id')}`,
    params: range.params,
  };
}

/**
 * Step 3: child events from the scratch table joined with their live trace. Propagates name, user,
 * session, version, release, tags, public and bookmarked; not trace metadata.
 */
export function eventsFromObservationsStatement(chunk: Chunk): ChunkQuery {
  const expressions = observationEventExpressions({ traceMetadata: false, source: 'backfill' });
  const { columns, select } = selectList(expressions, EVENT_COLUMNS);
  const range = keyRange(SCRATCH_KEY, chunk);
  // The same bounds over the trace table prune its reads; the chunk's trace ids bound the join's
  // hash table (an open-ended range alone would take every older or newer trace of other months).
  const traces = keyRange(TRACE_OF_SCRATCH_KEY, chunk);
  return {
    query: `INSERT INTO events_full (${columns.join(', ')})
SELECT
  ${select}
FROM (SELECT * FROM ${SCRATCH_TABLE} FINAL PREWHERE ${range.sql}
      WHERE ${IN_PARTITION} AND ${notTombstoned('project_id', 'trace_id')}) AS obs
LEFT ANY JOIN (
  SELECT ${TRACE_JOIN_COLUMNS} FROM traces FINAL
  PREWHERE ${traces.sql} AND (project_id, id) IN (
    SELECT project_id, trace_id FROM ${SCRATCH_TABLE} PREWHERE ${range.sql} WHERE ${IN_PARTITION}
  )
) AS t ON obs.project_id = t.project_id AND obs.trace_id = t.id
SETTINGS join_use_nulls = 1`,
    params: range.params,
  };
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
export function experimentEnrichmentStatement(chunk: Chunk): ChunkQuery {
  const range = keyRange(RUN_ITEMS_KEY, chunk);
  return { query: experimentEnrichment(`${IN_PARTITION} AND ${range.sql}`), params: range.params };
}

/**
 * The same enrichment after the dual-write propagation of one chunk of a staging partition (the
 * condition on the staging rows and its parameters), for the run items of the chunk's traces: SDKs
 * older than the ones that send experiment attributes on their spans link a trace to a run item
 * instead, and the spans of that trace reach events_full only through propagation.
 */
export function stagingExperimentEnrichmentStatement(staging: ChunkQuery): ChunkQuery {
  return {
    query: experimentEnrichment(`(project_id, trace_id) IN (
      SELECT project_id, trace_id FROM observations_batch_staging WHERE ${staging.query})`),
    params: staging.params,
  };
}

/** The enrichment of the trace trees of the run items `runsWhere` selects. */
function experimentEnrichment(runsWhere: string): string {
  const expressions: Record<string, string> = Object.fromEntries(EVENT_COLUMNS.map((c) => [c, `e.${c}`]));
  Object.assign(expressions, EXPERIMENT_COLUMNS);
  const { columns, select } = selectList(expressions, EVENT_COLUMNS);
  return `INSERT INTO events_full (${columns.join(', ')})
WITH RECURSIVE
  runs AS (
    SELECT * FROM dataset_run_items_rmt FINAL WHERE ${runsWhere} AND ${notTombstoned('project_id', 'trace_id')}
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
