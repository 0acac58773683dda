/**
 * The unstable evaluation API under `/api/public/unstable` for the project of the API key
 * (family.ts), whose errors answer the reference's envelope `{message, code, details?}`.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { publicMount } from '../../../platform/http/project-routes.ts';
import { evaluationRoutes } from './family.ts';

export const evaluationsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  evaluationRoutes(app, ctx, publicMount('/api/public/unstable', 'Evaluation (unstable)'));
};
