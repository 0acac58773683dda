/** LLM connections in PostgreSQL, every statement scoped by the caller's project. */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { deleteProjectRowReturning, projectRecords } from '../../platform/datastores/project-page.ts';
import type { Adapter } from './adapters.ts';
import type { LlmConnection, UpsertConnectionRequest } from './connections.ts';
import { decryptSecret, encryptSecret, maskSecret } from './secrets.ts';

interface ConnectionRow {
  id: string;
  project_id: string;
  provider: string;
  adapter: Adapter;
  secret_key: string;
  display_secret_key: string;
  base_url: string | null;
  custom_models: string[];
  with_default_models: boolean;
  extra_headers: string | null;
  extra_header_keys: string[];
  config: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
}

const toConnection = (r: ConnectionRow): LlmConnection => ({
  id: r.id,
  projectId: r.project_id,
  provider: r.provider,
  adapter: r.adapter,
  displaySecretKey: r.display_secret_key,
  baseURL: r.base_url,
  customModels: r.custom_models,
  withDefaultModels: r.with_default_models,
  extraHeaderKeys: r.extra_header_keys,
  config: r.config,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

/** Creates the project's connection for `provider`, or replaces it (the reference upserts on provider). */
export async function upsertConnection(
  pool: pg.Pool,
  key: Buffer,
  projectId: string,
  req: UpsertConnectionRequest,
): Promise<LlmConnection> {
  const headers = req.extraHeaders ?? {};
  const { rows } = await pool.query<ConnectionRow>(
    `INSERT INTO llm_connections (id, project_id, provider, adapter, secret_key, display_secret_key, base_url,
       custom_models, with_default_models, extra_headers, extra_header_keys, config)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb)
     ON CONFLICT (project_id, provider) DO UPDATE SET adapter = EXCLUDED.adapter, secret_key = EXCLUDED.secret_key,
       display_secret_key = EXCLUDED.display_secret_key, base_url = EXCLUDED.base_url,
       custom_models = EXCLUDED.custom_models, with_default_models = EXCLUDED.with_default_models,
       extra_headers = EXCLUDED.extra_headers, extra_header_keys = EXCLUDED.extra_header_keys,
       config = EXCLUDED.config, updated_at = now()
     RETURNING *`,
    [
      randomUUID(),
      projectId,
      req.provider,
      req.adapter,
      encryptSecret(key, req.secretKey),
      maskSecret(req.secretKey),
      req.baseURL ?? null,
      req.customModels ?? [],
      req.withDefaultModels ?? true,
      Object.keys(headers).length > 0 ? encryptSecret(key, JSON.stringify(headers)) : null,
      Object.keys(headers),
      req.config == null ? null : JSON.stringify(req.config),
    ],
  );
  return toConnection(rows[0]!);
}

const connections = projectRecords('llm_connections', 'created_at, id', toConnection);

export const listConnections = connections.page;

/** Deletes the connection; its provider name when it existed. */
export const deleteConnection = (pool: pg.Pool, projectId: string, id: string) =>
  deleteProjectRowReturning(pool, 'llm_connections', projectId, id, 'provider');

/** A connection with its secrets, for calling the provider. */
export interface UsableConnection extends LlmConnection {
  secretKey: string;
  extraHeaders: Record<string, string>;
}

async function connectionRow(pool: pg.Pool, projectId: string, provider: string) {
  const { rows } = await pool.query<ConnectionRow>(
    'SELECT * FROM llm_connections WHERE project_id = $1 AND provider = $2',
    [projectId, provider],
  );
  return rows[0];
}

export async function findConnection(
  pool: pg.Pool,
  projectId: string,
  provider: string,
): Promise<LlmConnection | undefined> {
  const r = await connectionRow(pool, projectId, provider);
  return r && toConnection(r);
}

export async function findUsableConnection(
  pool: pg.Pool,
  key: Buffer,
  projectId: string,
  provider: string,
): Promise<UsableConnection | undefined> {
  const r = await connectionRow(pool, projectId, provider);
  if (!r) return undefined;
  return {
    ...toConnection(r),
    secretKey: decryptSecret(key, r.secret_key),
    extraHeaders: r.extra_headers
      ? (JSON.parse(decryptSecret(key, r.extra_headers)) as Record<string, string>)
      : {},
  };
}

/** Whether any project has a connection (then the encryption key is required at start). */
export async function anyConnectionExists(pool: pg.Pool): Promise<boolean> {
  const { rows } = await pool.query('SELECT 1 FROM llm_connections LIMIT 1');
  return rows.length > 0;
}
