/**
 * The prompts page's routes in the UI's project scope: prompt names (folders are `/` in names)
 * with their tags and labels, a prompt's versions as stored, new versions and label moves for
 * members and owners (the protected `production` label for owners only), the project's LLM
 * connections without secrets, and the playground run (../../prompts/playground-run.ts).
 */
import { z } from 'zod';
import { Forbidden, NotFound } from '../../../kernel/errors.ts';
import { familyPlugin, offsetOf, uiMount } from '../../../platform/http/project-routes.ts';
import { q, type RoleNeed } from '../../../platform/http/route.ts';
import type { ModelsRouteContext } from '../../models/routes/context.ts';
import { playgroundRequest, protectedLabelProblem } from '../playground.ts';
import { runPlayground } from '../playground-run.ts';
import { createPromptRequest, updateLabelsRequest, withDefaultType } from '../rules.ts';
import { createPrompt, listPromptMeta, listVersions } from '../store.ts';
import { labelVersion } from './public.ts';

const WRITE: RoleNeed = { atLeast: 'member', refusal: 'viewers cannot change prompts' };

export const uiPromptsPlugin = familyPlugin<ModelsRouteContext>(uiMount(WRITE), (declare, ctx) => {
  declare(
    {
      method: 'GET',
      path: '/prompts',
      summary: 'Prompt names with their versions, labels and tags, newest first',
      query: z.object(q.page(1000, 500)),
    },
    async ({ query, projectId }) => {
      const { items, total } = await listPromptMeta(ctx.pool, projectId, {}, query.limit, offsetOf(query));
      return { data: items, total };
    },
  );

  declare(
    {
      method: 'GET',
      path: '/prompt-versions',
      summary: 'Every version of one prompt as stored (references unresolved), newest first',
      query: z.object({ name: z.string().min(1) }),
    },
    async ({ query, projectId }) => {
      const versions = await listVersions(ctx.pool, projectId, query.name);
      if (versions.length === 0) throw new NotFound(`Prompt not found: '${query.name}'`);
      return { data: versions };
    },
  );

  declare(
    {
      method: 'POST',
      path: '/prompts',
      summary: 'A new version of a prompt (a playground run saved, or an edit)',
      body: z.preprocess(withDefaultType, createPromptRequest),
    },
    async ({ body, req, projectId }) => {
      const problem = protectedLabelProblem(req.project.role, body.labels ?? []);
      if (problem) throw new Forbidden(problem);
      return createPrompt(ctx.pool, projectId, body);
    },
  );

  declare(
    {
      method: 'POST',
      path: '/prompt-labels',
      summary: 'Move labels onto a version of a prompt (each leaves the version that had it)',
      body: updateLabelsRequest.extend({ name: z.string().min(1), version: z.number().int().min(1) }),
    },
    async ({ body, req, projectId }) => {
      const problem = protectedLabelProblem(req.project.role, body.newLabels);
      if (problem) throw new Forbidden(problem);
      return labelVersion(ctx.pool, projectId, body, body.newLabels);
    },
  );

  declare(
    {
      method: 'POST',
      path: '/playground',
      summary: 'Send a text or chat prompt with its variables to a model of an LLM connection',
      role: { atLeast: 'member', refusal: 'viewers cannot run the playground' },
      body: playgroundRequest,
    },
    async ({ body, projectId }) =>
      runPlayground({ pool: ctx.pool, llm: ctx.config.llm, models: ctx.models }, projectId, body),
  );
});
