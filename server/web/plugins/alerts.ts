/**
 * Alerts under `/api/public/unstable` for the project of the API key (../alert-routes.ts), whose
 * errors answer the unstable API's envelope `{message, code}`. Relational data, served in every
 * write mode; the worker evaluates rules where the events tables are written.
 */
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import { HttpError } from '../../errors.ts';
import { envelopeOf } from '../../evaluation/errors.ts';
import { alertRoutes } from '../alert-routes.ts';
import { handleError } from '../error-handler.ts';
import type { PluginOptions } from './types.ts';

export const alertsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  app.setErrorHandler((err, req, reply) =>
    err instanceof HttpError
      ? reply.code(err.statusCode).send(envelopeOf(err))
      : handleError(err as FastifyError, req, reply),
  );
  alertRoutes(app, ctx, {
    prefix: '/api/public/unstable',
    tag: 'Alerts (unstable)',
    projectOf: (req) => req.principal.projectId,
  });
};
