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
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type OrganizationAccess, organizationsOf } from '../../../features/projects/user-organizations.ts';
import { isDeploymentAdmin } from '../../../features/users/deployment-admin.ts';
import { type ProjectAccess, projectsOf } from '../../../features/users/store.ts';
import { Forbidden, NotFound } from '../../../kernel/errors.ts';
import type { Role } from '../../../kernel/roles.ts';
import type { WebContext } from '../core/context.ts';

/** A deployment admin sees the whole deployment; any other owner, the projects listed. */
export interface Ownership {
  deploymentAdmin: boolean;
  projectIds: string[];
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
}

const RANK: Record<Role, number> = { viewer: 0, member: 1, owner: 2 };

export const hasRole = (role: Role, atLeast: Role): boolean => RANK[role] >= RANK[atLeast];

/**
 * Every route of `app` (inside a signed-in scope) acts on the thing named by its path parameter
 * `param`, which `find` looks up among the user's (404 when not theirs), with the route's role (403).
 */
function requireScoped<K extends 'project' | 'org'>(
  app: FastifyInstance,
  scope: { key: K; param: string; noun: string },
  find: (userId: string, id: string) => Promise<FastifyRequest[K] | undefined>,
): void {
  app.decorateRequest(scope.key, null as never);
  app.addHook('onRoute', (route) => {
    if (!route.url.includes(`/:${scope.param}`)) {
      throw new Error(`UI route ${route.url} is in the ${scope.noun} scope but names no :${scope.param}`);
    }
  });
  app.addHook('onRequest', async (req) => {
    const id = (req.params as Record<string, string | undefined>)[scope.param];
    const access = id ? await find(req.session.user.id, id) : undefined;
    if (!access) throw new NotFound(`${scope.noun} ${id} not found`);
    const need = req.routeOptions.config.role;
    if (need && !hasRole(access.role, need.atLeast)) throw new Forbidden(need.refusal);
    req[scope.key] = access;
  });
}

/** Every route of `app` (inside a signed-in scope) acts on the project of its `:projectId`. */
export const requireProject = (app: FastifyInstance, ctx: WebContext): void =>
  requireScoped(
    app,
    { key: 'project', param: 'projectId', noun: 'project' },
    async (userId, id) => (await projectsOf(ctx.pool, userId, id))[0],
  );

/** Every route of `app` (inside a signed-in scope) acts on the organization of its `:orgId`. */
export const requireOrganization = (app: FastifyInstance, ctx: WebContext): void =>
  requireScoped(
    app,
    { key: 'org', param: 'orgId', noun: 'organization' },
    async (userId, id) => (await organizationsOf(ctx.pool, userId, id))[0],
  );

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
