/**
 * Annotation queues under `/api/public` for the project of the API key (routes.ts),
 * as the reference's public API and its SDKs' `annotationQueues` client call them.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { PluginOptions } from '../../core/plugin-options.ts';
import { publicMount } from '../../core/project-routes.ts';
import { annotationQueueRoutes } from './routes.ts';

export const annotationQueuesPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  annotationQueueRoutes(app, ctx, publicMount('/api/public', 'Annotation queues'));
};
