/**
 * The models page's routes in the UI's project scope (`/api/ui/projects/:projectId/models`): the
 * project's own and the built-in definitions, create, edit and delete the project's own (writes for
 * members and owners; a built-in one is overridden by creating the project's own), and which
 * definition a model name matches, answered by the same ProjectPricing ingestion prices with.
 */
import { z } from 'zod';
import { BadRequest, NotFound } from '../../../kernel/errors.ts';
import { translating, when } from '../../../platform/http/answers.ts';
import { familyPlugin, uiMount } from '../../../platform/http/project-routes.ts';
import { createModelRequest, type ModelDefinition, toApiModel } from '../definitions.ts';
import { createModel, DuplicateModelName, deleteModel, updateModel, visibleModels } from '../store.ts';
import type { ModelsRouteContext } from './context.ts';
import { written } from './public.ts';

const WRITE = { atLeast: 'member', refusal: 'viewers cannot change models' } as const;

/** Own definitions first, then by name and newest start date, as the page lists them. */
const pageOrder = (a: ModelDefinition, b: ModelDefinition) =>
  Number(a.projectId === null) - Number(b.projectId === null) ||
  a.modelName.localeCompare(b.modelName) ||
  (b.startDate ?? '').localeCompare(a.startDate ?? '');

const nameTaken = when(
  DuplicateModelName,
  (err) => new BadRequest('modelName: already used in the project', err.message),
);

export const uiModelsPlugin = familyPlugin<ModelsRouteContext>(uiMount(WRITE), (declare, ctx) => {
  declare(
    {
      method: 'GET',
      path: '/models',
      summary: "The project's own model definitions and the built-in ones",
    },
    async ({ projectId }) => {
      const defs = await visibleModels(ctx.pool, projectId);
      return { data: defs.sort(pageOrder).map(toApiModel) };
    },
  );

  declare(
    {
      method: 'GET',
      path: '/models/match',
      summary: 'The definition ingestion would price a model name with, at a time (now by default)',
      query: z.object({ name: z.string().min(1), at: z.iso.datetime({ offset: true }).optional() }),
    },
    async ({ query, projectId }) => {
      const at = query.at ? Date.parse(query.at) : Date.now();
      const pricing = await ctx.models.pricingFor(projectId);
      const matched = pricing.modelFor(query.name, at);
      return { name: query.name, at: new Date(at).toISOString(), model: matched && toApiModel(matched) };
    },
  );

  declare(
    {
      method: 'POST',
      path: '/models',
      summary:
        "Create a model definition of the project (overriding a built-in one is creating the project's own)",
      body: createModelRequest,
    },
    async ({ body, projectId }) => {
      return written(
        ctx,
        projectId,
        await translating(() => createModel(ctx.pool, projectId, body), nameTaken),
      );
    },
  );

  declare(
    {
      method: 'PUT',
      path: '/models/:id',
      summary: "Replace one of the project's own model definitions",
      body: createModelRequest,
    },
    async ({ body, params, projectId }) => {
      const updated = await translating(() => updateModel(ctx.pool, projectId, params.id, body), nameTaken);
      if (!updated) throw new NotFound(`the project has no own model ${params.id}`);
      return written(ctx, projectId, updated);
    },
  );

  declare(
    {
      method: 'DELETE',
      path: '/models/:id',
      summary: "Delete one of the project's own model definitions (built-in ones cannot be deleted)",
    },
    async ({ params, projectId }) => {
      if (!(await deleteModel(ctx.pool, projectId, params.id)))
        throw new NotFound(`the project has no own model ${params.id}; built-in models cannot be deleted`);
      ctx.models.invalidate(projectId);
      return { message: 'Model successfully deleted' };
    },
  );
});
