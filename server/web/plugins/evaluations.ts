/**
 * The reference's unstable evaluation API: `/api/public/unstable/evaluators` (GET, POST, GET/DELETE
 * by id) and `/api/public/unstable/evaluation-rules` (GET, POST, GET/PATCH/DELETE by id). Errors
 * answer the reference's envelope `{message, code, details?}`. Relational data, served in every
 * write mode; observation rules are run by the worker where the events tables are written.
 */
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { behaviourOf } from '../../contract/write-modes.ts';
import { HttpError } from '../../errors.ts';
import {
  createEvaluator,
  createEvaluatorRequest,
  createRule,
  createRuleRequest,
  publicEvaluator,
  publicRule,
  updateRule,
  updateRuleRequest,
} from '../../evaluation/api.ts';
import { envelopeOf, PublicApiError } from '../../evaluation/errors.ts';
import {
  deleteEvaluator,
  deleteRule,
  findEvaluator,
  findRule,
  listEvaluators,
  listRules,
} from '../../evaluation/store.ts';
import { pageMeta } from '../../reads/datasets.ts';
import { handleError } from '../error-handler.ts';
import { q, route } from '../route.ts';
import type { PluginOptions } from './types.ts';

const page = z.object({ page: q.int(1, 1_000_000, 1), limit: q.int(1, 100, 50) });
const TAG = 'Evaluation (unstable)';

export const evaluationsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  const legacyTargetsRun = behaviourOf(ctx.config.mode).writesLegacyTables;
  app.setErrorHandler((err, req, reply) =>
    err instanceof HttpError
      ? reply.code(err.statusCode).send(envelopeOf(err))
      : handleError(err as FastifyError, req, reply),
  );
  const notFound = (what: string, id: string) =>
    new PublicApiError('resource_not_found', `${what} ${id} not found`);

  route(
    app,
    {
      method: 'POST',
      url: '/api/public/unstable/evaluators',
      tag: TAG,
      summary: 'Create an evaluator, or the next version of the one with this name',
      body: createEvaluatorRequest,
    },
    async ({ body, req }) => publicEvaluator(await createEvaluator(ctx.pool, req.principal.projectId, body)),
  );

  route(
    app,
    {
      method: 'GET',
      url: '/api/public/unstable/evaluators',
      tag: TAG,
      summary: 'List the latest version of each evaluator (the project’s, then the managed templates)',
      query: page,
    },
    async ({ query, req }) => {
      const all = await listEvaluators(ctx.pool, req.principal.projectId);
      const start = (query.page - 1) * query.limit;
      return {
        data: all.slice(start, start + query.limit).map(publicEvaluator),
        meta: pageMeta(query.page, query.limit, all.length),
      };
    },
  );

  const evaluatorId = z.object({ evaluatorId: z.string().min(1) });
  route(
    app,
    {
      method: 'GET',
      url: '/api/public/unstable/evaluators/:evaluatorId',
      tag: TAG,
      summary: 'Get an evaluator',
      params: evaluatorId,
    },
    async ({ params, req }) => {
      const e = await findEvaluator(ctx.pool, req.principal.projectId, params.evaluatorId);
      if (!e) throw notFound('Evaluator', params.evaluatorId);
      return publicEvaluator(e);
    },
  );

  route(
    app,
    {
      method: 'DELETE',
      url: '/api/public/unstable/evaluators/:evaluatorId',
      tag: TAG,
      summary: 'Delete an evaluator with all its versions and rule assignments (its scores stay)',
      params: evaluatorId,
    },
    async ({ params, req }) => {
      if (!(await deleteEvaluator(ctx.pool, req.principal.projectId, params.evaluatorId)))
        throw notFound('Evaluator', params.evaluatorId);
      return { message: 'Evaluator successfully deleted' };
    },
  );

  route(
    app,
    {
      method: 'POST',
      url: '/api/public/unstable/evaluation-rules',
      tag: TAG,
      summary: 'Create an evaluation rule',
      body: createRuleRequest,
    },
    async ({ body, req }) => {
      const id = await createRule(ctx.pool, req.principal.projectId, body, legacyTargetsRun);
      return publicRule(ctx.pool, (await findRule(ctx.pool, req.principal.projectId, id))!);
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: '/api/public/unstable/evaluation-rules',
      tag: TAG,
      summary: 'List evaluation rules',
      query: page,
    },
    async ({ query, req }) => {
      const { rules, total } = await listRules(
        ctx.pool,
        req.principal.projectId,
        query.limit,
        (query.page - 1) * query.limit,
      );
      return {
        data: await Promise.all(rules.map((r) => publicRule(ctx.pool, r))),
        meta: pageMeta(query.page, query.limit, total),
      };
    },
  );

  const ruleId = z.object({ evaluationRuleId: z.string().min(1) });
  const loadRule = async (projectId: string, id: string) => {
    const rule = await findRule(ctx.pool, projectId, id);
    if (!rule) throw notFound('Evaluation rule', id);
    return rule;
  };
  route(
    app,
    {
      method: 'GET',
      url: '/api/public/unstable/evaluation-rules/:evaluationRuleId',
      tag: TAG,
      summary: 'Get an evaluation rule',
      params: ruleId,
    },
    async ({ params, req }) =>
      publicRule(ctx.pool, await loadRule(req.principal.projectId, params.evaluationRuleId)),
  );

  route(
    app,
    {
      method: 'PATCH',
      url: '/api/public/unstable/evaluation-rules/:evaluationRuleId',
      tag: TAG,
      summary: 'Update an evaluation rule (only the fields sent)',
      params: ruleId,
      body: updateRuleRequest,
    },
    async ({ params, body, req }) => {
      const rule = await loadRule(req.principal.projectId, params.evaluationRuleId);
      await updateRule(ctx.pool, rule, body, legacyTargetsRun);
      return publicRule(ctx.pool, await loadRule(req.principal.projectId, rule.id));
    },
  );

  route(
    app,
    {
      method: 'DELETE',
      url: '/api/public/unstable/evaluation-rules/:evaluationRuleId',
      tag: TAG,
      summary: 'Delete an evaluation rule (its evaluators stay)',
      params: ruleId,
    },
    async ({ params, req }) => {
      if (!(await deleteRule(ctx.pool, req.principal.projectId, params.evaluationRuleId)))
        throw notFound('Evaluation rule', params.evaluationRuleId);
      return { message: 'Evaluation rule successfully deleted' };
    },
  );
};
