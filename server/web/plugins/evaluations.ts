/**
 * The unstable evaluation API under `/api/public/unstable` for the project of the API key
 * (../evaluation-routes.ts), whose errors answer the reference's envelope `{message, code, details?}`.
 */
import type { FastifyPluginAsync } from 'fastify';
import { answerEnvelopes } from '../error-handler.ts';
import { evaluationRoutes } from '../evaluation-routes.ts';
import type { PluginOptions } from './types.ts';

export const evaluationsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  answerEnvelopes(app);
  evaluationRoutes(app, ctx, {
    prefix: '/api/public/unstable',
    tag: 'Evaluation (unstable)',
    projectOf: (req) => req.principal.projectId,
  });
};
