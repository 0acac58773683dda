/**
 * Alerts under `/api/public/unstable` for the project of the API key (family.ts), whose
 * errors answer the unstable API's envelope `{message, code}`. Relational data, served in every
 * write mode; the worker evaluates rules where the events tables are written.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { publicMount } from '../../../platform/http/project-routes.ts';
import { alertRoutes } from './family.ts';

export const alertsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  alertRoutes(app, ctx, publicMount('/api/public/unstable', 'Alerts (unstable)'));
};
