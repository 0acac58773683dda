/** Membership roles of organizations and projects, and what each may do. Pure. */
export const ROLES = ['owner', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const isRole = (v: unknown): v is Role =>
  typeof v === 'string' && (ROLES as readonly string[]).includes(v);

/** Scores, comments and other writes to a project's data: owners and members, not viewers. */
export const canWrite = (role: Role): boolean => role !== 'viewer';

/** Project-level and organization-level grants: the project's own grant wins when both exist. */
export function effectiveRole(projectRole: Role | null, orgRole: Role | null): Role | null {
  return projectRole ?? orgRole;
}
