/**
 * The scopes of the web UI's JSON routes (`/api/ui`). Each scope states once, in a hook, who may
 * reach every route registered inside it, so a route cannot forget its authorization:
 * - signed in: a session (and its CSRF token on state changes), `requireUiSession`;
 * - project: the `:projectId` of the path is one of the user's projects (404 otherwise, as a project
 *   that does not exist) and the user's role there is at least the route's `role` (403); a route
 *   registered in this scope without `:projectId` in its path fails at start;
 * - organization: the `:orgId` of the path is one of the user's organizations (404 otherwise) and
 *   the user's role there is at least the route's `role` (403);
 * - owners: the user is a deployment admin (../../users/deployment-admin.ts) or owns at least one
 *   project (403 otherwise); `req.owner` says which, and so what the route may show.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { Forbidden, NotFound } from '../../errors.ts';
import { type OrganizationAccess, organizationsOf } from '../../projects/user-organizations.ts';
import { isDeploymentAdmin } from '../../users/deployment-admin.ts';
import type { Role } from '../../users/roles.ts';
import { type ProjectAccess, projectsOf } from '../../users/store.ts';
import type { WebContext } from '../core/context.ts';

/** A deployment admin sees the whole deployment; any other owner, the projects listed. */
export interface Ownership {
  deploymentAdmin: boolean;
  projectIds: string[];
}

/** The least role a project route needs, and what a user below it is told. */
export interface RoleNeed {
  atLeast: Role;
  refusal: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The project of the path and the user's role in it, on routes of a project scope. */
    project: ProjectAccess;
    /** The organization of the path and the user's role in it, on routes of an organization scope. */
    org: OrganizationAccess;
    /** What an owner scope's user may see. */
    owner: Ownership;
  }
  interface FastifyContextConfig {
    role?: RoleNeed;
  }
}

const RANK: Record<Role, number> = { viewer: 0, member: 1, owner: 2 };

export const hasRole = (role: Role, atLeast: Role): boolean => RANK[role] >= RANK[atLeast];

/** Every route of `app` (inside a signed-in scope) acts on the project of its `:projectId`. */
export function requireProject(app: FastifyInstance, ctx: WebContext): void {
  app.decorateRequest('project', null as never);
  app.addHook('onRoute', (route) => {
    if (!route.url.includes('/:projectId')) {
      throw new Error(`UI route ${route.url} is in the project scope but names no :projectId`);
    }
  });
  app.addHook('onRequest', async (req) => {
    const { projectId } = req.params as { projectId?: string };
    const [access] = projectId ? await projectsOf(ctx.pool, req.session.user.id, projectId) : [];
    if (!access) throw new NotFound(`project ${projectId} not found`);
    const need = req.routeOptions.config.role;
    if (need && !hasRole(access.role, need.atLeast)) throw new Forbidden(need.refusal);
    req.project = access;
  });
}

/** Every route of `app` (inside a signed-in scope) acts on the organization of its `:orgId`. */
export function requireOrganization(app: FastifyInstance, ctx: WebContext): void {
  app.decorateRequest('org', null as never);
  app.addHook('onRoute', (route) => {
    if (!route.url.includes('/:orgId')) {
      throw new Error(`UI route ${route.url} is in the organization scope but names no :orgId`);
    }
  });
  app.addHook('onRequest', async (req) => {
    const { orgId } = req.params as { orgId?: string };
    const [access] = orgId ? await organizationsOf(ctx.pool, req.session.user.id, orgId) : [];
    if (!access) throw new NotFound(`organization ${orgId} not found`);
    const need = req.routeOptions.config.role;
    if (need && !hasRole(access.role, need.atLeast)) throw new Forbidden(need.refusal);
    req.org = access;
  });
}

/** Every route of `app` (inside a signed-in scope) is for deployment admins and project owners. */
export function requireOwner(app: FastifyInstance, ctx: WebContext, refusal: string): void {
  app.decorateRequest('owner', null as never);
  app.addHook('onRequest', async (req) => {
    const userId = req.session.user.id;
    const [deploymentAdmin, projects] = await Promise.all([
      isDeploymentAdmin(ctx.pool, userId),
      projectsOf(ctx.pool, userId),
    ]);
    const projectIds = projects.filter((p) => p.role === 'owner').map((p) => p.id);
    if (!deploymentAdmin && projectIds.length === 0) throw new Forbidden(refusal);
    req.owner = { deploymentAdmin, projectIds };
  });
}

/** The path parameters of a project route. */
export const projectParams = z.object({ projectId: z.string().min(1) });
