/**
 * What an organization-scoped API key administers (the reference's projects and organizations
 * APIs): the organization's projects (create, rename, delete), their API keys, and the
 * memberships of the organization and its projects. Such a key never reads or writes a project's
 * data. Keys are checked against PostgreSQL at each call (administration is rare), so a revoked
 * key stops at once.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { inTransaction } from '../../platform/datastores/transaction.ts';
import { recordProjectTombstone } from '../tombstones/record.ts';
import { hashSecret, keySummaries, type NewApiKey, newKeyPair, safeEqual } from './keys.ts';

export interface OrganizationPrincipal {
  orgId: string;
  publicKey: string;
}

export async function verifyOrganizationKey(
  pool: pg.Pool,
  publicKey: string,
  secretKey: string,
): Promise<OrganizationPrincipal | null> {
  const { rows } = await pool.query<{ org_id: string; hashed_secret_key: string }>(
    'SELECT org_id, hashed_secret_key FROM organization_api_keys WHERE public_key = $1',
    [publicKey],
  );
  const row = rows[0];
  if (!row || !safeEqual(row.hashed_secret_key, hashSecret(secretKey))) return null;
  await pool.query('UPDATE organization_api_keys SET last_used_at = now() WHERE public_key = $1', [
    publicKey,
  ]);
  return { orgId: row.org_id, publicKey };
}

export async function createOrganizationKey(
  pool: pg.Pool,
  orgId: string,
  note: string | null,
): Promise<NewApiKey> {
  const id = randomUUID();
  const k = newKeyPair();
  const { rows } = await pool.query<{ created_at: Date }>(
    `INSERT INTO organization_api_keys (id, org_id, public_key, hashed_secret_key, display_secret_key, note)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING created_at`,
    [id, orgId, k.publicKey, k.hashedSecretKey, k.displaySecretKey, note],
  );
  return {
    id,
    publicKey: k.publicKey,
    secretKey: k.secretKey,
    displaySecretKey: k.displaySecretKey,
    note,
    createdAt: rows[0]!.created_at.toISOString(),
    lastUsedAt: null,
  };
}

export const organizationKeys = (pool: pg.Pool, orgId: string) =>
  keySummaries(pool, 'organization_api_keys', orgId);

export interface OrganizationProject {
  id: string;
  name: string;
  metadata: Record<string, unknown>;
  retentionDays: number | null;
  createdAt: string;
  updatedAt: string;
}

export async function organizationProjects(
  pool: pg.Pool,
  orgId: string,
  projectId?: string,
): Promise<OrganizationProject[]> {
  const { rows } = await pool.query<{
    id: string;
    name: string;
    metadata: Record<string, unknown>;
    retention_days: number | null;
    created_at: Date;
    updated_at: Date;
  }>(
    `SELECT id, name, metadata, retention_days, created_at, updated_at FROM projects
     WHERE org_id = $1 AND deleted_at IS NULL AND ($2::text IS NULL OR id = $2) ORDER BY created_at, id`,
    [orgId, projectId ?? null],
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    metadata: r.metadata,
    retentionDays: r.retention_days || null,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  }));
}

/** Renames the project and sets what is given; false when the organization has no such project. */
export async function updateProject(
  pool: pg.Pool,
  orgId: string,
  projectId: string,
  change: {
    name: string;
    metadata?: Record<string, unknown> | undefined;
    retentionDays?: number | undefined;
  },
): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE projects SET name = $3, metadata = coalesce($4::jsonb, metadata),
       retention_days = CASE WHEN $5::int IS NULL THEN retention_days ELSE nullif($5::int, 0) END,
       retention_applied_at = CASE WHEN $5::int IS NULL THEN retention_applied_at END,
       updated_at = now()
     WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`,
    [
      orgId,
      projectId,
      change.name,
      change.metadata === undefined ? null : JSON.stringify(change.metadata),
      change.retentionDays ?? null,
    ],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * Marks the project deleted and, in the same transaction, removes its API keys, grants and
 * invitations, so nothing reaches it from then on; the worker removes its data and then the row.
 */
export async function markProjectDeleted(
  pool: pg.Pool,
  orgId: string,
  projectId: string,
): Promise<{ revokedKeys: string[] } | undefined> {
  return inTransaction(pool, async (c) => {
    const { rowCount } = await c.query(
      'UPDATE projects SET deleted_at = now() WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL',
      [orgId, projectId],
    );
    // Nothing changed yet, so committing here writes nothing.
    if (!rowCount) return undefined;
    const keys = await c.query<{ public_key: string }>(
      'DELETE FROM api_keys WHERE project_id = $1 RETURNING public_key',
      [projectId],
    );
    for (const table of ['project_memberships', 'project_invitations'])
      await c.query(`DELETE FROM ${table} WHERE project_id = $1`, [projectId]);
    // Committed with the mark, before the worker removes any row: no later write brings them back.
    await recordProjectTombstone(c, projectId);
    return { revokedKeys: keys.rows.map((r) => r.public_key) };
  });
}

export interface Membership {
  userId: string;
  role: string;
  email: string;
  name: string | null;
}

/** The organization's grants, or one project's (`projectId`). */
export async function memberships(pool: pg.Pool, orgId: string, projectId?: string): Promise<Membership[]> {
  const { rows } = await pool.query<{ user_id: string; role: string; email: string; name: string | null }>(
    projectId
      ? `SELECT m.user_id, m.role, u.email, u.name FROM project_memberships m
         JOIN projects p ON p.id = m.project_id JOIN users u ON u.id = m.user_id
         WHERE p.org_id = $1 AND p.id = $2 ORDER BY u.email`
      : `SELECT m.user_id, m.role, u.email, u.name FROM organization_memberships m
         JOIN users u ON u.id = m.user_id WHERE m.org_id = $1 ORDER BY u.email`,
    projectId ? [orgId, projectId] : [orgId],
  );
  return rows.map((r) => ({ userId: r.user_id, role: r.role, email: r.email, name: r.name }));
}

/** Whether the user is a member of the organization. */
export async function isOrganizationMember(pool: pg.Pool, orgId: string, userId: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    'SELECT 1 FROM organization_memberships WHERE org_id = $1 AND user_id = $2',
    [orgId, userId],
  );
  return (rowCount ?? 0) > 0;
}

export async function userExists(pool: pg.Pool, userId: string): Promise<boolean> {
  const { rowCount } = await pool.query('SELECT 1 FROM users WHERE id = $1', [userId]);
  return (rowCount ?? 0) > 0;
}
