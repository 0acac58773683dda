/**
 * Generated history for the backfill figures: `traces` version 3 traces with four observations each
 * (half generations), written by one INSERT ... SELECT from numbers() per table, and the plain
 * INSERT ... SELECT of the same observations into events_full that the backfill is measured against.
 */
export const OBS_PER_TRACE = 4;

/** The mode settings both backfill benches run under: dual write with the historic backfill on. */
export const BACKFILL_SETTINGS = {
  release: '4',
  writeMode: 'dual',
  nativeOtelBehaviour: 'dual_write',
  allowPreviewOptIn: true,
  enableHistoricBackfill: true,
  dropPidTidSortingTables: false,
} as const;

export function historyStatements(traces: number): string[] {
  return [
    `INSERT INTO traces (id, timestamp, name, user_id, metadata, release, version, project_id, public, bookmarked, tags, input, output, session_id, event_ts, is_deleted)
    SELECT concat('t', toString(number)), toDateTime64('2026-10-01 00:00:00', 3) + number, 'trace', concat('u', toString(number % 100)),
      map('k', toString(number)), 'r1', 'v1', 'bench', false, false, ['a','b'], repeat('x', 200), repeat('y', 200), concat('s', toString(number % 50)), now64(3), 0
    FROM numbers(${traces})`,
    `INSERT INTO observations (id, trace_id, project_id, type, parent_observation_id, start_time, name, metadata, level, input, output, provided_model_name, event_ts, is_deleted)
    SELECT concat('o', toString(number)), concat('t', toString(intDiv(number, ${OBS_PER_TRACE}))), 'bench', if(number % 2 = 0, 'SPAN', 'GENERATION'), NULL,
      toDateTime64('2026-10-01 00:00:00', 3) + intDiv(number, ${OBS_PER_TRACE}), 'obs', map('m', 'v'), 'DEFAULT', repeat('i', 500), repeat('o', 500), 'gpt', now64(3), 0
    FROM numbers(${traces * OBS_PER_TRACE})`,
  ];
}

/** The store's own limit: the observation rows copied with no FINAL and no join. */
export const PLAIN_COPY = `INSERT INTO events_full (project_id, trace_id, span_id, parent_span_id, start_time, name, type, level, input, output, provided_model_name, metadata_names, metadata_values, event_ts, is_deleted)
  SELECT project_id, trace_id, id, '', start_time, name, type, level, coalesce(input, ''), coalesce(output, ''), coalesce(provided_model_name, ''), mapKeys(metadata), mapValues(metadata), event_ts, is_deleted FROM observations`;

/**
 * The plain copy's second form: without the replacing merge of each inserted block, which the
 * backfill skips (server/features/backfill/sql.ts: its rows come out of FINAL, one per key), so the ratio
 * against it shows what the backfill's own work costs.
 */
export const UNMERGED_INSERT = { optimize_on_insert: 0 } as const;
