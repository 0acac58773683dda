/**
 * SQL of the dual-write propagation job (pure builders). A completed 3-minute partition of
 * `observations_batch_staging` is joined with the live `traces` rows of its traces and inserted
 * into `events_full`. Trace attributes (user, session, tags, release, version, metadata) are
 * propagated; observation values win. Every output value comes from stored rows, `event_ts`
 * included, so running a partition again writes identical rows that the replacing merge collapses.
 */
import {
  ATTRIBUTED,
  observationEventExpressions,
  selectList,
  TRACE_JOIN_COLUMNS,
} from '../../events/mapping.ts';
import { EVENTS, insertable } from '../../migrations/analytics/tables.ts';

/** Partitions of the staging table whose 3-minute window closed at least `graceSeconds` ago. */
export function completedPartitionsQuery(): string {
  return `SELECT DISTINCT partition
FROM system.parts
WHERE database = currentDatabase() AND table = 'observations_batch_staging' AND active
  AND toDateTime(partition) + INTERVAL 3 MINUTE + toIntervalSecond({graceSeconds:UInt32}) <= now()
  AND ({after:String} = '' OR partition > {after:String})
ORDER BY partition ASC`;
}

/** Staging partitions not yet processed, including the one still filling (for the backlog metric). */
export function pendingPartitionsQuery(): string {
  return `SELECT count(DISTINCT partition) AS n FROM system.parts
WHERE database = currentDatabase() AND table = 'observations_batch_staging' AND active
  AND ({after:String} = '' OR partition > {after:String})`;
}

const DUAL_WRITE = observationEventExpressions({ traceMetadata: true, source: 'dual-write' });
/** Columns filled from the staged row; the rest (experiment, instrumentation) keep their defaults. */
export const PROPAGATED_COLUMNS = selectList(DUAL_WRITE, [...insertable(EVENTS), ...ATTRIBUTED]).columns;

/** Inserts one staging partition (`{partition:String}`) into events_full. */
export function propagatePartitionStatement(): string {
  const { select } = selectList(DUAL_WRITE, PROPAGATED_COLUMNS);
  return `INSERT INTO events_full (${PROPAGATED_COLUMNS.join(', ')})
SELECT
  ${select}
FROM (
  SELECT * FROM observations_batch_staging FINAL
  WHERE _partition_value = tuple({partition:String})
) AS obs
LEFT ANY JOIN (
  SELECT ${TRACE_JOIN_COLUMNS}
  FROM traces FINAL
  WHERE (project_id, id) IN (
    SELECT project_id, trace_id FROM observations_batch_staging WHERE _partition_value = tuple({partition:String})
  )
) AS t ON obs.project_id = t.project_id AND obs.trace_id = t.id
SETTINGS join_use_nulls = 1`;
}
