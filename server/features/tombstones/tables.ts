/**
 * The analytics tables a trace's rows may be in, and the column naming the trace in each: what a
 * deletion deletes from (server/features/deletion/) and what a writer deletes again after a late tombstone.
 */
const TRACE_COLUMN = {
  traces: 'id',
  observations: 'trace_id',
  scores: 'trace_id',
  observations_batch_staging: 'trace_id',
  events_full: 'trace_id',
  events_core: 'trace_id',
} as const;
export type TraceTable = keyof typeof TRACE_COLUMN;

const RELEASE_3_TABLES: TraceTable[] = ['traces', 'observations', 'scores'];

/** The tables a trace's rows may be in on this release. */
export function traceTables(release: '3' | '4'): TraceTable[] {
  return release === '3' ? RELEASE_3_TABLES : (Object.keys(TRACE_COLUMN) as TraceTable[]);
}

/** The column naming a row's trace in `table` (a step's scratch table names it `trace_id`). */
export function traceColumn(table: string): string {
  return table in TRACE_COLUMN ? TRACE_COLUMN[table as TraceTable] : 'trace_id';
}
