/**
 * Deletions survive a restore. A backup taken before a deletion holds the deleted rows, and its
 * relational part a record without the deletion's tombstones; so the record as it stands is read
 * from the live database before anything is replaced, written back into the restored one, and every
 * tombstoned trace is deleted again from the restored analytics store, before the ingestion log's
 * replay (which honours the record like any write).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { BackupPart } from '../../contract/backup.ts';
import { type PurgeDeps, purgeTraces, readTombstones } from '../tombstones/record.ts';
import { byProject, type Tombstone } from '../tombstones/sql.ts';

interface SavedTombstone {
  project_id: string;
  trace_id: string;
  deleted_at: Date;
  api_key_id: string | null;
  user_id: string | null;
  policy: string | null;
}

/** Trace ids per purge statement. */
const PURGE_SLICE = 1_000;

/** The record before the restore; empty when the live database has none (yet, or any more). */
export async function saveTombstones(pool: pg.Pool): Promise<SavedTombstone[]> {
  try {
    const { rows } = await pool.query<SavedTombstone>(
      'SELECT project_id, trace_id, deleted_at, api_key_id, user_id, policy FROM trace_tombstones',
    );
    return rows;
  } catch {
    // A database restored from nothing (lost) has no record to keep: the backup's is all there is.
    return [];
  }
}

/** After the restored parts: the saved record back, then the deleted rows deleted again. */
export async function reapplyTombstones(
  pool: pg.Pool,
  analytics: ClickHouseClient,
  purge: Omit<PurgeDeps, 'analytics'>,
  saved: SavedTombstone[],
  parts: BackupPart[],
): Promise<number> {
  // A backup from before the record existed restores a schema without it (the next start migrates).
  const { rows } = await pool.query<{ present: boolean }>(
    "SELECT to_regclass('trace_tombstones') IS NOT NULL AS present",
  );
  if (!rows[0]?.present) return 0;
  if (parts.includes('relational') && saved.length > 0)
    await pool.query(
      `INSERT INTO trace_tombstones (project_id, trace_id, deleted_at, api_key_id, user_id, policy)
       SELECT * FROM jsonb_to_recordset($1::jsonb)
         AS t(project_id text, trace_id text, deleted_at timestamptz, api_key_id text, user_id text, policy text)
       ON CONFLICT (project_id, trace_id) DO UPDATE SET deleted_at = GREATEST(trace_tombstones.deleted_at, excluded.deleted_at)`,
      [JSON.stringify(saved)],
    );
  if (!parts.includes('analytics')) return 0;
  const { tombstones } = await readTombstones(pool);
  await purgeAll({ ...purge, analytics }, tombstones);
  return tombstones.length;
}

async function purgeAll(deps: PurgeDeps, tombstones: Tombstone[]): Promise<void> {
  for (const [projectId, target] of byProject(tombstones)) {
    if (target.all) {
      await purgeTraces(deps, projectId, target);
      continue;
    }
    for (let at = 0; at < target.traceIds.length; at += PURGE_SLICE)
      await purgeTraces(deps, projectId, {
        all: false,
        traceIds: target.traceIds.slice(at, at + PURGE_SLICE),
      });
  }
}
