/**
 * Project API keys. The public key identifies the key pair; the secret key is 256 bits of
 * randomness, returned once at creation and stored only as its SHA-256 (a fast hash is enough for
 * a random secret of that size, and lets every request be checked without a slow KDF).
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type pg from 'pg';
import { deleteProjectRowReturning } from '../../platform/datastores/project-page.ts';
import { inTransaction } from '../../platform/datastores/transaction.ts';

export interface ProjectKeys {
  projectId: string;
  publicKey: string;
  secretKey: string;
}

export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

const token = (prefix: string) => `${prefix}-${randomBytes(32).toString('base64url')}`;

type Queryable = Pick<pg.Pool, 'query'>;

/** A fresh key pair with what is stored of it: the secret's hash and its masked form. */
export function newKeyPair(predefined?: { publicKey: string; secretKey: string }) {
  const publicKey = predefined?.publicKey ?? token('pk-obs');
  const secretKey = predefined?.secretKey ?? token('sk-obs');
  return {
    publicKey,
    secretKey,
    hashedSecretKey: hashSecret(secretKey),
    displaySecretKey: `${secretKey.slice(0, 10)}...${secretKey.slice(-4)}`,
  };
}

/** A new key pair of the project; the secret is in the answer only. */
async function insertKeyPair(
  db: Queryable,
  projectId: string,
  note: string | null,
  predefined?: { publicKey: string; secretKey: string },
) {
  const id = randomUUID();
  const { publicKey, secretKey, hashedSecretKey, displaySecretKey } = newKeyPair(predefined);
  const { rows } = await db.query<{ created_at: Date }>(
    `INSERT INTO api_keys (id, project_id, public_key, hashed_secret_key, display_secret_key, note)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING created_at`,
    [id, projectId, publicKey, hashedSecretKey, displaySecretKey, note],
  );
  return { id, publicKey, secretKey, displaySecretKey, note, createdAt: rows[0]!.created_at.toISOString() };
}

/** A project with its first key pair (the CLI's and the UI's way: keys to use at once). */
export async function createProject(pool: pg.Pool, name: string): Promise<ProjectKeys> {
  return inTransaction(pool, async (client) => {
    const projectId = await insertProject(client, name);
    const { publicKey, secretKey } = await insertKeyPair(client, projectId, null);
    return { projectId, publicKey, secretKey };
  });
}

/** A project without keys (the administration API creates its keys by their own calls); its id. */
export async function insertProject(
  db: Queryable,
  name: string,
  more: { orgId?: string; metadata?: Record<string, unknown>; retentionDays?: number | null } = {},
): Promise<string> {
  const projectId = randomUUID();
  await db.query(
    `INSERT INTO projects (id, name, org_id, metadata, retention_days)
     VALUES ($1, $2, coalesce($3, 'default'), coalesce($4::jsonb, '{}'), $5)`,
    [
      projectId,
      name,
      more.orgId ?? null,
      more.metadata ? JSON.stringify(more.metadata) : null,
      more.retentionDays || null,
    ],
  );
  return projectId;
}

/** A key as listed: never its secret, only the masked form kept for recognition. */
export interface ApiKeySummary {
  id: string;
  publicKey: string;
  displaySecretKey: string;
  note: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

export type NewApiKey = ApiKeySummary & { secretKey: string };

/** A new key pair of the project: generated, or the caller's (the reference allows both). */
export async function createApiKey(
  pool: pg.Pool,
  projectId: string,
  note: string | null,
  predefined?: { publicKey: string; secretKey: string },
): Promise<NewApiKey> {
  return { ...(await insertKeyPair(pool, projectId, note, predefined)), lastUsedAt: null };
}

/** The keys of a project, or (`table` organization_api_keys) of an organization, without secrets. */
export async function keySummaries(
  pool: pg.Pool,
  table: 'api_keys' | 'organization_api_keys',
  ownerId: string,
): Promise<ApiKeySummary[]> {
  const owner = table === 'api_keys' ? 'project_id' : 'org_id';
  const { rows } = await pool.query<{
    id: string;
    public_key: string;
    display_secret_key: string;
    note: string | null;
    created_at: Date;
    last_used_at: Date | null;
  }>(
    `SELECT id, public_key, display_secret_key, note, created_at, last_used_at
     FROM ${table} WHERE ${owner} = $1 ORDER BY created_at, id`,
    [ownerId],
  );
  return rows.map((r) => ({
    id: r.id,
    publicKey: r.public_key,
    displaySecretKey: r.display_secret_key,
    note: r.note,
    createdAt: r.created_at.toISOString(),
    lastUsedAt: r.last_used_at?.toISOString() ?? null,
  }));
}

export const listApiKeys = (pool: pg.Pool, projectId: string) => keySummaries(pool, 'api_keys', projectId);

/** Deletes the project's key; its public key, or undefined when the project has no such key. */
export const revokeApiKey = (pool: pg.Pool, projectId: string, keyId: string) =>
  deleteProjectRowReturning(pool, 'api_keys', projectId, keyId, 'public_key');

export interface Principal {
  projectId: string;
  publicKey: string;
}

/** Parses `Authorization: Basic base64(public:secret)`; null when absent or malformed. */
export function parseBasicAuth(header: string | undefined): { publicKey: string; secretKey: string } | null {
  const m = header?.match(/^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i);
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i <= 0 || i === decoded.length - 1) return null;
  return { publicKey: decoded.slice(0, i), secretKey: decoded.slice(i + 1) };
}

const CACHE_TTL_MS = 30_000;

/**
 * Resolves a key pair to its project. Successful lookups are cached briefly by public key and
 * secret hash so that ingestion does not query the database on every request.
 */
export class KeyVerifier {
  readonly #pool: pg.Pool;
  readonly #cache = new Map<string, { principal: Principal; hash: string; until: number }>();

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async verify(publicKey: string, secretKey: string): Promise<Principal | null> {
    const hash = hashSecret(secretKey);
    const cached = this.#cache.get(publicKey);
    if (cached && cached.until > Date.now() && safeEqual(cached.hash, hash)) return cached.principal;
    const r = await this.#pool.query<{ project_id: string; hashed_secret_key: string }>(
      'SELECT project_id, hashed_secret_key FROM api_keys WHERE public_key = $1',
      [publicKey],
    );
    const row = r.rows[0];
    if (!row || !safeEqual(row.hashed_secret_key, hash)) return null;
    const principal = { projectId: row.project_id, publicKey };
    if (this.#cache.size > 10_000) this.#cache.clear();
    this.#cache.set(publicKey, { principal, hash, until: Date.now() + CACHE_TTL_MS });
    return principal;
  }

  /** Drops a revoked key from this process's cache. */
  forget(publicKey: string): void {
    this.#cache.delete(publicKey);
  }
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
