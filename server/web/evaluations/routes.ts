/**
 * The reference's unstable evaluation API, evaluators (GET, POST, GET/DELETE by id) and
 * evaluation-rules (GET, POST, GET/PATCH/DELETE by id), declared once and mounted twice: under
 * `/api/public/unstable` for the project of the API key, and under `/api/ui/projects/:projectId`
 * for the evaluations page (writes for members and owners). Errors answer the reference's
 * envelope `{message, code, details?}`. Relational data, served in every write mode; observation
 * rules are run by the worker where the events tables are written.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { behaviourOf } from '../../contract/write-modes.ts';
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
import { PublicApiError } from '../../evaluation/errors.ts';
import {
  deleteEvaluator,
  deleteRule,
  findEvaluator,
  findRule,
  listEvaluators,
  listRules,
} from '../../evaluation/store.ts';
import { pageMeta } from '../../reads/datasets.ts';
import type { WebContext } from '../core/context.ts';
import { type ProjectMount, q, route } from '../core/route.ts';

const page = z.object({ page: q.int(1, 1_000_000, 1), limit: q.int(1, 100, 50) });

export function evaluationRoutes(app: FastifyInstance, ctx: WebContext, mount: ProjectMount): void {
  const legacyTargetsRun = behaviourOf(ctx.config.mode).writesLegacyTables;
  const write = mount.write ? { role: mount.write } : {};
  const notFound = (what: string, id: string) =>
    new PublicApiError('resource_not_found', `${what} ${id} not found`);

  route(
    app,
    {
      method: 'POST',
      ...write,
      url: `${mount.prefix}/evaluators`,
      tag: mount.tag,
      summary: 'Create an evaluator, or the next version of the one with this name',
      body: createEvaluatorRequest,
    },
    async ({ body, req }) => publicEvaluator(await createEvaluator(ctx.pool, mount.projectOf(req), body)),
  );

  route(
    app,
    {
      method: 'GET',
      url: `${mount.prefix}/evaluators`,
      tag: mount.tag,
      summary: 'List the latest version of each evaluator (the project’s, then the managed templates)',
      query: page,
    },
    async ({ query, req }) => {
      const all = await listEvaluators(ctx.pool, mount.projectOf(req));
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
      url: `${mount.prefix}/evaluators/:evaluatorId`,
      tag: mount.tag,
      summary: 'Get an evaluator',
      params: evaluatorId,
    },
    async ({ params, req }) => {
      const e = await findEvaluator(ctx.pool, mount.projectOf(req), params.evaluatorId);
      if (!e) throw notFound('Evaluator', params.evaluatorId);
      return publicEvaluator(e);
    },
  );

  route(
    app,
    {
      method: 'DELETE',
      ...write,
      url: `${mount.prefix}/evaluators/:evaluatorId`,
      tag: mount.tag,
      summary: 'Delete an evaluator with all its versions and rule assignments (its scores stay)',
      params: evaluatorId,
    },
    async ({ params, req }) => {
      if (!(await deleteEvaluator(ctx.pool, mount.projectOf(req), params.evaluatorId)))
        throw notFound('Evaluator', params.evaluatorId);
      return { message: 'Evaluator successfully deleted' };
    },
  );

  route(
    app,
    {
      method: 'POST',
      ...write,
      url: `${mount.prefix}/evaluation-rules`,
      tag: mount.tag,
      summary: 'Create an evaluation rule',
      body: createRuleRequest,
    },
    async ({ body, req }) => {
      const id = await createRule(ctx.pool, mount.projectOf(req), body, legacyTargetsRun);
      return publicRule(ctx.pool, (await findRule(ctx.pool, mount.projectOf(req), id))!);
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: `${mount.prefix}/evaluation-rules`,
      tag: mount.tag,
      summary: 'List evaluation rules',
      query: page,
    },
    async ({ query, req }) => {
      const { rules, total } = await listRules(
        ctx.pool,
        mount.projectOf(req),
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
      url: `${mount.prefix}/evaluation-rules/:evaluationRuleId`,
      tag: mount.tag,
      summary: 'Get an evaluation rule',
      params: ruleId,
    },
    async ({ params, req }) =>
      publicRule(ctx.pool, await loadRule(mount.projectOf(req), params.evaluationRuleId)),
  );

  route(
    app,
    {
      method: 'PATCH',
      ...write,
      url: `${mount.prefix}/evaluation-rules/:evaluationRuleId`,
      tag: mount.tag,
      summary: 'Update an evaluation rule (only the fields sent)',
      params: ruleId,
      body: updateRuleRequest,
    },
    async ({ params, body, req }) => {
      const rule = await loadRule(mount.projectOf(req), params.evaluationRuleId);
      await updateRule(ctx.pool, rule, body, legacyTargetsRun);
      return publicRule(ctx.pool, await loadRule(mount.projectOf(req), rule.id));
    },
  );

  route(
    app,
    {
      method: 'DELETE',
      ...write,
      url: `${mount.prefix}/evaluation-rules/:evaluationRuleId`,
      tag: mount.tag,
      summary: 'Delete an evaluation rule (its evaluators stay)',
      params: ruleId,
    },
    async ({ params, req }) => {
      if (!(await deleteRule(ctx.pool, mount.projectOf(req), params.evaluationRuleId)))
        throw notFound('Evaluation rule', params.evaluationRuleId);
      return { message: 'Evaluation rule successfully deleted' };
    },
  );
}
