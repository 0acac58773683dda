/**
 * The deprecated single-entity write endpoints. They answer in `legacy` and `dual` and 404 in
 * `events_only`; each is one event through the batch path, so they write what a batch would.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { BadRequest } from '../../../kernel/errors.ts';
import { modeGate } from '../../../platform/http/gates.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { processBatch } from '../batch.ts';
import { type IngestionRouteContext, ingestionContextOf, recordRefusedPath } from './context.ts';

const ROUTES = [
  ['POST', '/api/public/traces', 'trace-create'],
  ['POST', '/api/public/spans', 'span-create'],
  ['PATCH', '/api/public/spans', 'span-update'],
  ['POST', '/api/public/generations', 'generation-create'],
  ['PATCH', '/api/public/generations', 'generation-update'],
  ['POST', '/api/public/events', 'event-create'],
] as const;

export const legacyWritesPlugin: FastifyPluginAsync<PluginOptions<IngestionRouteContext>> = async (
  app,
  { ctx },
) => {
  // Tallied before the gate: the tally is of producers still on paths events_only refuses.
  app.addHook('onRequest', async (req) => recordRefusedPath(ctx, req, 'legacy-endpoint'));
  app.addHook('onRequest', modeGate(ctx));
  for (const [method, url, type] of ROUTES) {
    const openapi = {
      method,
      url,
      tag: 'Legacy',
      summary: `One ${type} event (deprecated; 404 in events_only)`,
    };
    app.route({
      method,
      url,
      config: { gate: 'deprecated', openapi },
      handler: async (req, reply) => {
        const body = (req.body ?? {}) as Record<string, unknown>;
        // Trace bodies may omit their id; observation bodies must carry one (validated below).
        if (type === 'trace-create' && body['id'] == null) body['id'] = randomUUID();
        const event = { id: randomUUID(), timestamp: new Date().toISOString(), type, body };
        const result = await processBatch([event], ingestionContextOf(ctx, req));
        const error = result.errors[0];
        if (error) throw new BadRequest(error.message, error.error);
        return reply.code(200).send({ id: body['id'] });
      },
    });
  }
};
