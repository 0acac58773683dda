/**
 * Model definitions (`/api/public/models`), wire-compatible with the reference's models API:
 * list the project's own and the built-in definitions, create the project's own, get one, delete
 * one of the project's own (built-in ones answer 404, as in the reference). Relational data,
 * served in every write mode. Creating or deleting applies to this process's ingestion at once.
 */
import { z } from 'zod';
import { BadRequest, NotFound } from '../../../kernel/errors.ts';
import { translating, when } from '../../../platform/http/answers.ts';
import { familyPlugin, pageResponse, publicMount } from '../../../platform/http/project-routes.ts';
import { q } from '../../../platform/http/route.ts';
import { createModelRequest, MODEL_UNITS, type ModelDefinition, toApiModel } from '../definitions.ts';
import { createModel, DuplicateModelName, deleteModel, getModel, listModels } from '../store.ts';
import type { ModelsRouteContext } from './context.ts';

const tier = z.object({
  id: z.string(),
  name: z.string(),
  isDefault: z.boolean(),
  priority: z.number(),
  conditions: z.array(z.unknown()),
  prices: z.record(z.string(), z.number()),
});
const model = z.object({
  id: z.string(),
  modelName: z.string(),
  matchPattern: z.string(),
  startDate: z.string().nullable(),
  unit: z.enum(MODEL_UNITS).nullable(),
  inputPrice: z.number().nullable(),
  outputPrice: z.number().nullable(),
  totalPrice: z.number().nullable(),
  tokenizerId: z.string().nullable(),
  tokenizerConfig: z.unknown(),
  isLangfuseManaged: z.boolean(),
  createdAt: z.string(),
  prices: z.record(z.string(), z.object({ price: z.number() })),
  pricingTiers: z.array(tier),
});
const NOT_FOUND = 'No model with this id found.';

/** A model definition the project wrote: its cached pricing (what ingestion costs with) is dropped. */
export function written(ctx: ModelsRouteContext, projectId: string, model: ModelDefinition) {
  ctx.models.invalidate(projectId);
  return toApiModel(model);
}

export const modelsPlugin = familyPlugin<ModelsRouteContext>(
  publicMount('/api/public', 'Models'),
  (declare, ctx) => {
    declare.listing(
      {
        path: '/models',
        summary: "The project's own and the built-in model definitions, by name, unit and newest start date",
        query: z.object(q.page(1000, 50)),
        response: pageResponse(model),
      },
      ({ projectId }, limit, offset) => listModels(ctx.pool, projectId, limit, offset),
      toApiModel,
    );

    declare(
      {
        method: 'POST',
        path: '/models',
        summary:
          'Create a model definition of the project (overrides built-in ones whose pattern also matches)',
        body: createModelRequest,
        response: model,
      },
      async ({ body, projectId }) => {
        const created = await translating(
          () => createModel(ctx.pool, projectId, body),
          when(DuplicateModelName, (err) => new BadRequest('Invalid request data', err.message)),
        );
        return written(ctx, projectId, created);
      },
    );

    declare(
      {
        method: 'GET',
        path: '/models/:id',
        summary: 'A model definition of the project or a built-in one',
        response: model,
      },
      async ({ params, projectId }) => {
        const found = await getModel(ctx.pool, projectId, params.id);
        if (!found) throw new NotFound(NOT_FOUND);
        return toApiModel(found);
      },
    );

    declare(
      {
        method: 'DELETE',
        path: '/models/:id',
        summary: "Delete one of the project's own model definitions (built-in ones cannot be deleted)",
        response: z.object({ message: z.literal('Model successfully deleted') }),
      },
      async ({ params, projectId }) => {
        if (!(await deleteModel(ctx.pool, projectId, params.id)))
          throw new NotFound(
            `${NOT_FOUND} Note: You cannot delete built-in models, override them with a model with the same name.`,
          );
        ctx.models.invalidate(projectId);
        return { message: 'Model successfully deleted' as const };
      },
    );
  },
);
