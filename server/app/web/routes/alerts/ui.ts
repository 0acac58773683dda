/**
 * The alerts page's routes in the UI's project scope: the public API's alert routes
 * (routes.ts) under `/api/ui/projects/:projectId`, writes for members and owners.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { PluginOptions } from '../../core/plugin-options.ts';
import { uiMount } from '../../core/project-routes.ts';
import { alertRoutes } from './routes.ts';

export const uiAlertsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  alertRoutes(app, ctx, uiMount({ atLeast: 'member', refusal: 'viewers cannot change alerts' }));
};
