/**
 * Dashboards and dashboard widgets (`/api/public/unstable/dashboards`, `/dashboard-widgets`), the
 * reference's unstable API (routes.ts), whose errors answer the reference's unstable
 * envelope `{message, code}`. Relational data, served in every write mode.
 */
import type { FastifyPluginAsync } from 'fastify';
import { answerEnvelopes } from '../../core/error-handler.ts';
import type { PluginOptions } from '../../core/plugin-options.ts';
import { publicMount } from '../../core/project-routes.ts';
import { dashboardRoutes } from './routes.ts';

export const dashboardsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  answerEnvelopes(app);
  dashboardRoutes(app, ctx, publicMount('/api/public/unstable', 'Dashboards (unstable)'));
};
