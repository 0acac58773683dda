/**
 * The alerts page's routes in the UI's project scope: the public API's alert routes
 * (family.ts) under `/api/ui/projects/:projectId`, writes for members and owners.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { uiMount } from '../../../platform/http/project-routes.ts';
import { alertRoutes } from './family.ts';

export const uiAlertsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  alertRoutes(app, ctx, uiMount({ atLeast: 'member', refusal: 'viewers cannot change alerts' }));
};
