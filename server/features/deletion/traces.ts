/**
 * Deletes traces of one project everywhere they left data: the analytics tables (trace, its
 * observations and events, its scores), then in PostgreSQL the comments on the trace and its
 * observations and the trace's media links. Media content is shared per project by hash, so an
 * object leaves blob storage only when no link is left to it. The call is audited first, so a
 * deletion that fails half-way is still on record and can be repeated (every step is idempotent),
 * and its tombstones are recorded before any row goes, so no later write brings the traces back.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { ServiceConfig } from '../../kernel/config/env.ts';
import type { BlobStore } from '../../platform/blobs/store.ts';
import { inTransaction } from '../../platform/datastores/transaction.ts';
import type { Dialect } from '../../platform/migrations/analytics/dialect.ts';
import { type AuditActor, audit } from '../audit/audit.ts';
import { SCRATCH_TABLE } from '../backfill/sql.ts';
import { recordTraceTombstones } from '../tombstones/record.ts';
import { traceTables } from '../tombstones/tables.ts';
import type { UpdateForm } from '../write-model/trace-events-update.ts';
import { deleteStatement, traceDeleteStatement, traceObservationIdsQuery } from './trace-deletion-sql.ts';

export interface TraceDeletionDeps {
  pool: pg.Pool;
  analytics: ClickHouseClient;
  mediaBlobs?: BlobStore | undefined;
  release: '3' | '4';
  form: UpdateForm;
  dialect: Dialect;
}

/** What deletion needs from a process's configuration and stores. */
export function traceDeletionDeps(
  config: Pick<ServiceConfig, 'clickhouse' | 'mode'>,
  stores: Pick<TraceDeletionDeps, 'pool' | 'analytics' | 'mediaBlobs'>,
): TraceDeletionDeps {
  const { clickhouse, mode } = config;
  return {
    ...stores,
    release: mode.release,
    form: clickhouse.useLightweightUpdate ? 'lightweight' : 'mutation',
    dialect: { cluster: clickhouse.clusterEnabled, clusterName: clickhouse.clusterName },
  };
}

export async function deleteTraces(
  deps: TraceDeletionDeps,
  projectId: string,
  actor: AuditActor,
  traceIds: readonly string[],
): Promise<void> {
  const ids = [...new Set(traceIds)];
  await audit(deps.pool, { projectId, actor, resourceType: 'trace', resourceIds: ids });
  // Committed before any row goes: every later writer leaves these traces out
  // (server/features/tombstones/record.ts). Retention records none: its policy is the standing filter,
  // applied again by every pass (docs/backup.md, "Deletions stay deleted").
  if (!('policy' in actor && actor.policy === 'retention'))
    await recordTraceTombstones(deps.pool, projectId, actor, ids);
  const params = { project_id: projectId, trace_ids: ids };
  const observationIds = (
    await (
      await deps.analytics.query({
        query: traceObservationIdsQuery(deps.release),
        query_params: params,
        format: 'JSONEachRow',
      })
    ).json<{ id: string }>()
  ).map((r) => r.id);
  // The tables are independent: their deletions run at once, so the call waits for the slowest
  // table rather than their sum (each waits until its rows are gone).
  await Promise.all([
    ...traceTables(deps.release).map((table) => {
      const { query, params } = traceDeleteStatement(table, deps.form, deps.dialect, projectId, ids);
      return deps.analytics.command({ query, query_params: params });
    }),
    deleteFromScratch(deps, projectId, ids),
  ]);
  await deps.pool.query(
    `DELETE FROM comments WHERE project_id = $1
       AND ((object_type = 'TRACE' AND object_id = ANY($2)) OR (object_type = 'OBSERVATION' AND object_id = ANY($3)))`,
    [projectId, ids, observationIds],
  );
  await deleteMediaOf(deps, projectId, ids);
}

/**
 * The backfill's scratch copy of the observations, while it exists (steps 2 to 5): the copies of a
 * deleted trace's observations go with it rather than wait for step 5 to drop the table.
 */
async function deleteFromScratch(deps: TraceDeletionDeps, projectId: string, ids: string[]) {
  if (deps.release !== '4') return;
  const rs = await deps.analytics.query({
    query: 'SELECT 1 FROM system.tables WHERE database = currentDatabase() AND name = {t:String}',
    query_params: { t: SCRATCH_TABLE },
    format: 'JSONEachRow',
  });
  if ((await rs.json()).length === 0) return;
  const s = deleteStatement(
    SCRATCH_TABLE,
    'mutation',
    deps.dialect,
    'project_id = {project_id:String} AND trace_id IN {trace_ids:Array(String)}',
    { project_id: projectId, trace_ids: ids },
  );
  await deps.analytics.command({ query: s.query, query_params: s.params });
}

/**
 * Removes the traces' media links, then each media left without a link: its blob first, while the
 * row is locked (a concurrent upload of the same content waits and then claims a fresh row, so it
 * never loses bytes it uploads after this), then its row.
 */
async function deleteMediaOf(deps: TraceDeletionDeps, projectId: string, traceIds: string[]) {
  await inTransaction(deps.pool, async (c) => {
    const { rows: linked } = await c.query<{ media_id: string }>(
      `WITH t AS (DELETE FROM trace_media WHERE project_id = $1 AND trace_id = ANY($2) RETURNING media_id),
            o AS (DELETE FROM observation_media WHERE project_id = $1 AND trace_id = ANY($2) RETURNING media_id)
       SELECT media_id FROM t UNION SELECT media_id FROM o`,
      [projectId, traceIds],
    );
    const mediaIds = linked.map((r) => r.media_id);
    // Locked first, checked after: the check's fresh snapshot sees links committed while waiting.
    await c.query('SELECT 1 FROM media WHERE project_id = $1 AND id = ANY($2) FOR UPDATE', [
      projectId,
      mediaIds,
    ]);
    const { rows: orphans } = await c.query<{ id: string; bucket_path: string }>(
      `SELECT id, bucket_path FROM media m WHERE m.project_id = $1 AND m.id = ANY($2)
         AND NOT EXISTS (SELECT 1 FROM trace_media l WHERE l.project_id = m.project_id AND l.media_id = m.id)
         AND NOT EXISTS (SELECT 1 FROM observation_media l WHERE l.project_id = m.project_id AND l.media_id = m.id)`,
      [projectId, mediaIds],
    );
    for (const m of orphans) await deps.mediaBlobs?.delete(m.bucket_path);
    await c.query('DELETE FROM media WHERE project_id = $1 AND id = ANY($2)', [
      projectId,
      orphans.map((m) => m.id),
    ]);
  });
}
