/**
 * The evaluations pages' routes in the UI's project scope: LLM connections (owners write; the
 * public API's routes, server/features/llm-connections/routes/family.ts), evaluators and rules (members write; the
 * unstable API's routes, family.ts), and what only the pages need: a rule's
 * execution log with each score and judge trace, the live preview of a mapping on a real
 * observation (resolved by the judge's own code, ../../evaluation/judged.ts), and the conversion of
 * a trace-level (Legacy) rule, which stops at the cutover, into an observation rule (owners).
 * Errors answer the unstable API's envelope, whose `details.field` the pages show.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { behaviourOf } from '../../../contract/write-modes.ts';
import { notFound } from '../../../platform/http/answers.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { offsetOf, paged, pageQuery, projectRoutes, uiMount } from '../../../platform/http/project-routes.ts';
import { llmConnectionRoutes } from '../../llm-connections/routes/family.ts';
import { buildScoresById, rowScore } from '../../reads/row-scores.ts';
import { toIso } from '../../reads/row-values.ts';
import { select } from '../../reads/select.ts';
import { convertToObservationRule, publicEvaluator, publicRule } from '../api.ts';
import { PublicApiError } from '../errors.ts';
import { listExecutions, pendingByRule } from '../executions.ts';
import { mappedValues, readJudged } from '../judged.ts';
import {
  checkRuleFilters,
  jsonPathProblem,
  mappingEntry,
  renderPrompt,
  ruleFilter,
  ruleFilterColumns,
} from '../rules.ts';
import { buildSample, PENDING_PER_RULE, type ScanRow, sourceOf } from '../scan.ts';
import { findEvaluatorByName, findRule, listEvaluatorVersions } from '../store.ts';
import { evaluationRoutes, ruleOf } from './family.ts';

const previewRequest = z.object({
  target: z.enum(['observation', 'experiment', 'trace']),
  filter: z.array(ruleFilter).default([]),
  evaluator: z.string().min(1),
  mapping: z.array(mappingEntry),
  /** The observation (or trace, for a trace-level rule) to preview on; the newest match without. */
  id: z.string().min(1).optional(),
});

export const uiEvaluationsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  const declare = projectRoutes(app, uiMount());
  const legacyTargetsRun = behaviourOf(ctx.config.mode).writesLegacyTables;
  llmConnectionRoutes(app, ctx, uiMount({ atLeast: 'owner', refusal: 'only owners change LLM connections' }));
  evaluationRoutes(
    app,
    ctx,
    uiMount({ atLeast: 'member', refusal: 'viewers cannot change evaluators or rules' }),
  );

  declare(
    {
      method: 'GET',
      path: '/evaluation-rules/:evaluationRuleId/executions',
      summary:
        "A rule's executions, newest first: status, attempts, failure reason, score and judge trace; how many wait",
      query: pageQuery,
    },
    async ({ params, query, projectId }) => {
      const rule = await ruleOf(ctx, projectId, params.evaluationRuleId);
      const { executions, total } = await listExecutions(
        ctx.pool,
        rule.projectId,
        rule.id,
        query.limit,
        offsetOf(query),
      );
      const waiting = (await pendingByRule(ctx.pool, [rule.id])).get(rule.id) ?? 0;
      const scoreIds = executions.flatMap((e) => (e.scoreId ? [e.scoreId] : []));
      const scores = new Map(
        (scoreIds.length > 0 ? await select(ctx, buildScoresById(rule.projectId, scoreIds)) : [])
          .map(rowScore)
          .map((s) => [s.id, s]),
      );
      return {
        ...paged(
          query,
          executions.map((e) => ({ ...e, score: (e.scoreId && scores.get(e.scoreId)) || null })),
          total,
        ),
        // How many wait for the judge, and from how many the rule's scan holds (scan.ts).
        queue: { waiting, holdsAt: PENDING_PER_RULE },
      };
    },
  );

  declare(
    {
      method: 'GET',
      path: '/evaluators/:evaluatorId/versions',
      summary: 'Every version of an evaluator, newest first: prompt, output, model',
    },
    async ({ params, projectId }) => {
      const versions = await listEvaluatorVersions(ctx.pool, projectId, params.evaluatorId);
      if (versions.length === 0) throw notFound('Evaluator', params.evaluatorId);
      return { data: versions.map(publicEvaluator) };
    },
  );

  declare(
    {
      method: 'GET',
      path: '/evaluation-rules/filter-columns',
      summary: 'The columns a rule of each target may filter on, with their kinds',
    },
    async () => ({
      observation: ruleFilterColumns('observation'),
      experiment: ruleFilterColumns('experiment'),
      trace: ruleFilterColumns('trace'),
    }),
  );

  declare(
    {
      method: 'POST',
      path: '/evaluation-rules/preview',
      summary:
        "A mapping resolved on a real observation matching the filters, as the judge resolves it, with the evaluator's prompt rendered",
      body: previewRequest,
    },
    async ({ body, projectId }) => {
      const evaluator = await findEvaluatorByName(ctx.pool, projectId, body.evaluator);
      if (!evaluator)
        throw new PublicApiError('resource_not_found', `Evaluator "${body.evaluator}" not found`, {
          field: 'evaluator',
        });
      checkRuleFilters(body.target, body.filter);
      const source = sourceOf(body.target, legacyTargetsRun);
      const sample = await select(ctx, buildSample({ projectId, source, filter: body.filter }, body.id));
      const found = sample[0] as ScanRow | undefined;
      if (!found) return { sample: null, variables: [], prompt: null };
      const key = {
        projectId,
        traceId: found.trace_id,
        observationId: found.id,
        observationStartTime: toIso(found.at)!,
      };
      const row = await readJudged(ctx.analytics, key, source);
      const usable = body.mapping.filter((m) => m.jsonPath === undefined || !jsonPathProblem(m.jsonPath));
      const values = row ? mappedValues(row, usable) : {};
      return {
        sample: { id: found.id, traceId: found.trace_id, startTime: key.observationStartTime },
        variables: body.mapping.map((m) => ({
          variable: m.variable,
          value: values[m.variable] ?? null,
          problem: m.jsonPath === undefined ? null : (jsonPathProblem(m.jsonPath) ?? null),
        })),
        prompt: renderPrompt(evaluator.prompt, values),
      };
    },
  );

  declare(
    {
      method: 'POST',
      path: '/evaluation-rules/:evaluationRuleId/convert',
      summary:
        'Replace a trace-level rule by an observation rule on root observations; the old rule is disabled',
      role: { atLeast: 'owner', refusal: 'only owners change evaluation rules' },
    },
    async ({ params, projectId }) => {
      const rule = await ruleOf(ctx, projectId, params.evaluationRuleId);
      const id = await convertToObservationRule(ctx.pool, rule, legacyTargetsRun);
      return publicRule(ctx.pool, (await findRule(ctx.pool, projectId, id))!);
    },
  );
};
