/**
 * Annotation queues under `/api/public` for the project of the API key (../annotation-queue-routes.ts),
 * as the reference's public API and its SDKs' `annotationQueues` client call them.
 */
import type { FastifyPluginAsync } from 'fastify';
import { annotationQueueRoutes } from '../annotation-queue-routes.ts';
import type { PluginOptions } from './types.ts';

export const annotationQueuesPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  annotationQueueRoutes(app, ctx, {
    prefix: '/api/public',
    tag: 'Annotation queues',
    projectOf: (req) => req.principal.projectId,
    actorOf: (req) => ({ publicKey: req.principal.publicKey }),
  });
};
