/**
 * Removal of deleted projects, by the worker: a project marked deleted (its keys and grants are
 * already gone) loses its rows in every analytics table that has a `project_id`, its media
 * objects in blob storage, and then its PostgreSQL row, whose foreign keys cascade to everything
 * relational. One replica works on a project at a time: it holds a session advisory lock on the
 * project while it works, with no transaction open (the analytics statements and blob deletions of
 * a large project take long; an open transaction would hold back vacuum and a row lock that long),
 * and only the audit and the row's deletion commit together. A kill at any point drops the lock
 * with the connection and leaves the project marked; the next pass repeats the idempotent steps.
 */
import type pg from 'pg';
import { audit } from '../audit/audit.ts';
import { recordProjectTombstone } from '../tombstones/record.ts';
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

/** Deleted projects looked at per claim, oldest first; the first not taken is removed. */
const CANDIDATES = 20;
const LOCK_KEY = `hashtextextended('project-deletion:' || $1, 0)`;

/** Removes one deleted project if any is waiting and not taken; its id, or undefined. */
async function removeOneProject(deps: TraceDeletionDeps): Promise<string | undefined> {
  const c = await deps.pool.connect();
  let failed: Error | undefined;
  try {
    const { rows } = await c.query<{ id: string }>(
      'SELECT id FROM projects WHERE deleted_at IS NOT NULL ORDER BY deleted_at, id LIMIT $1',
      [CANDIDATES],
    );
    for (const { id } of rows) {
      const lock = await c.query<{ got: boolean }>(`SELECT pg_try_advisory_lock(${LOCK_KEY}) AS got`, [id]);
      if (!lock.rows[0]?.got) continue;
      try {
        // Another replica may have removed it between the read and the lock.
        const still = await c.query('SELECT 1 FROM projects WHERE id = $1 AND deleted_at IS NOT NULL', [id]);
        if (still.rowCount === 0) continue;
        await removeProject(deps, c, id);
        return id;
      } finally {
        await c.query(`SELECT pg_advisory_unlock(${LOCK_KEY})`, [id]);
      }
    }
    return undefined;
  } catch (err) {
    // A client that failed may still hold the lock: closed rather than pooled, which releases it.
    failed = err as Error;
    throw err;
  } finally {
    c.release(failed);
  }
}

async function removeProject(deps: TraceDeletionDeps, c: pg.PoolClient, projectId: string) {
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
  await c.query('BEGIN');
  try {
    await audit(c, {
      projectId,
      actor: { policy: 'project-deletion' },
      resourceType: 'project',
      resourceIds: [projectId],
    });
    await c.query('DELETE FROM projects WHERE id = $1', [projectId]);
    await c.query('COMMIT');
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {});
    throw err;
  }
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
