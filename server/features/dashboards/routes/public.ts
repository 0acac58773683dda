/**
 * Dashboards and dashboard widgets (`/api/public/unstable/dashboards`, `/dashboard-widgets`), the
 * reference's unstable API (family.ts), whose errors answer the reference's unstable
 * envelope `{message, code}`. Relational data, served in every write mode.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { publicMount } from '../../../platform/http/project-routes.ts';
import { dashboardRoutes } from './family.ts';

export const dashboardsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  dashboardRoutes(app, ctx, publicMount('/api/public/unstable', 'Dashboards (unstable)'));
};
