/**
 * The unstable evaluation API under `/api/public/unstable` for the project of the API key
 * (routes.ts), whose errors answer the reference's envelope `{message, code, details?}`.
 */
import type { FastifyPluginAsync } from 'fastify';
import { answerEnvelopes } from '../../core/error-handler.ts';
import type { PluginOptions } from '../../core/plugin-options.ts';
import { publicMount } from '../../core/project-routes.ts';
import { evaluationRoutes } from './routes.ts';

export const evaluationsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  answerEnvelopes(app);
  evaluationRoutes(app, ctx, publicMount('/api/public/unstable', 'Evaluation (unstable)'));
};
