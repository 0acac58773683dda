/**
 * Organizations as the web UI administers them for a signed-in user: the ones the user belongs to
 * (with the user's role there), a new one (its creator its owner, in one transaction), a rename,
 * and the deletion of one that holds no project.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { isRole, type Role } from '../../kernel/roles.ts';
import { inTransaction } from '../../platform/datastores/transaction.ts';

export interface OrganizationAccess {
  id: string;
  name: string;
  role: Role;
}

/** The user's organizations; `orgId` narrows to one. */
export async function organizationsOf(
  pool: pg.Pool,
  userId: string,
  orgId?: string,
): Promise<OrganizationAccess[]> {
  const { rows } = await pool.query<{ id: string; name: string; role: string }>(
    `SELECT o.id, o.name, m.role FROM organizations o
       JOIN organization_memberships m ON m.org_id = o.id AND m.user_id = $1
      WHERE ($2::text IS NULL OR o.id = $2) ORDER BY o.name, o.id`,
    [userId, orgId ?? null],
  );
  return rows.flatMap((r) => (isRole(r.role) ? [{ id: r.id, name: r.name, role: r.role }] : []));
}

export async function createOrganization(
  pool: pg.Pool,
  userId: string,
  name: string,
): Promise<OrganizationAccess> {
  const id = randomUUID();
  await inTransaction(pool, async (c) => {
    await c.query('INSERT INTO organizations (id, name) VALUES ($1, $2)', [id, name]);
    await c.query(`INSERT INTO organization_memberships (org_id, user_id, role) VALUES ($1, $2, 'owner')`, [
      id,
      userId,
    ]);
  });
  return { id, name, role: 'owner' };
}

export async function renameOrganization(pool: pg.Pool, orgId: string, name: string): Promise<void> {
  await pool.query('UPDATE organizations SET name = $2, updated_at = now() WHERE id = $1', [orgId, name]);
}

/**
 * Deletes an organization that holds no project (its memberships and organization keys go with it),
 * or answers how many projects it still holds — a project being deleted counts until the worker has
 * removed its data, so no project is left without its organization. The organization's row is
 * locked first: a project created meanwhile waits, then finds the organization gone.
 */
export async function deleteOrganization(pool: pg.Pool, orgId: string): Promise<{ projects: number }> {
  return inTransaction(pool, async (c) => {
    await c.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [orgId]);
    const { rows } = await c.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM projects WHERE org_id = $1',
      [orgId],
    );
    const projects = rows[0]!.n;
    if (projects === 0) await c.query('DELETE FROM organizations WHERE id = $1', [orgId]);
    return { projects };
  });
}
