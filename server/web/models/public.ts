/**
 * Model definitions (`/api/public/models`), wire-compatible with the reference's models API:
 * list the project's own and the built-in definitions, create the project's own, get one, delete
 * one of the project's own (built-in ones answer 404, as in the reference). Relational data,
 * served in every write mode. Creating or deleting applies to this process's ingestion at once.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { BadRequest, NotFound } from '../../errors.ts';
import { createModelRequest, MODEL_UNITS, toApiModel } from '../../models/definitions.ts';
import { createModel, DuplicateModelName, deleteModel, getModel, listModels } from '../../models/store.ts';
import type { PluginOptions } from '../core/plugin-options.ts';
import { paged } from '../core/project-routes.ts';
import { q, route } from '../core/route.ts';

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
const idParam = z.object({ id: z.string().min(1) });
const NOT_FOUND = 'No model with this id found.';

export const modelsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  route(
    app,
    {
      method: 'GET',
      url: '/api/public/models',
      tag: 'Models',
      summary: "The project's own and the built-in model definitions, by name, unit and newest start date",
      query: z.object(q.page(1000, 50)),
      response: z.object({
        data: z.array(model),
        meta: z.object({
          page: z.number(),
          limit: z.number(),
          totalItems: z.number(),
          totalPages: z.number(),
        }),
      }),
    },
    async ({ query, req }) => {
      const { data, total } = await listModels(ctx.pool, req.principal.projectId, query);
      return paged(query, data.map(toApiModel), total);
    },
  );

  route(
    app,
    {
      method: 'POST',
      url: '/api/public/models',
      tag: 'Models',
      summary:
        'Create a model definition of the project (overrides built-in ones whose pattern also matches)',
      body: createModelRequest,
      response: model,
    },
    async ({ body, req }) => {
      const { projectId } = req.principal;
      try {
        const created = await createModel(ctx.pool, projectId, body);
        ctx.models.invalidate(projectId);
        return toApiModel(created);
      } catch (err) {
        if (err instanceof DuplicateModelName) throw new BadRequest('Invalid request data', err.message);
        throw err;
      }
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: '/api/public/models/:id',
      tag: 'Models',
      summary: 'A model definition of the project or a built-in one',
      params: idParam,
      response: model,
    },
    async ({ params, req }) => {
      const found = await getModel(ctx.pool, req.principal.projectId, params.id);
      if (!found) throw new NotFound(NOT_FOUND);
      return toApiModel(found);
    },
  );

  route(
    app,
    {
      method: 'DELETE',
      url: '/api/public/models/:id',
      tag: 'Models',
      summary: "Delete one of the project's own model definitions (built-in ones cannot be deleted)",
      params: idParam,
      response: z.object({ message: z.literal('Model successfully deleted') }),
    },
    async ({ params, req }) => {
      const { projectId } = req.principal;
      if (!(await deleteModel(ctx.pool, projectId, params.id)))
        throw new NotFound(
          `${NOT_FOUND} Note: You cannot delete built-in models, override them with a model with the same name.`,
        );
      ctx.models.invalidate(projectId);
      return { message: 'Model successfully deleted' as const };
    },
  );
};
