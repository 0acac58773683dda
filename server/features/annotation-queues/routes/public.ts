/**
 * Annotation queues under `/api/public` for the project of the API key (family.ts),
 * as the reference's public API and its SDKs' `annotationQueues` client call them.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { publicMount } from '../../../platform/http/project-routes.ts';
import { annotationQueueRoutes } from './family.ts';

export const annotationQueuesPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  annotationQueueRoutes(app, ctx, publicMount('/api/public', 'Annotation queues'));
};
