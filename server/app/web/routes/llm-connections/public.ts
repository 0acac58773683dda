/**
 * LLM connections under `/api/public` for the project of the API key (routes.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { PluginOptions } from '../../core/plugin-options.ts';
import { publicMount } from '../../core/project-routes.ts';
import { llmConnectionRoutes } from './routes.ts';

export const llmConnectionsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  llmConnectionRoutes(app, ctx, publicMount('/api/public', 'LLM connections'));
};
