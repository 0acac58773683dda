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
import { LLM_ENV } from '../../contract/env.ts';
import { BadRequest, NotConfigured, NotFound } from '../../errors.ts';
import { pauseRulesOfProvider } from '../../evaluation/store.ts';
import { baseUrlProblem } from '../../llm/address-policy.ts';
import { deleteConnection, listConnections, upsertConnection } from '../../llm/connection-store.ts';
import { publicConnection, upsertConnectionRequest, upsertProblem } from '../../llm/connections.ts';
import { AddressRefused, checkHost } from '../../llm/guarded-http.ts';
import { pageMeta } from '../../reads/datasets.ts';
import type { WebContext } from '../core/context.ts';
import { type ProjectMount, q, route } from '../core/route.ts';

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
const meta = z.object({
  page: z.number(),
  limit: z.number(),
  totalItems: z.number(),
  totalPages: z.number(),
});

export function llmConnectionRoutes(app: FastifyInstance, ctx: WebContext, mount: ProjectMount): void {
  const write = mount.write ? { role: mount.write } : {};
  route(
    app,
    {
      method: 'GET',
      url: `${mount.prefix}/llm-connections`,
      tag: mount.tag,
      summary: 'List the LLM connections of the project (secrets excluded)',
      query: z.object({ page: q.int(1, 1_000_000, 1), limit: q.int(1, 100, 50) }),
      response: z.object({ data: z.array(connection), meta }),
    },
    async ({ query, req }) => {
      const { connections, total } = await listConnections(
        ctx.pool,
        mount.projectOf(req),
        query.limit,
        (query.page - 1) * query.limit,
      );
      return { data: connections.map(publicConnection), meta: pageMeta(query.page, query.limit, total) };
    },
  );

  route(
    app,
    {
      method: 'PUT',
      ...write,
      url: `${mount.prefix}/llm-connections`,
      tag: mount.tag,
      summary: 'Create or update an LLM connection (upserted on provider)',
      body: upsertConnectionRequest,
      response: connection,
    },
    async ({ body, req }) => {
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
      return publicConnection(await upsertConnection(ctx.pool, key, mount.projectOf(req), body));
    },
  );

  route(
    app,
    {
      method: 'DELETE',
      ...write,
      url: `${mount.prefix}/llm-connections/:id`,
      tag: mount.tag,
      summary: 'Delete an LLM connection; evaluation rules using it are paused',
      params: z.object({ id: z.string().min(1) }),
      response: z.object({ message: z.string() }),
    },
    async ({ params, req }) => {
      const projectId = mount.projectOf(req);
      const provider = await deleteConnection(ctx.pool, projectId, params.id);
      if (provider === undefined) throw new NotFound(`LLM connection ${params.id} not found`);
      await pauseRulesOfProvider(ctx.pool, projectId, provider);
      return { message: 'LLM connection successfully deleted' };
    },
  );
}
