/**
 * LLM connections under `/api/public` for the project of the API key (../llm-connection-routes.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import { llmConnectionRoutes } from '../llm-connection-routes.ts';
import type { PluginOptions } from './types.ts';

export const llmConnectionsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  llmConnectionRoutes(app, ctx, {
    prefix: '/api/public',
    tag: 'LLM connections',
    projectOf: (req) => req.principal.projectId,
  });
};
