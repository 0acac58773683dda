/**
 * SQL of the dual-write propagation job (pure builders). A completed 3-minute partition of
 * `observations_batch_staging` is joined with the live `traces` rows of its traces and inserted
 * into `events_full`. Trace attributes (user, session, tags, release, version, metadata) are
 * propagated; observation values win. Every output value comes from stored rows, `event_ts`
 * included, so running a partition again writes identical rows that the replacing merge collapses.
 */
import { type Chunk, type KeyColumn, keyRange } from '../../../features/backfill/chunks.ts';
import type { ChunkQuery } from '../../../features/backfill/sql.ts';
import {
  ATTRIBUTED,
  observationEventExpressions,
  selectList,
  TRACE_JOIN_COLUMNS,
} from '../../../features/events/mapping.ts';
import { notTombstoned } from '../../../features/tombstones/sql.ts';
import { EVENTS, insertable } from '../../../platform/migrations/analytics/tables.ts';

export const STAGING_TABLE = 'observations_batch_staging';
const IN_PARTITION = '_partition_id = {partition:String}';

/**
 * Partitions of the staging table whose 3-minute window closed at least `graceSeconds` ago, with
 * their id (what chunks filter on) and row count (whether the partition needs chunks).
 */
export function completedPartitionsQuery(): string {
  return `SELECT partition, any(partition_id) AS partitionId, sum(rows) AS rows
FROM system.parts
WHERE database = currentDatabase() AND table = '${STAGING_TABLE}' AND active
  AND toDateTime(partition) + INTERVAL 3 MINUTE + toIntervalSecond({graceSeconds:UInt32}) <= now()
  AND ({after:String} = '' OR partition > {after:String})
GROUP BY partition
ORDER BY partition ASC`;
}

/**
 * A staging partition is cut by trace: a chunk holds whole traces, which the experiment
 * enrichment needs (the nearest run item of a span wins), and `project_id` leads the sort key.
 */
export const STAGING_KEY: KeyColumn[] = [
  { expr: 'project_id', type: 'String' },
  { expr: 'trace_id', type: 'String' },
];

/** Staging partitions not yet processed, including the one still filling (for the backlog metric). */
export function pendingPartitionsQuery(): string {
  return `SELECT count(DISTINCT partition) AS n FROM system.parts
WHERE database = currentDatabase() AND table = 'observations_batch_staging' AND active
  AND ({after:String} = '' OR partition > {after:String})`;
}

const DUAL_WRITE = observationEventExpressions({ traceMetadata: true, source: 'dual-write' });
/** Columns filled from the staged row; the rest (experiment, instrumentation) keep their defaults. */
export const PROPAGATED_COLUMNS = selectList(DUAL_WRITE, [...insertable(EVENTS), ...ATTRIBUTED]).columns;

/**
 * The staging rows of one chunk of a partition (its `partition_id` and key range; a chunk without
 * bounds is the whole partition), as a condition and its parameters.
 */
export function stagingChunk(chunk: Chunk): ChunkQuery {
  const range = keyRange(STAGING_KEY, chunk);
  return { query: `${IN_PARTITION} AND ${range.sql}`, params: range.params };
}

/**
 * Per project, the oldest `created_at` among one chunk's staging rows: the propagated events keep
 * it, so scans that follow `created_at` (evaluation rules) must look back that far.
 */
export function oldestStagedQuery(chunk: Chunk): ChunkQuery {
  const where = stagingChunk(chunk);
  return {
    query: `SELECT project_id, toString(min(created_at)) AS created_at FROM ${STAGING_TABLE}
WHERE ${where.query}
GROUP BY project_id`,
    params: where.params,
  };
}

/** Inserts one chunk of a staging partition into events_full. */
export function propagateChunkStatement(chunk: Chunk): ChunkQuery {
  const { select } = selectList(DUAL_WRITE, PROPAGATED_COLUMNS);
  const where = stagingChunk(chunk);
  // The key range in PREWHERE, applied before FINAL merges: right for sort-key columns, which
  // every version of a row shares (as the backfill's chunks).
  const range = keyRange(STAGING_KEY, chunk);
  return {
    query: `INSERT INTO events_full (${PROPAGATED_COLUMNS.join(', ')})
SELECT
  ${select}
FROM (
  SELECT * FROM ${STAGING_TABLE} FINAL
  PREWHERE ${range.sql}
  WHERE ${IN_PARTITION} AND ${notTombstoned('project_id', 'trace_id')}
) AS obs
LEFT ANY JOIN (
  SELECT ${TRACE_JOIN_COLUMNS}
  FROM traces FINAL
  WHERE (project_id, id) IN (
    SELECT project_id, trace_id FROM ${STAGING_TABLE} WHERE ${where.query}
  )
) AS t ON obs.project_id = t.project_id AND obs.trace_id = t.id
SETTINGS join_use_nulls = 1`,
    params: where.params,
  };
}
