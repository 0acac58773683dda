/**
 * LLM connections under `/api/public` for the project of the API key (family.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { publicMount } from '../../../platform/http/project-routes.ts';
import { llmConnectionRoutes } from './family.ts';

export const llmConnectionsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  llmConnectionRoutes(app, ctx, publicMount('/api/public', 'LLM connections'));
};
