/**
 * Creating a user with one membership, as `observatory create-user` and `observatory dev` do:
 * a password is generated when none is given (shown once, stored only as its hash).
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { Role } from '../../kernel/roles.ts';
import { createUser, grantOrganization, grantProject, type User } from './store.ts';

export interface NewUser {
  email: string;
  name?: string | undefined;
  password?: string | undefined;
  role: Role;
  /** A project membership; otherwise one in `orgId`. */
  projectId?: string | undefined;
  orgId?: string | undefined;
}

export const generatePassword = (): string => randomBytes(18).toString('base64url');

export async function provisionUser(pool: pg.Pool, u: NewUser): Promise<{ user: User; password: string }> {
  const password = u.password ?? generatePassword();
  const user = await createUser(pool, { email: u.email, password, name: u.name });
  if (u.projectId) await grantProject(pool, user.id, u.projectId, u.role);
  else await grantOrganization(pool, user.id, u.orgId ?? 'default', u.role);
  return { user, password };
}
