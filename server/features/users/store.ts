/**
 * Users, their memberships and their sessions in PostgreSQL. A session's cookie token is 256
 * random bits stored only as its SHA-256 (a database read does not yield a usable cookie); its
 * CSRF token is bound to the session row.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { effectiveRole, isRole, type Role } from '../../kernel/roles.ts';
import { passwordProblem } from './password-policy.ts';
import { hashPassword } from './passwords.ts';

export interface User {
  id: string;
  email: string;
  name: string | null;
}

export class UserExists extends Error {
  override name = 'UserExists';
}

/** Emails compare case-insensitively: stored trimmed and lower-cased. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

export function checkEmail(email: string): string | undefined {
  return /^[^\s@]+@[^\s@]+$/.test(normalizeEmail(email)) ? undefined : 'email: not an email address';
}

/** The policy's problem with a user's new password (password-policy.ts), the email as context. */
export const checkPassword = (password: string, email?: string, field = 'password'): string | undefined =>
  passwordProblem(password, field, email === undefined ? [] : [normalizeEmail(email)]);

export async function createUser(
  pool: pg.Pool,
  u: { email: string; password: string; name?: string | undefined },
): Promise<User> {
  const problem = checkEmail(u.email) ?? checkPassword(u.password, u.email);
  if (problem) throw new Error(problem);
  const user: User = { id: randomUUID(), email: normalizeEmail(u.email), name: u.name ?? null };
  const r = await pool.query(
    `INSERT INTO users (id, email, name, password_hash) VALUES ($1, $2, $3, $4)
     ON CONFLICT (email) DO NOTHING`,
    [user.id, user.email, user.name, await hashPassword(u.password)],
  );
  if (r.rowCount === 0) throw new UserExists(`a user with email ${user.email} exists`);
  return user;
}

/**
 * Sets a user's password and ends every session of the user in one statement, so a session
 * taken by someone who knew the old password does not outlive the change.
 */
export async function setPassword(pool: pg.Pool, email: string, password: string): Promise<boolean> {
  const problem = checkPassword(password, email);
  if (problem) throw new Error(problem);
  // One statement: the new hash and the end of the sessions commit together.
  const r = await pool.query<{ n: number }>(
    `WITH u AS (UPDATE users SET password_hash = $2, updated_at = now() WHERE email = $1 RETURNING id),
          gone AS (DELETE FROM user_sessions WHERE user_id IN (SELECT id FROM u))
     SELECT count(*)::int AS n FROM u`,
    [normalizeEmail(email), await hashPassword(password)],
  );
  return r.rows[0]?.n === 1;
}

export async function grantOrganization(pool: pg.Pool, userId: string, orgId: string, role: Role) {
  await pool.query(
    `INSERT INTO organization_memberships (org_id, user_id, role) VALUES ($1, $2, $3)
     ON CONFLICT (org_id, user_id) DO UPDATE SET role = EXCLUDED.role`,
    [orgId, userId, role],
  );
}

export async function grantProject(pool: pg.Pool, userId: string, projectId: string, role: Role) {
  await pool.query(
    `INSERT INTO project_memberships (project_id, user_id, role) VALUES ($1, $2, $3)
     ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role`,
    [projectId, userId, role],
  );
}

export async function userByEmail(pool: pg.Pool, email: string) {
  const r = await pool.query<User & { password_hash: string; v4_preview: boolean }>(
    'SELECT id, email, name, password_hash, v4_preview FROM users WHERE email = $1',
    [normalizeEmail(email)],
  );
  return r.rows[0];
}

export interface ProjectAccess {
  id: string;
  name: string;
  organization: { id: string; name: string };
  role: Role;
  /** Days the project keeps its data; null: forever. */
  retentionDays: number | null;
}

/** Projects the user belongs to, directly or through its organization; `projectId` narrows to one. */
export async function projectsOf(
  pool: pg.Pool,
  userId: string,
  projectId?: string,
): Promise<ProjectAccess[]> {
  const r = await pool.query<{
    id: string;
    name: string;
    org_id: string;
    org_name: string;
    project_role: string | null;
    org_role: string | null;
    retention_days: number | null;
  }>(
    `SELECT p.id, p.name, p.retention_days, o.id AS org_id, o.name AS org_name, pm.role AS project_role, om.role AS org_role
       FROM projects p
       JOIN organizations o ON o.id = p.org_id
       LEFT JOIN project_memberships pm ON pm.project_id = p.id AND pm.user_id = $1
       LEFT JOIN organization_memberships om ON om.org_id = p.org_id AND om.user_id = $1
      WHERE (pm.user_id IS NOT NULL OR om.user_id IS NOT NULL) AND ($2::text IS NULL OR p.id = $2)
        AND p.deleted_at IS NULL
      ORDER BY o.name, p.name, p.id`,
    [userId, projectId ?? null],
  );
  return r.rows.flatMap((row) => {
    const role = effectiveRole(
      isRole(row.project_role) ? row.project_role : null,
      isRole(row.org_role) ? row.org_role : null,
    );
    return role
      ? [
          {
            id: row.id,
            name: row.name,
            organization: { id: row.org_id, name: row.org_name },
            role,
            retentionDays: row.retention_days || null,
          },
        ]
      : [];
  });
}

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

export interface NewSession {
  token: string;
  csrfToken: string;
  expiresAt: Date;
}

/** Where a session was opened from, as the client said (shown to the user in their sessions list). */
export interface SessionClient {
  userAgent?: string | undefined;
  ip?: string | undefined;
}

export async function createSession(
  pool: pg.Pool,
  userId: string,
  ttlMs: number,
  client: SessionClient = {},
): Promise<NewSession> {
  const token = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + ttlMs);
  // Expired sessions of this user go as a new one starts, so the table does not grow without bound.
  await pool.query('DELETE FROM user_sessions WHERE user_id = $1 AND expires_at < now()', [userId]);
  await pool.query(
    `INSERT INTO user_sessions (token_hash, user_id, csrf_token, expires_at, user_agent, ip)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [
      tokenHash(token),
      userId,
      csrfToken,
      expiresAt,
      client.userAgent?.slice(0, 500) ?? null,
      client.ip ?? null,
    ],
  );
  return { token, csrfToken, expiresAt };
}

export interface Session {
  /** The session's own id (not its token's hash), as the user's sessions list shows it. */
  id: string;
  user: User;
  csrfToken: string;
  /** The user turned on the version 4 preview (read-path.ts decides whether it applies). */
  v4Preview: boolean;
}

export async function sessionOf(pool: pg.Pool, token: string): Promise<Session | undefined> {
  // "Last seen" moves at most once a minute, so a busy page does not write on every request.
  const r = await pool.query<User & { session_id: string; csrf_token: string; v4_preview: boolean }>(
    `WITH s AS (
       UPDATE user_sessions SET last_seen_at = now()
        WHERE token_hash = $1 AND expires_at > now() AND last_seen_at < now() - interval '1 minute'
     )
     SELECT u.id, u.email, u.name, u.v4_preview, s.id AS session_id, s.csrf_token
       FROM user_sessions s JOIN users u ON u.id = s.user_id
      WHERE s.token_hash = $1 AND s.expires_at > now()`,
    [tokenHash(token)],
  );
  const row = r.rows[0];
  return row
    ? {
        id: row.session_id,
        user: { id: row.id, email: row.email, name: row.name },
        csrfToken: row.csrf_token,
        v4Preview: row.v4_preview,
      }
    : undefined;
}

export async function setV4Preview(pool: pg.Pool, userId: string, enabled: boolean): Promise<void> {
  await pool.query('UPDATE users SET v4_preview = $2, updated_at = now() WHERE id = $1', [userId, enabled]);
}

export async function deleteSession(pool: pg.Pool, token: string): Promise<void> {
  await pool.query('DELETE FROM user_sessions WHERE token_hash = $1', [tokenHash(token)]);
}
