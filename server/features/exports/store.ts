/**
 * Export configurations and their checkpoints in PostgreSQL. The checkpoint advances only from the
 * window the caller wrote (compare-and-set), so two workers, or a worker restarted mid-window,
 * never move it past a window that was not written.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { ExportFormat, ExportFrequency, ExportSource } from './rules.ts';

export interface ExportConfig {
  id: string;
  projectId: string;
  source: ExportSource;
  format: ExportFormat;
  frequency: ExportFrequency;
  prefix: string;
  checkpoint: Date;
  windowsWritten: number;
  rowsWritten: number;
  lastRunAt: Date | null;
  lastSkipReason: string | null;
  createdAt: Date;
}

interface Row {
  id: string;
  project_id: string;
  source: ExportSource;
  format: ExportFormat;
  frequency: ExportFrequency;
  prefix: string;
  checkpoint: Date;
  windows_written: number;
  rows_written: string;
  last_run_at: Date | null;
  last_skip_reason: string | null;
  created_at: Date;
}

const toConfig = (r: Row): ExportConfig => ({
  id: r.id,
  projectId: r.project_id,
  source: r.source,
  format: r.format,
  frequency: r.frequency,
  prefix: r.prefix,
  checkpoint: r.checkpoint,
  windowsWritten: r.windows_written,
  rowsWritten: Number(r.rows_written),
  lastRunAt: r.last_run_at,
  lastSkipReason: r.last_skip_reason,
  createdAt: r.created_at,
});

export async function createExport(
  pool: pg.Pool,
  c: Pick<ExportConfig, 'projectId' | 'source' | 'format' | 'frequency' | 'prefix' | 'checkpoint'>,
): Promise<ExportConfig> {
  const { rows } = await pool.query<Row>(
    `INSERT INTO export_configs (id, project_id, source, format, frequency, prefix, checkpoint)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [randomUUID(), c.projectId, c.source, c.format, c.frequency, c.prefix, c.checkpoint],
  );
  return toConfig(rows[0]!);
}

export async function listExports(pool: pg.Pool, projectId?: string): Promise<ExportConfig[]> {
  const { rows } = await pool.query<Row>(
    'SELECT * FROM export_configs WHERE ($1::text IS NULL OR project_id = $1) ORDER BY created_at, id',
    [projectId ?? null],
  );
  return rows.map(toConfig);
}

export async function findExport(pool: pg.Pool, projectId: string, id: string) {
  const { rows } = await pool.query<Row>('SELECT * FROM export_configs WHERE project_id = $1 AND id = $2', [
    projectId,
    id,
  ]);
  return rows[0] && toConfig(rows[0]);
}

export async function deleteExport(pool: pg.Pool, projectId: string, id: string): Promise<boolean> {
  const { rowCount } = await pool.query('DELETE FROM export_configs WHERE project_id = $1 AND id = $2', [
    projectId,
    id,
  ]);
  return (rowCount ?? 0) > 0;
}

/** Moves the checkpoint from `from` to `to` after a window was written; false if it had moved already. */
export async function advanceCheckpoint(pool: pg.Pool, id: string, from: Date, to: Date, rows: number) {
  const { rowCount } = await pool.query(
    `UPDATE export_configs SET checkpoint = $3, windows_written = windows_written + 1,
       rows_written = rows_written + $4, last_run_at = now(), last_skip_reason = NULL, updated_at = now()
     WHERE id = $1 AND checkpoint = $2`,
    [id, from, to, rows],
  );
  return (rowCount ?? 0) > 0;
}

/** Records why a due window was not written (the checkpoint stays, so nothing is skipped for good). */
export async function recordSkip(pool: pg.Pool, id: string, reason: string): Promise<void> {
  await pool.query(
    'UPDATE export_configs SET last_run_at = now(), last_skip_reason = $2, updated_at = now() WHERE id = $1',
    [id, reason],
  );
}
