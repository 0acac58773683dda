/**
 * The integrations' rows in PostgreSQL. Secrets arrive here already sealed (../llm/secrets.ts) and
 * leave only to the export jobs. The checkpoint advances by compare-and-set from the window the
 * caller delivered, so a restarted or concurrent worker never moves it past an undelivered window.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { BlobSource, Frequency, UpsertBlobRequest } from './rules.ts';

export interface BlobIntegration {
  id: string;
  projectId: string;
  type: UpsertBlobRequest['type'];
  bucketName: string;
  endpoint: string | null;
  region: string;
  accessKeyId: string | null;
  secretAccessKeyEncrypted: string | null;
  prefix: string;
  exportFrequency: Frequency;
  enabled: boolean;
  forcePathStyle: boolean;
  fileType: UpsertBlobRequest['fileType'];
  exportMode: UpsertBlobRequest['exportMode'];
  exportStartDate: Date | null;
  compressed: boolean;
  exportSource: BlobSource;
  exportFieldGroups: string[] | null;
  checkpoint: Date;
  lastSyncAt: Date | null;
  lastError: string | null;
  lastErrorAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const camel = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const fromRow = <T>(r: Record<string, unknown>): T =>
  Object.fromEntries(Object.entries(r).map(([k, v]) => [camel(k), v])) as T;

/** What an upsert stores: the request with the defaults resolved and the secret sealed. */
export type BlobIntegrationWrite = Omit<
  BlobIntegration,
  'id' | 'checkpoint' | 'lastSyncAt' | 'lastError' | 'lastErrorAt' | 'createdAt' | 'updatedAt'
>;

/**
 * Creates the project's integration, or replaces its settings keeping its id and checkpoint (a
 * changed start moves the checkpoint: the new export begins where it says). Credentials left out
 * of an update keep the stored ones.
 */
export async function upsertBlobIntegration(
  pool: pg.Pool,
  w: BlobIntegrationWrite,
  checkpoint: Date,
): Promise<BlobIntegration> {
  const { rows } = await pool.query(
    `INSERT INTO blob_storage_integrations (id, project_id, type, bucket_name, endpoint, region, access_key_id,
       secret_access_key_encrypted, prefix, export_frequency, enabled, force_path_style, file_type, export_mode,
       export_start_date, compressed, export_source, export_field_groups, checkpoint)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
     ON CONFLICT (project_id) DO UPDATE SET type = EXCLUDED.type, bucket_name = EXCLUDED.bucket_name,
       endpoint = EXCLUDED.endpoint, region = EXCLUDED.region,
       access_key_id = COALESCE(EXCLUDED.access_key_id, blob_storage_integrations.access_key_id),
       secret_access_key_encrypted = COALESCE(EXCLUDED.secret_access_key_encrypted,
         blob_storage_integrations.secret_access_key_encrypted),
       prefix = EXCLUDED.prefix, export_frequency = EXCLUDED.export_frequency, enabled = EXCLUDED.enabled,
       force_path_style = EXCLUDED.force_path_style, file_type = EXCLUDED.file_type,
       export_mode = EXCLUDED.export_mode, export_start_date = EXCLUDED.export_start_date,
       compressed = EXCLUDED.compressed, export_source = EXCLUDED.export_source,
       export_field_groups = EXCLUDED.export_field_groups,
       checkpoint = CASE WHEN blob_storage_integrations.export_mode IS DISTINCT FROM EXCLUDED.export_mode
         OR blob_storage_integrations.export_start_date IS DISTINCT FROM EXCLUDED.export_start_date
         THEN EXCLUDED.checkpoint ELSE blob_storage_integrations.checkpoint END,
       last_error = NULL, last_error_at = NULL, updated_at = now()
     RETURNING *`,
    [
      randomUUID(),
      w.projectId,
      w.type,
      w.bucketName,
      w.endpoint,
      w.region,
      w.accessKeyId,
      w.secretAccessKeyEncrypted,
      w.prefix,
      w.exportFrequency,
      w.enabled,
      w.forcePathStyle,
      w.fileType,
      w.exportMode,
      w.exportStartDate,
      w.compressed,
      w.exportSource,
      w.exportFieldGroups === null ? null : JSON.stringify(w.exportFieldGroups),
      checkpoint,
    ],
  );
  return fromRow(rows[0]);
}

export async function findBlobIntegration(pool: pg.Pool, by: { id?: string; projectId?: string }) {
  const { rows } = await pool.query(
    'SELECT * FROM blob_storage_integrations WHERE id = $1 OR project_id = $2',
    [by.id ?? null, by.projectId ?? null],
  );
  return rows[0] ? fromRow<BlobIntegration>(rows[0]) : undefined;
}

/** The integrations of `projectIds`, or every enabled one (the export job's list). */
export function listBlobIntegrations(pool: pg.Pool, projectIds?: string[]): Promise<BlobIntegration[]> {
  return listIntegrations<BlobIntegration>(pool, 'blob_storage_integrations', projectIds);
}

export async function deleteBlobIntegration(pool: pg.Pool, id: string): Promise<void> {
  await pool.query('DELETE FROM blob_storage_integrations WHERE id = $1', [id]);
}

type Table = 'blob_storage_integrations' | 'posthog_integrations';
const KEY: Record<Table, string> = { blob_storage_integrations: 'id', posthog_integrations: 'project_id' };

async function listIntegrations<T>(pool: pg.Pool, table: Table, projectIds?: string[]): Promise<T[]> {
  const { rows } = await pool.query(
    `SELECT * FROM ${table}
     WHERE ($1::text[] IS NULL AND enabled) OR project_id = ANY($1) ORDER BY created_at, ${KEY[table]}`,
    [projectIds ?? null],
  );
  return rows.map((r) => fromRow<T>(r));
}

/** Moves the checkpoint from `from` to `to` after a window was delivered; false if it had moved already. */
export async function advanceCheckpoint(
  pool: pg.Pool,
  table: Table,
  key: string,
  from: Date,
  to: Date,
  sent = 0,
): Promise<boolean> {
  const counter = table === 'posthog_integrations' ? ', events_sent = events_sent + $4' : '';
  const { rowCount } = await pool.query(
    `UPDATE ${table} SET checkpoint = $3, last_sync_at = $3, last_error = NULL, last_error_at = NULL,
       updated_at = now()${counter}
     WHERE ${KEY[table]} = $1 AND checkpoint = $2`,
    table === 'posthog_integrations' ? [key, from, to, sent] : [key, from, to],
  );
  return (rowCount ?? 0) > 0;
}

/** Records why the due window was not delivered; the checkpoint stays, so it is retried. */
async function recordError(pool: pg.Pool, table: Table, key: string, message: string): Promise<void> {
  await pool.query(
    `UPDATE ${table} SET last_error = $2, last_error_at = now(), updated_at = now() WHERE ${KEY[table]} = $1`,
    [key, message.slice(0, 2000)],
  );
}

/** Runs `deliver` on each integration; a failure is recorded on its integration and the others go on. */
export async function deliverEach<T extends { projectId: string }>(
  pool: pg.Pool,
  table: Table,
  integrations: T[],
  keyOf: (i: T) => string,
  deliver: (i: T) => Promise<void>,
): Promise<{ projectId: string; error: string }[]> {
  const failed: { projectId: string; error: string }[] = [];
  for (const i of integrations) {
    try {
      await deliver(i);
    } catch (err) {
      const error = (err as Error).message;
      await recordError(pool, table, keyOf(i), error);
      failed.push({ projectId: i.projectId, error });
    }
  }
  return failed;
}

export interface PostHogIntegration {
  projectId: string;
  host: string;
  apiKeyEncrypted: string;
  enabled: boolean;
  checkpoint: Date;
  lastSyncAt: Date | null;
  eventsSent: string;
  lastError: string | null;
  lastErrorAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A new integration starts from the epoch: the project's whole history goes out first. */
export async function upsertPostHogIntegration(
  pool: pg.Pool,
  w: { projectId: string; host: string; apiKeyEncrypted: string; enabled: boolean },
): Promise<PostHogIntegration> {
  const { rows } = await pool.query(
    `INSERT INTO posthog_integrations (project_id, host, api_key_encrypted, enabled, checkpoint)
     VALUES ($1, $2, $3, $4, to_timestamp(0))
     ON CONFLICT (project_id) DO UPDATE SET host = EXCLUDED.host, api_key_encrypted = EXCLUDED.api_key_encrypted,
       enabled = EXCLUDED.enabled, last_error = NULL, last_error_at = NULL, updated_at = now()
     RETURNING *`,
    [w.projectId, w.host, w.apiKeyEncrypted, w.enabled],
  );
  return fromRow(rows[0]);
}

/** The integrations of `projectIds`, or every enabled one (the export job's list). */
export function listPostHogIntegrations(pool: pg.Pool, projectIds?: string[]): Promise<PostHogIntegration[]> {
  return listIntegrations<PostHogIntegration>(pool, 'posthog_integrations', projectIds);
}

export async function deletePostHogIntegration(pool: pg.Pool, projectId: string): Promise<boolean> {
  const { rowCount } = await pool.query('DELETE FROM posthog_integrations WHERE project_id = $1', [
    projectId,
  ]);
  return (rowCount ?? 0) > 0;
}

/** Whether any integration holds a sealed secret (the processes then need the key to start). */
export async function anySealedIntegrationSecret(pool: pg.Pool): Promise<boolean> {
  const { rows } = await pool.query(
    `SELECT 1 FROM blob_storage_integrations WHERE secret_access_key_encrypted IS NOT NULL
     UNION ALL SELECT 1 FROM posthog_integrations LIMIT 1`,
  );
  return rows.length > 0;
}
