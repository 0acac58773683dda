/**
 * Whether the object a new comment names exists in the caller's project: prompts in PostgreSQL;
 * traces, observations and sessions in the analytics store, in the legacy tables (written in
 * legacy and dual, kept after cutover) or in the events table (version 4; absent on release 3).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import { type CommentTarget, traceOfVirtualRoot } from './rules.ts';

export interface TargetStores {
  pool: pg.Pool;
  analytics: ClickHouseClient;
  /** Whether the events tables exist (release 4). */
  hasEvents: boolean;
  /** False to leave the legacy tables unread (the UI in events_only, whose history is in events). */
  readLegacy?: boolean;
}

/** One probe per table; `{id}` is the object id, `{projectId}` the caller's project. */
const PROBES: Record<Exclude<CommentTarget['objectType'], 'PROMPT'>, { legacy: string; events: string }> = {
  TRACE: {
    legacy: 'SELECT 1 FROM traces WHERE project_id = {projectId:String} AND id = {id:String} LIMIT 1',
    events:
      'SELECT 1 FROM events_core WHERE project_id = {projectId:String} AND trace_id = {id:String} LIMIT 1',
  },
  OBSERVATION: {
    legacy: 'SELECT 1 FROM observations WHERE project_id = {projectId:String} AND id = {id:String} LIMIT 1',
    events:
      'SELECT 1 FROM events_core WHERE project_id = {projectId:String} AND span_id = {id:String} LIMIT 1',
  },
  SESSION: {
    legacy: 'SELECT 1 FROM traces WHERE project_id = {projectId:String} AND session_id = {id:String} LIMIT 1',
    events:
      'SELECT 1 FROM events_core WHERE project_id = {projectId:String} AND session_id = {id:String} LIMIT 1',
  },
};

async function anyRow(analytics: ClickHouseClient, query: string, projectId: string, id: string) {
  const rs = await analytics.query({ query, query_params: { projectId, id }, format: 'JSONEachRow' });
  return (await rs.json()).length > 0;
}

export async function targetExists(
  stores: TargetStores,
  projectId: string,
  target: CommentTarget,
): Promise<boolean> {
  const { objectType, objectId } = target;
  if (objectType === 'PROMPT') {
    const { rows } = await stores.pool.query('SELECT 1 FROM prompts WHERE project_id = $1 AND id = $2', [
      projectId,
      objectId,
    ]);
    return rows.length > 0;
  }
  if (objectType === 'OBSERVATION') {
    const trace = traceOfVirtualRoot(objectId);
    if (
      trace !== undefined &&
      (await targetExists(stores, projectId, { objectType: 'TRACE', objectId: trace }))
    ) {
      return true;
    }
  }
  const probe = PROBES[objectType];
  if (stores.readLegacy !== false && (await anyRow(stores.analytics, probe.legacy, projectId, objectId)))
    return true;
  return stores.hasEvents && anyRow(stores.analytics, probe.events, projectId, objectId);
}
