/**
 * Alerts under `/api/public/unstable` for the project of the API key (routes.ts), whose
 * errors answer the unstable API's envelope `{message, code}`. Relational data, served in every
 * write mode; the worker evaluates rules where the events tables are written.
 */
import type { FastifyPluginAsync } from 'fastify';
import { answerEnvelopes } from '../../core/error-handler.ts';
import type { PluginOptions } from '../../core/plugin-options.ts';
import { publicMount } from '../../core/project-routes.ts';
import { alertRoutes } from './routes.ts';

export const alertsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  answerEnvelopes(app);
  alertRoutes(app, ctx, publicMount('/api/public/unstable', 'Alerts (unstable)'));
};
