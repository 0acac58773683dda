/**
 * The unstable evaluation API under `/api/public/unstable` for the project of the API key
 * (../evaluation-routes.ts), whose errors answer the reference's envelope `{message, code, details?}`.
 */
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import { HttpError } from '../../errors.ts';
import { envelopeOf } from '../../evaluation/errors.ts';
import { handleError } from '../error-handler.ts';
import { evaluationRoutes } from '../evaluation-routes.ts';
import type { PluginOptions } from './types.ts';

export const evaluationsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  app.setErrorHandler((err, req, reply) =>
    err instanceof HttpError
      ? reply.code(err.statusCode).send(envelopeOf(err))
      : handleError(err as FastifyError, req, reply),
  );
  evaluationRoutes(app, ctx, {
    prefix: '/api/public/unstable',
    tag: 'Evaluation (unstable)',
    projectOf: (req) => req.principal.projectId,
  });
};
