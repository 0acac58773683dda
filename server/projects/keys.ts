/**
 * Project API keys. The public key identifies the key pair; the secret key is 256 bits of
 * randomness, returned once at creation and stored only as its SHA-256 (a fast hash is enough for
 * a random secret of that size, and lets every request be checked without a slow KDF).
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type pg from 'pg';

export interface ProjectKeys {
  projectId: string;
  publicKey: string;
  secretKey: string;
}

export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

const token = (prefix: string) => `${prefix}-${randomBytes(32).toString('base64url')}`;

export async function createProject(pool: pg.Pool, name: string): Promise<ProjectKeys> {
  const projectId = randomUUID();
  const publicKey = token('pk-obs');
  const secretKey = token('sk-obs');
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('INSERT INTO projects (id, name) VALUES ($1, $2)', [projectId, name]);
    await client.query(
      'INSERT INTO api_keys (id, project_id, public_key, hashed_secret_key, display_secret_key) VALUES ($1, $2, $3, $4, $5)',
      [
        randomUUID(),
        projectId,
        publicKey,
        hashSecret(secretKey),
        `${secretKey.slice(0, 10)}...${secretKey.slice(-4)}`,
      ],
    );
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
  return { projectId, publicKey, secretKey };
}

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
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
