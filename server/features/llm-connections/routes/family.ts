/**
 * LLM connections, the reference's shapes (list, upsert on provider, delete), declared once and
 * mounted twice: under `/api/public` for the project of the API key, and under
 * `/api/ui/projects/:projectId` for the project settings page (owners only). Secrets are encrypted
 * with ENCRYPTION_KEY and never returned; a base URL must not reach private addresses unless
 * whitelisted. Deleting a connection pauses the evaluation rules whose evaluators use it.
 * Relational data, served in every write mode.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { LLM_ENV } from '../../../contract/env.ts';
import { BadRequest, NotConfigured } from '../../../kernel/errors.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import { type ProjectMount, pageResponse, projectRoutes } from '../../../platform/http/project-routes.ts';
import { pauseRulesOfProvider } from '../../evaluation/store.ts';
import { baseUrlProblem } from '../address-policy.ts';
import { deleteConnection, listConnections, upsertConnection } from '../connection-store.ts';
import { publicConnection, upsertConnectionRequest, upsertProblem } from '../connections.ts';
import { AddressRefused, checkHost } from '../guarded-http.ts';

const connection = z.object({
  id: z.string(),
  provider: z.string(),
  adapter: z.string(),
  displaySecretKey: z.string(),
  baseURL: z.string().optional(),
  customModels: z.array(z.string()),
  withDefaultModels: z.boolean(),
  extraHeaderKeys: z.array(z.string()),
  config: z.record(z.string(), z.unknown()).optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export function llmConnectionRoutes(app: FastifyInstance, ctx: RouteContext, mount: ProjectMount): void {
  const declare = projectRoutes(app, mount);
  declare.listing(
    {
      path: '/llm-connections',
      summary: 'List the LLM connections of the project (secrets excluded)',
      response: pageResponse(connection),
    },
    ({ projectId }, limit, offset) => listConnections(ctx.pool, projectId, limit, offset),
    publicConnection,
  );

  declare(
    {
      method: 'PUT',
      path: '/llm-connections',
      summary: 'Create or update an LLM connection (upserted on provider)',
      body: upsertConnectionRequest,
      response: connection,
    },
    async ({ body, projectId }) => {
      const key = ctx.config.llm.encryptionKey;
      if (!key) throw new NotConfigured(`LLM connections need ${LLM_ENV.encryptionKey} on the server`);
      const problem = upsertProblem(body) ?? (body.baseURL ? baseUrlProblem(body.baseURL) : undefined);
      if (problem) throw new BadRequest(problem);
      if (body.baseURL) {
        try {
          await checkHost(ctx.config.llm, new URL(body.baseURL).hostname);
        } catch (err) {
          if (err instanceof AddressRefused) throw new BadRequest(`baseURL: ${err.message}`);
          throw new BadRequest(`baseURL: host ${new URL(body.baseURL).hostname} does not resolve`);
        }
      }
      return publicConnection(await upsertConnection(ctx.pool, key, projectId, body));
    },
  );

  declare.deletion(
    {
      path: '/llm-connections/:id',
      summary: 'Delete an LLM connection; evaluation rules using it are paused',
      response: z.object({ message: z.string() }),
    },
    'LLM connection',
    async ({ params, projectId }) => {
      const provider = await deleteConnection(ctx.pool, projectId, params.id);
      if (provider === undefined) return false;
      await pauseRulesOfProvider(ctx.pool, projectId, provider);
      return true;
    },
  );
}
