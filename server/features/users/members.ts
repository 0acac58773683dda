/**
 * A project's people: its members (direct grants and its organization's members, the project's own
 * grant winning, as server/kernel/roles.ts), role changes and removals that never leave the project without an
 * owner, and one-time invitations. An invitation's link carries a 256-bit random token; only its
 * SHA-256 is stored, it expires, and accepting it is one transaction that also consumes it.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { effectiveRole, isRole, type Role } from '../../kernel/roles.ts';
import { inTransaction } from '../../platform/datastores/transaction.ts';
import { checkPassword, createUser, normalizeEmail, UserExists } from './store.ts';

export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface Member {
  userId: string;
  email: string;
  name: string | null;
  role: Role;
  /** Where the role comes from: the project's own grant, or the organization's. */
  via: 'project' | 'organization';
}

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
  expiresAt: string;
}

export class MemberConflict extends Error {}
export class InvalidAccount extends Error {}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export async function membersOf(pool: pg.Pool, projectId: string): Promise<Member[]> {
  const { rows } = await pool.query<{
    id: string;
    email: string;
    name: string | null;
    project_role: string | null;
    org_role: string | null;
  }>(
    `SELECT u.id, u.email, u.name, pm.role AS project_role, om.role AS org_role
     FROM projects p
     JOIN users u ON true
     LEFT JOIN project_memberships pm ON pm.project_id = p.id AND pm.user_id = u.id
     LEFT JOIN organization_memberships om ON om.org_id = p.org_id AND om.user_id = u.id
     WHERE p.id = $1 AND (pm.user_id IS NOT NULL OR om.user_id IS NOT NULL)
     ORDER BY u.email`,
    [projectId],
  );
  return rows.flatMap((r) => {
    const projectRole = isRole(r.project_role) ? r.project_role : null;
    const role = effectiveRole(projectRole, isRole(r.org_role) ? r.org_role : null);
    return role
      ? [
          {
            userId: r.id,
            email: r.email,
            name: r.name,
            role,
            via: projectRole ? 'project' : 'organization',
          } as const,
        ]
      : [];
  });
}

/**
 * Sets a user's project role (a project grant, which wins over the organization's), or removes the
 * project grant (`role` null); refused when the project would be left without an owner.
 */
export async function setMemberRole(
  pool: pg.Pool,
  projectId: string,
  userId: string,
  role: Role | null,
): Promise<void> {
  await inTransaction(pool, async (c) => {
    // Serializes role changes of one project, so two owners cannot demote each other at once.
    await c.query('SELECT 1 FROM projects WHERE id = $1 FOR UPDATE', [projectId]);
    if (role === null) {
      await c.query('DELETE FROM project_memberships WHERE project_id = $1 AND user_id = $2', [
        projectId,
        userId,
      ]);
    } else {
      await c.query(
        `INSERT INTO project_memberships (project_id, user_id, role) VALUES ($1, $2, $3)
         ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role`,
        [projectId, userId, role],
      );
    }
    const { rows } = await c.query<{ owners: number }>(
      `SELECT count(*)::int AS owners FROM projects p JOIN users u ON true
       LEFT JOIN project_memberships pm ON pm.project_id = p.id AND pm.user_id = u.id
       LEFT JOIN organization_memberships om ON om.org_id = p.org_id AND om.user_id = u.id
       WHERE p.id = $1 AND coalesce(pm.role, om.role) = 'owner'`,
      [projectId],
    );
    if (rows[0]!.owners === 0) throw new MemberConflict('the project must keep at least one owner');
  });
}

/** A new invitation and its one-time token (in the link, never stored). */
export async function invite(
  pool: pg.Pool,
  projectId: string,
  by: string,
  email: string,
  role: Role,
  now = new Date(),
): Promise<{ invitation: Invitation; token: string }> {
  const token = randomBytes(32).toString('base64url');
  const expires = new Date(now.getTime() + INVITATION_TTL_MS);
  const id = randomUUID();
  await pool.query(
    `INSERT INTO project_invitations (id, project_id, email, role, token_hash, invited_by, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [id, projectId, normalizeEmail(email), role, hashToken(token), by, now, expires],
  );
  return {
    invitation: {
      id,
      email: normalizeEmail(email),
      role,
      createdAt: now.toISOString(),
      expiresAt: expires.toISOString(),
    },
    token,
  };
}

export async function pendingInvitations(pool: pg.Pool, projectId: string): Promise<Invitation[]> {
  const { rows } = await pool.query<{
    id: string;
    email: string;
    role: Role;
    created_at: Date;
    expires_at: Date;
  }>(
    `SELECT id, email, role, created_at, expires_at FROM project_invitations
     WHERE project_id = $1 AND accepted_at IS NULL AND expires_at > now() ORDER BY created_at, id`,
    [projectId],
  );
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    role: r.role,
    createdAt: r.created_at.toISOString(),
    expiresAt: r.expires_at.toISOString(),
  }));
}

export async function withdrawInvitation(pool: pg.Pool, projectId: string, id: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    'DELETE FROM project_invitations WHERE project_id = $1 AND id = $2 AND accepted_at IS NULL',
    [projectId, id],
  );
  return (rowCount ?? 0) > 0;
}

export interface OpenInvitation {
  id: string;
  email: string;
  role: Role;
  projectId: string;
  projectName: string;
  /** Whether the invited email already has an account (then the link asks for its password). */
  existingUser: boolean;
}

/** The invitation a token opens: unexpired and not yet accepted. */
export async function openInvitation(pool: pg.Pool, token: string): Promise<OpenInvitation | undefined> {
  const { rows } = await pool.query<{
    id: string;
    email: string;
    role: Role;
    project_id: string;
    project_name: string;
    existing: boolean;
  }>(
    `SELECT i.id, i.email, i.role, i.project_id, p.name AS project_name,
            EXISTS (SELECT 1 FROM users u WHERE u.email = i.email) AS existing
     FROM project_invitations i JOIN projects p ON p.id = i.project_id
     WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.expires_at > now()`,
    [hashToken(token)],
  );
  const r = rows[0];
  return (
    r && {
      id: r.id,
      email: r.email,
      role: r.role,
      projectId: r.project_id,
      projectName: r.project_name,
      existingUser: r.existing,
    }
  );
}

/**
 * Consumes the invitation (once: the UPDATE's row lock makes a second accept find it taken) and
 * grants its role, creating the account first for a new email (`name`, `password`, checked before
 * anything changes) or granting it to the signed-in account of that email (`userId`).
 */
export async function acceptInvitation(
  pool: pg.Pool,
  invitation: OpenInvitation,
  account: { userId: string } | { name: string; password: string },
): Promise<string> {
  if (!('userId' in account)) {
    const problem = checkPassword(account.password, invitation.email);
    if (problem) throw new InvalidAccount(problem);
  }
  const { rowCount } = await pool.query(
    'UPDATE project_invitations SET accepted_at = now() WHERE id = $1 AND accepted_at IS NULL AND expires_at > now()',
    [invitation.id],
  );
  if (rowCount === 0) throw new MemberConflict('this invitation was already used or has expired');
  let userId: string;
  try {
    userId =
      'userId' in account
        ? account.userId
        : (
            await createUser(pool, {
              email: invitation.email,
              password: account.password,
              name: account.name,
            })
          ).id;
  } catch (err) {
    // The account could not be made (the email was registered meanwhile): the link stays usable.
    await pool.query('UPDATE project_invitations SET accepted_at = NULL WHERE id = $1', [invitation.id]);
    throw err instanceof UserExists
      ? new MemberConflict('an account with this email exists: sign in first')
      : err;
  }
  // A grant never lowers a role the user already has in the project.
  await pool.query(
    `INSERT INTO project_memberships (project_id, user_id, role) VALUES ($1, $2, $3)
     ON CONFLICT (project_id, user_id) DO UPDATE SET role = CASE
       WHEN project_memberships.role = 'owner' OR EXCLUDED.role = 'owner' THEN 'owner'
       WHEN project_memberships.role = 'member' OR EXCLUDED.role = 'member' THEN 'member'
       ELSE 'viewer' END`,
    [invitation.projectId, userId, invitation.role],
  );
  return userId;
}
