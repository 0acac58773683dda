/**
 * Score writes and score configs: `POST /api/public/scores` (one score, or an array as Python SDK 5.x sends) and
 * `DELETE /api/public/scores/{scoreId}`; score configs: create, list, get, update. Served in every write
 * mode: scores keep being written in events_only, and configs are relational data.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { BadRequest } from '../../../kernel/errors.ts';
import { found } from '../../../platform/http/answers.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { pageResponse, projectRoutes, publicMount } from '../../../platform/http/project-routes.ts';
import { q } from '../../../platform/http/route.ts';
import { acceptDepsOf, attributionOf, type IngestionRouteContext } from '../../ingestion/routes/context.ts';
import { describeIssues } from '../../write-model/bodies.ts';
import { deleteApiScore, writeApiScores } from '../api-scores.ts';
import { createConfig, findConfig, listConfigs, updateConfig } from '../config-store.ts';
import { applyConfigUpdate, createConfigRequest, updateConfigRequest } from '../configs.ts';

const scoreConfig = z.object({
  id: z.string(),
  projectId: z.string(),
  name: z.string(),
  dataType: z.enum(['NUMERIC', 'CATEGORICAL', 'BOOLEAN']),
  isArchived: z.boolean(),
  minValue: z.number().nullable(),
  maxValue: z.number().nullable(),
  categories: z.array(z.object({ value: z.number(), label: z.string() })).nullable(),
  description: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const scoreWritesPlugin: FastifyPluginAsync<PluginOptions<IngestionRouteContext>> = async (
  app,
  { ctx },
) => {
  const scores = projectRoutes(app, publicMount('/api/public', 'Scores'));
  const configs = projectRoutes(app, publicMount('/api/public', 'Score configs'));
  scores(
    {
      method: 'POST',
      path: '/scores',
      summary:
        'Create one score (200 {id}) or an array of scores (202 when all are accepted, 207 {accepted, rejected, errors} otherwise)',
      body: z.union([z.array(z.unknown()).min(1), z.record(z.string(), z.unknown())]),
    },
    async ({ body, req, reply, projectId }) => {
      const items = Array.isArray(body) ? body : [body];
      const result = await writeApiScores(items, {
        projectId,
        attribution: attributionOf(req),
        ...acceptDepsOf(ctx),
        findConfig: (id) => findConfig(ctx.pool, projectId, id),
      });
      if (!Array.isArray(body)) {
        const error = result.errors[0];
        if (error) throw new BadRequest(error.message);
        return { id: result.ids[0] };
      }
      if (result.errors.length === 0) return reply.code(202).send({ message: 'Accepted' });
      return reply.code(207).send({
        accepted: result.ids.length,
        rejected: result.errors.length,
        errors: result.errors.map((e) => ({ index: e.index, message: e.message })),
      });
    },
  );

  scores(
    {
      method: 'DELETE',
      path: '/scores/:scoreId',
      summary: 'Delete a score',
    },
    async ({ params, reply, projectId }) => {
      found(await deleteApiScore(ctx.store, projectId, params.scoreId), 'Score', params.scoreId);
      // The reference answers 202: the deletion is applied to the analytics store asynchronously.
      return reply.code(202).send({ message: 'Score deleted' });
    },
  );

  configs(
    {
      method: 'POST',
      path: '/score-configs',
      summary: 'Create a score config',
      body: createConfigRequest,
      response: scoreConfig,
    },
    async ({ body, projectId }) => createConfig(ctx.pool, projectId, body),
  );

  configs.listing(
    {
      path: '/score-configs',
      summary: 'List score configs, newest first',
      query: z.object(q.page(1000, 50)),
      response: pageResponse(scoreConfig),
    },
    ({ projectId }, limit, offset) => listConfigs(ctx.pool, projectId, limit, offset),
  );

  configs.lookup(
    { path: '/score-configs/:configId', summary: 'Get a score config', response: scoreConfig },
    'Score config',
    ({ params, projectId }) => findConfig(ctx.pool, projectId, params.configId),
  );

  configs(
    {
      method: 'PATCH',
      path: '/score-configs/:configId',
      summary: 'Update a score config (archive it, rename it, change its range, categories or description)',
      body: updateConfigRequest,
      response: scoreConfig,
    },
    async ({ params, body, projectId }) => {
      const current = found(
        await findConfig(ctx.pool, projectId, params.configId),
        'Score config',
        params.configId,
      );
      const next = applyConfigUpdate(current, body);
      if ('issues' in next) throw new BadRequest('Invalid request data', describeIssues(next.issues));
      return found(await updateConfig(ctx.pool, next.config), 'Score config', params.configId);
    },
  );
};
