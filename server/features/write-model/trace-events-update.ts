/**
 * Trace-level changes that must reach events already written (pure builders). A trace update in
 * dual write re-stages only the trace's root; events of the trace written directly keep the trace
 * fields they were written with, so the changed fields are updated in place on both events tables
 * (the materialized view copies inserts only).
 */

import { type Dialect, onCluster } from '../../platform/migrations/analytics/dialect.ts';
import type { Row } from './records.ts';

/** `UPDATE` (lightweight, patch parts) or `ALTER TABLE ... UPDATE` (a mutation, waited for). */
export type UpdateForm = 'lightweight' | 'mutation';

export const EVENTS_TABLES = ['events_full', 'events_core'] as const;

export interface TraceEventAssignments {
  set: string[];
  params: Record<string, unknown>;
}

export interface TraceEventsUpdate {
  query: string;
  params: Record<string, unknown>;
}

/** The trace fields events carry, by event column, read from a `traces` row. */
function traceFieldsOf(trace: Row): Record<string, unknown> {
  return {
    trace_name: trace['name'] ?? '',
    user_id: trace['user_id'] ?? '',
    session_id: trace['session_id'] ?? '',
    release: trace['release'] ?? '',
    tags: trace['tags'] ?? [],
    public: Boolean(trace['public']),
    bookmarked: Boolean(trace['bookmarked']),
  };
}

const TYPES: Record<string, string> = {
  trace_name: 'String',
  user_id: 'String',
  session_id: 'String',
  release: 'String',
  tags: 'Array(String)',
  public: 'Bool',
  bookmarked: 'Bool',
};

/**
 * The assignments that bring events of `before`'s trace to `after`, or none when no field events
 * carry changed. An event's version is its own when it has one, so only events that carry the
 * trace's previous version take the new one.
 */
export function traceEventAssignments(before: Row, after: Row): TraceEventAssignments {
  const was = traceFieldsOf(before);
  const now = traceFieldsOf(after);
  const set: string[] = [];
  const params: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(now)) {
    if (JSON.stringify(value) === JSON.stringify(was[column])) continue;
    set.push(`${column} = {${column}:${TYPES[column]}}`);
    params[column] = value;
  }
  const [oldVersion, newVersion] = [before['version'] ?? '', after['version'] ?? ''];
  if (oldVersion !== newVersion) {
    set.push('version = if(version = {old_version:String}, {version:String}, version)');
    params['old_version'] = oldVersion;
    params['version'] = newVersion;
  }
  return { set, params };
}

/**
 * The statement applying `set` to one trace's events in `table`, in the given form. A clustered
 * analytics database (COLUMNAR_CLUSTER_ENABLED) runs it `ON CLUSTER`, as its DDL, so every shard's
 * events take the change.
 */
export function traceEventsUpdateStatement(
  table: (typeof EVENTS_TABLES)[number],
  form: UpdateForm,
  dialect: Dialect,
  projectId: string,
  traceId: string,
  assignments: TraceEventAssignments,
): TraceEventsUpdate {
  const where = 'project_id = {project_id:String} AND trace_id = {trace_id:String}';
  const set = assignments.set.join(', ');
  const target = `${table}${onCluster(dialect)}`;
  const query =
    form === 'lightweight'
      ? `UPDATE ${target} SET ${set} WHERE ${where}`
      : `ALTER TABLE ${target} UPDATE ${set} WHERE ${where} SETTINGS mutations_sync = 2`;
  return { query, params: { ...assignments.params, project_id: projectId, trace_id: traceId } };
}
