/**
 * The deprecated single-entity write endpoints. They answer in `legacy` and `dual` and 404 in
 * `events_only`; each is one event through the batch path, so they write what a batch would.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { behaviourOf } from '../../contract/write-modes.ts';
import { processBatch } from '../../ingestion/batch.ts';
import { attributionOf, recordRefusedPath, type WebContext } from '../context.ts';

const ROUTES = [
  ['POST', '/api/public/traces', 'trace-create'],
  ['POST', '/api/public/spans', 'span-create'],
  ['PATCH', '/api/public/spans', 'span-update'],
  ['POST', '/api/public/generations', 'generation-create'],
  ['PATCH', '/api/public/generations', 'generation-update'],
  ['POST', '/api/public/events', 'event-create'],
] as const;

export function notInEventsOnly(reply: FastifyReply): FastifyReply {
  return reply.code(404).send({
    message:
      'This endpoint is not available on deployments running write mode events_only. ' +
      'Use OpenTelemetry ingestion (/api/public/otel/v1/traces) and the version 4 read APIs.',
  });
}

export function legacyWriteRoutes(app: FastifyInstance, ctx: WebContext): void {
  for (const [method, url, type] of ROUTES) {
    app.route({
      method,
      url,
      handler: async (req, reply) => {
        recordRefusedPath(ctx, req, 'legacy-endpoint');
        if (!behaviourOf(ctx.config.mode).servesLegacyEndpoints) return notInEventsOnly(reply);
        const body = (req.body ?? {}) as Record<string, unknown>;
        // Trace bodies may omit their id; observation bodies must carry one (validated below).
        if (type === 'trace-create' && body['id'] == null) body['id'] = randomUUID();
        const event = { id: randomUUID(), timestamp: new Date().toISOString(), type, body };
        const result = await processBatch([event], {
          projectId: req.principal.projectId,
          settings: ctx.config.mode,
          attribution: attributionOf(req),
          store: ctx.store,
        });
        const error = result.errors[0];
        if (error) return reply.code(400).send({ message: error.message, error: error.error });
        return reply.code(200).send({ id: body['id'] });
      },
    });
  }
}
