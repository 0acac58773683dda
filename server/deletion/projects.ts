/**
 * Removal of deleted projects, by the worker: a project marked deleted (its keys and grants are
 * already gone) loses its rows in every analytics table that has a `project_id`, its media
 * objects in blob storage, and then its PostgreSQL row, whose foreign keys cascade to everything
 * relational. One replica works on a project at a time: its row stays locked (FOR UPDATE SKIP
 * LOCKED) until the row itself is deleted in the same transaction, so a kill at any point leaves
 * it marked and the next pass repeats the idempotent steps.
 */
import { inTransaction } from '../datastores/transaction.ts';
import { recordProjectTombstone } from '../tombstones/record.ts';
import { audit } from './audit.ts';
import { deleteStatement } from './trace-deletion-sql.ts';
import type { TraceDeletionDeps } from './traces.ts';

/** Tables with data (MergeTree family: not views) that name a project. */
const PROJECT_TABLES = `
SELECT DISTINCT c.table AS name FROM system.columns c
JOIN system.tables t ON t.database = c.database AND t.name = c.table
WHERE c.database = currentDatabase() AND c.name = 'project_id' AND t.engine LIKE '%MergeTree%'
ORDER BY name`;

async function analyticsTables(deps: TraceDeletionDeps): Promise<string[]> {
  const rs = await deps.analytics.query({ query: PROJECT_TABLES, format: 'JSONEachRow' });
  return (await rs.json<{ name: string }>()).map((r) => r.name);
}

/** Removes one deleted project if any is waiting and not taken; its id, or undefined. */
async function removeOneProject(deps: TraceDeletionDeps): Promise<string | undefined> {
  return inTransaction(deps.pool, async (c) => {
    const { rows } = await c.query<{ id: string }>(
      `SELECT id FROM projects WHERE deleted_at IS NOT NULL ORDER BY deleted_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`,
    );
    const projectId = rows[0]?.id;
    if (!projectId) return undefined;
    // Marked before tombstones existed: recorded now (normally the mark recorded it already).
    await recordProjectTombstone(c, projectId);
    for (const table of await analyticsTables(deps)) {
      const s = deleteStatement(table, deps.form, deps.dialect, 'project_id = {project_id:String}', {
        project_id: projectId,
      });
      await deps.analytics.command({ query: s.query, query_params: s.params });
    }
    const media = await c.query<{ bucket_path: string }>(
      'SELECT bucket_path FROM media WHERE project_id = $1',
      [projectId],
    );
    for (const m of media.rows) await deps.mediaBlobs?.delete(m.bucket_path);
    await audit(c, {
      projectId,
      actor: { policy: 'project-deletion' },
      resourceType: 'project',
      resourceIds: [projectId],
    });
    await c.query('DELETE FROM projects WHERE id = $1', [projectId]);
    return projectId;
  });
}

/** Removes every deleted project waiting, until none is left or `stopping`; their ids. */
export async function runProjectDeletionPass(
  deps: TraceDeletionDeps,
  stopping: () => boolean = () => false,
): Promise<string[]> {
  const removed: string[] = [];
  while (!stopping()) {
    const id = await removeOneProject(deps);
    if (!id) break;
    removed.push(id);
  }
  return removed;
}
