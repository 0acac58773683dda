/**
 * The web UI's evaluation actions in the project scope: replacing a trace-level (Legacy) rule,
 * which stops at the cutover, by an observation rule on each trace's root observation (offered by
 * the migration page). Owners only.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { behaviourOf } from '../../contract/write-modes.ts';
import { NotFound } from '../../errors.ts';
import { convertToObservationRule, publicRule } from '../../evaluation/api.ts';
import { findRule } from '../../evaluation/store.ts';
import { route } from '../route.ts';
import { projectParams } from '../ui-scope.ts';
import type { PluginOptions } from './types.ts';

export const uiEvaluationsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  const legacyTargetsRun = behaviourOf(ctx.config.mode).writesLegacyTables;
  route(
    app,
    {
      method: 'POST',
      url: '/api/ui/projects/:projectId/evaluation-rules/:ruleId/convert',
      tag: 'UI',
      summary:
        'Replace a trace-level rule by an observation rule on root observations; the old rule is disabled',
      role: { atLeast: 'owner', refusal: 'only owners change evaluation rules' },
      params: projectParams.extend({ ruleId: z.string().min(1) }),
    },
    async ({ params, req }) => {
      const rule = await findRule(ctx.pool, req.project.id, params.ruleId);
      if (!rule) throw new NotFound(`Evaluation rule ${params.ruleId} not found`);
      const id = await convertToObservationRule(ctx.pool, rule, legacyTargetsRun);
      return publicRule(ctx.pool, (await findRule(ctx.pool, req.project.id, id))!);
    },
  );
};
