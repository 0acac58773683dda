/**
 * The shape every API family plugin takes: `export const <family>Plugin:
 * FastifyPluginAsync<PluginOptions<FeatureRouteContext>>` in `server/features/<feature>/routes/`,
 * registered from server/app/web/app.ts (or the UI's scopes) with `register(<family>Plugin, { ctx })`.
 */
import type { FastifyInstance } from 'fastify';
import type { RouteContext } from './context.ts';

export interface PluginOptions<Context extends RouteContext = RouteContext> {
  ctx: Context;
}

/**
 * The web UI's access scopes that a plugin opens for some of its routes, provided by the process
 * (server/app/web/ui-shell/scope.ts): each adds its hook to the Fastify scope it is given.
 */
export interface UiScopes {
  /** Deployment admins and project owners only (403 `refusal` for anyone else); sets `req.owner`. */
  owners(app: FastifyInstance, refusal: string): void;
  /** The organization of the path's `:orgId` with the route's role; sets `req.org`. */
  organization(app: FastifyInstance): void;
}

export interface UiScopedOptions<Context extends RouteContext = RouteContext> extends PluginOptions<Context> {
  scopes: UiScopes;
}
