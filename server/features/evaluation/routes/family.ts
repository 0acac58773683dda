/**
 * The reference's unstable evaluation API, evaluators (GET, POST, GET/DELETE by id) and
 * evaluation-rules (GET, POST, GET/PATCH/DELETE by id), declared once and mounted twice: under
 * `/api/public/unstable` for the project of the API key, and under `/api/ui/projects/:projectId`
 * for the evaluations page (writes for members and owners). Errors answer the reference's
 * envelope `{message, code, details?}`. Relational data, served in every write mode; observation
 * rules are run by the worker where the events tables are written.
 */
import type { FastifyInstance } from 'fastify';
import { behaviourOf } from '../../../contract/write-modes.ts';
import { found } from '../../../platform/http/answers.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import { type ProjectMount, projectRoutes } from '../../../platform/http/project-routes.ts';
import {
  createEvaluator,
  createEvaluatorRequest,
  createRule,
  createRuleRequest,
  publicEvaluator,
  publicRule,
  updateRule,
  updateRuleRequest,
} from '../api.ts';
import { deleteEvaluator, deleteRule, findEvaluator, findRule, listEvaluators, listRules } from '../store.ts';

/** An evaluation rule of the project, or its 404. */
export const ruleOf = async (ctx: RouteContext, projectId: string, id: string) =>
  found(await findRule(ctx.pool, projectId, id), 'Evaluation rule', id);

export function evaluationRoutes(app: FastifyInstance, ctx: RouteContext, mount: ProjectMount): void {
  const declare = projectRoutes(app, mount);
  const legacyTargetsRun = behaviourOf(ctx.config.mode).writesLegacyTables;

  declare(
    {
      method: 'POST',
      path: '/evaluators',
      summary: 'Create an evaluator, or the next version of the one with this name',
      body: createEvaluatorRequest,
    },
    async ({ body, projectId }) => publicEvaluator(await createEvaluator(ctx.pool, projectId, body)),
  );

  declare.listing(
    {
      path: '/evaluators',
      summary: 'List the latest version of each evaluator (the project’s, then the managed templates)',
    },
    async ({ projectId }, limit, offset) => {
      const all = await listEvaluators(ctx.pool, projectId);
      return { items: all.slice(offset, offset + limit), total: all.length };
    },
    publicEvaluator,
  );

  declare.lookup(
    { path: '/evaluators/:evaluatorId', summary: 'Get an evaluator' },
    'Evaluator',
    ({ params, projectId }) => findEvaluator(ctx.pool, projectId, params.evaluatorId),
    publicEvaluator,
  );

  declare.deletion(
    {
      path: '/evaluators/:evaluatorId',
      summary: 'Delete an evaluator with all its versions and rule assignments (its scores stay)',
    },
    'Evaluator',
    ({ params, projectId }) => deleteEvaluator(ctx.pool, projectId, params.evaluatorId),
  );

  declare(
    {
      method: 'POST',
      path: '/evaluation-rules',
      summary: 'Create an evaluation rule',
      body: createRuleRequest,
    },
    async ({ body, projectId }) => {
      const id = await createRule(ctx.pool, projectId, body, legacyTargetsRun);
      return publicRule(ctx.pool, (await findRule(ctx.pool, projectId, id))!);
    },
  );

  declare.listing(
    { path: '/evaluation-rules', summary: 'List evaluation rules' },
    ({ projectId }, limit, offset) => listRules(ctx.pool, projectId, limit, offset),
    (r) => publicRule(ctx.pool, r),
  );

  declare(
    {
      method: 'GET',
      path: '/evaluation-rules/:evaluationRuleId',
      summary: 'Get an evaluation rule',
    },
    async ({ params, projectId }) =>
      publicRule(ctx.pool, await ruleOf(ctx, projectId, params.evaluationRuleId)),
  );

  declare(
    {
      method: 'PATCH',
      path: '/evaluation-rules/:evaluationRuleId',
      summary: 'Update an evaluation rule (only the fields sent)',
      body: updateRuleRequest,
    },
    async ({ params, body, projectId }) => {
      const rule = await ruleOf(ctx, projectId, params.evaluationRuleId);
      await updateRule(ctx.pool, rule, body, legacyTargetsRun);
      return publicRule(ctx.pool, await ruleOf(ctx, projectId, rule.id));
    },
  );

  declare.deletion(
    {
      path: '/evaluation-rules/:evaluationRuleId',
      summary: 'Delete an evaluation rule (its evaluators stay)',
    },
    'Evaluation rule',
    ({ params, projectId }) => deleteRule(ctx.pool, projectId, params.evaluationRuleId),
  );
}
