/**
 * The analytics statements that delete traces (pure builders). A deleted trace leaves every table
 * that can hold its rows, whatever the write mode: a mode decides where new data goes, while rows
 * written under an earlier mode (before a migration step or a rollback) stay where they were.
 * Release 3 knows only the legacy tables. Every statement is scoped by project.
 */

import { type Dialect, onCluster } from '../../platform/migrations/analytics/dialect.ts';
import { type TraceTable, traceColumn } from '../tombstones/tables.ts';
import type { UpdateForm } from '../write-model/trace-events-update.ts';

export interface Statement {
  query: string;
  params: Record<string, unknown>;
}

/**
 * Deletes the rows of `traceIds` of one project from `table`: a lightweight `DELETE FROM` (rows
 * masked at once, removed by merges) or an `ALTER TABLE ... DELETE` mutation. Both wait until done,
 * so a read after the answer no longer sees the rows. A clustered database runs it `ON CLUSTER`.
 */
export function traceDeleteStatement(
  table: TraceTable,
  form: UpdateForm,
  dialect: Dialect,
  projectId: string,
  traceIds: readonly string[],
): Statement {
  return deleteStatement(
    table,
    form,
    dialect,
    `project_id = {project_id:String} AND ${traceColumn(table)} IN {trace_ids:Array(String)}`,
    { project_id: projectId, trace_ids: [...traceIds] },
  );
}

/** Deletes the project's scores of `scoreIds` (scores without a trace), as traceDeleteStatement. */
export function scoreDeleteStatement(
  form: UpdateForm,
  dialect: Dialect,
  projectId: string,
  scoreIds: readonly string[],
): Statement {
  return deleteStatement(
    'scores',
    form,
    dialect,
    'project_id = {project_id:String} AND id IN {score_ids:Array(String)}',
    { project_id: projectId, score_ids: [...scoreIds] },
  );
}

/** Deletes the rows of `table` matching `where`, in the form and dialect given (see above). */
export function deleteStatement(
  table: string,
  form: UpdateForm,
  dialect: Dialect,
  where: string,
  params: Record<string, unknown>,
): Statement {
  const target = `${table}${onCluster(dialect)}`;
  const query =
    form === 'lightweight'
      ? `DELETE FROM ${target} WHERE ${where} SETTINGS lightweight_deletes_sync = 2`
      : `ALTER TABLE ${target} DELETE WHERE ${where} SETTINGS mutations_sync = 2`;
  return { query, params };
}

/** Observation ids of the traces, from every table that may hold them (for comments and media). */
export function traceObservationIdsQuery(release: '3' | '4'): string {
  const sources = release === '3' ? ['observations'] : ['observations', 'events_full'];
  return sources
    .map(
      (t) =>
        `SELECT ${t === 'events_full' ? 'span_id' : 'id'} AS id FROM ${t} WHERE project_id = {project_id:String} AND trace_id IN {trace_ids:Array(String)}`,
    )
    .join('\nUNION DISTINCT\n');
}
