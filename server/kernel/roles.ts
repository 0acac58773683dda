/** Membership roles of organizations and projects, and what each may do. Pure. */
export const ROLES = ['owner', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const isRole = (v: unknown): v is Role =>
  typeof v === 'string' && (ROLES as readonly string[]).includes(v);

/** Project-level and organization-level grants: the project's own grant wins when both exist. */
export function effectiveRole(projectRole: Role | null, orgRole: Role | null): Role | null {
  return projectRole ?? orgRole;
}
