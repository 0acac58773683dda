/**
 * Score writes and score configs: `POST /api/public/scores` (one score, or an array as Python SDK 5.x sends) and
 * `DELETE /api/public/scores/{scoreId}`; score configs: create, list, get, update. Served in every write
 * mode: scores keep being written in events_only, and configs are relational data.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { BadRequest } from '../../errors.ts';
import { describeIssues } from '../../ingestion/schemas.ts';
import { pageMeta } from '../../reads/datasets.ts';
import { deleteApiScore, writeApiScores } from '../../scores/api-scores.ts';
import { createConfig, findConfig, listConfigs, updateConfig } from '../../scores/config-store.ts';
import { applyConfigUpdate, createConfigRequest, updateConfigRequest } from '../../scores/configs.ts';
import { found } from '../core/answers.ts';
import { attributionOf } from '../core/context.ts';
import type { PluginOptions } from '../core/plugin-options.ts';
import { pageMetaResponse } from '../core/project-routes.ts';
import { q, route } from '../core/route.ts';

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

export const scoreWritesPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  route(
    app,
    {
      method: 'POST',
      url: '/api/public/scores',
      tag: 'Scores',
      summary:
        'Create one score (200 {id}) or an array of scores (202 when all are accepted, 207 {accepted, rejected, errors} otherwise)',
      body: z.union([z.array(z.unknown()).min(1), z.record(z.string(), z.unknown())]),
    },
    async ({ body, req, reply }) => {
      const items = Array.isArray(body) ? body : [body];
      const { projectId } = req.principal;
      const result = await writeApiScores(items, {
        projectId,
        attribution: attributionOf(req),
        store: ctx.store,
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

  route(
    app,
    {
      method: 'DELETE',
      url: '/api/public/scores/:scoreId',
      tag: 'Scores',
      summary: 'Delete a score',
      params: z.object({ scoreId: z.string().min(1) }),
    },
    async ({ params, req, reply }) => {
      found(
        await deleteApiScore(ctx.store, req.principal.projectId, params.scoreId),
        'Score',
        params.scoreId,
      );
      // The reference answers 202: the deletion is applied to the analytics store asynchronously.
      return reply.code(202).send({ message: 'Score deleted' });
    },
  );

  route(
    app,
    {
      method: 'POST',
      url: '/api/public/score-configs',
      tag: 'Score configs',
      summary: 'Create a score config',
      body: createConfigRequest,
      response: scoreConfig,
    },
    async ({ body, req }) => createConfig(ctx.pool, req.principal.projectId, body),
  );

  route(
    app,
    {
      method: 'GET',
      url: '/api/public/score-configs',
      tag: 'Score configs',
      summary: 'List score configs, newest first',
      query: z.object(q.page(1000, 50)),
      response: z.object({ data: z.array(scoreConfig), meta: pageMetaResponse }),
    },
    async ({ query, req }) => {
      const { configs, total } = await listConfigs(
        ctx.pool,
        req.principal.projectId,
        query.limit,
        (query.page - 1) * query.limit,
      );
      return {
        data: configs,
        meta: pageMeta(query.page, query.limit, total),
      };
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: '/api/public/score-configs/:configId',
      tag: 'Score configs',
      summary: 'Get a score config',
      params: z.object({ configId: z.string().min(1) }),
      response: scoreConfig,
    },
    async ({ params, req }) => {
      return found(
        await findConfig(ctx.pool, req.principal.projectId, params.configId),
        'Score config',
        params.configId,
      );
    },
  );

  route(
    app,
    {
      method: 'PATCH',
      url: '/api/public/score-configs/:configId',
      tag: 'Score configs',
      summary: 'Update a score config (archive it, rename it, change its range, categories or description)',
      params: z.object({ configId: z.string().min(1) }),
      body: updateConfigRequest,
      response: scoreConfig,
    },
    async ({ params, body, req }) => {
      const current = found(
        await findConfig(ctx.pool, req.principal.projectId, params.configId),
        'Score config',
        params.configId,
      );
      const next = applyConfigUpdate(current, body);
      if ('issues' in next) throw new BadRequest('Invalid request data', describeIssues(next.issues));
      return found(await updateConfig(ctx.pool, next.config), 'Score config', params.configId);
    },
  );
};
