/**
 * The models page's routes in the UI's project scope (`/api/ui/projects/:projectId/models`): the
 * project's own and the built-in definitions, create, edit and delete the project's own (writes for
 * members and owners; a built-in one is overridden by creating the project's own), and which
 * definition a model name matches, answered by the same ProjectPricing ingestion prices with.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { BadRequest, NotFound } from '../../errors.ts';
import { createModelRequest, type ModelDefinition, toApiModel } from '../../models/definitions.ts';
import {
  createModel,
  DuplicateModelName,
  deleteModel,
  updateModel,
  visibleModels,
} from '../../models/store.ts';
import { translating, when } from '../core/answers.ts';
import type { PluginOptions } from '../core/plugin-options.ts';
import { route } from '../core/route.ts';
import { projectParams } from '../ui-shell/scope.ts';

const WRITE = { atLeast: 'member', refusal: 'viewers cannot change models' } as const;
const modelParams = projectParams.extend({ id: z.string().min(1) });

/** Own definitions first, then by name and newest start date, as the page lists them. */
const pageOrder = (a: ModelDefinition, b: ModelDefinition) =>
  Number(a.projectId === null) - Number(b.projectId === null) ||
  a.modelName.localeCompare(b.modelName) ||
  (b.startDate ?? '').localeCompare(a.startDate ?? '');

const nameTaken = when(
  DuplicateModelName,
  (err) => new BadRequest('modelName: already used in the project', err.message),
);

export const uiModelsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  route(
    app,
    {
      method: 'GET',
      url: '/api/ui/projects/:projectId/models',
      tag: 'UI',
      summary: "The project's own model definitions and the built-in ones",
      params: projectParams,
    },
    async ({ req }) => {
      const defs = await visibleModels(ctx.pool, req.project.id);
      return { data: defs.sort(pageOrder).map(toApiModel) };
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: '/api/ui/projects/:projectId/models/match',
      tag: 'UI',
      summary: 'The definition ingestion would price a model name with, at a time (now by default)',
      params: projectParams,
      query: z.object({ name: z.string().min(1), at: z.iso.datetime({ offset: true }).optional() }),
    },
    async ({ query, req }) => {
      const at = query.at ? Date.parse(query.at) : Date.now();
      const pricing = await ctx.models.pricingFor(req.project.id);
      const matched = pricing.modelFor(query.name, at);
      return { name: query.name, at: new Date(at).toISOString(), model: matched && toApiModel(matched) };
    },
  );

  route(
    app,
    {
      method: 'POST',
      url: '/api/ui/projects/:projectId/models',
      tag: 'UI',
      summary:
        "Create a model definition of the project (overriding a built-in one is creating the project's own)",
      role: WRITE,
      params: projectParams,
      body: createModelRequest,
    },
    async ({ body, req }) => {
      const created = await translating(() => createModel(ctx.pool, req.project.id, body), nameTaken);
      ctx.models.invalidate(req.project.id);
      return toApiModel(created);
    },
  );

  route(
    app,
    {
      method: 'PUT',
      url: '/api/ui/projects/:projectId/models/:id',
      tag: 'UI',
      summary: "Replace one of the project's own model definitions",
      role: WRITE,
      params: modelParams,
      body: createModelRequest,
    },
    async ({ body, params, req }) => {
      const updated = await translating(
        () => updateModel(ctx.pool, req.project.id, params.id, body),
        nameTaken,
      );
      if (!updated) throw new NotFound(`the project has no own model ${params.id}`);
      ctx.models.invalidate(req.project.id);
      return toApiModel(updated);
    },
  );

  route(
    app,
    {
      method: 'DELETE',
      url: '/api/ui/projects/:projectId/models/:id',
      tag: 'UI',
      summary: "Delete one of the project's own model definitions (built-in ones cannot be deleted)",
      role: WRITE,
      params: modelParams,
    },
    async ({ params, req }) => {
      if (!(await deleteModel(ctx.pool, req.project.id, params.id)))
        throw new NotFound(`the project has no own model ${params.id}; built-in models cannot be deleted`);
      ctx.models.invalidate(req.project.id);
      return { message: 'Model successfully deleted' };
    },
  );
};
