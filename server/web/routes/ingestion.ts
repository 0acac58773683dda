/** `POST /api/public/ingestion`: the batch endpoint of the older SDKs, answered with 207. */
import type { FastifyInstance } from 'fastify';
import { processBatch } from '../../ingestion/batch.ts';
import { batchRequest, describeIssues } from '../../ingestion/schemas.ts';
import { attributionOf, recordRefusedPath, type WebContext } from '../context.ts';

/** The reference documents batches of about 3.5 MB. */
export const BATCH_BODY_LIMIT = 3.5 * 1024 * 1024;

export function ingestionRoutes(app: FastifyInstance, ctx: WebContext): void {
  app.post('/api/public/ingestion', { bodyLimit: BATCH_BODY_LIMIT }, async (req, reply) => {
    const parsed = batchRequest.safeParse(req.body);
    if (!parsed.success) {
      return reply.code(400).send({ message: 'Invalid request data', error: describeIssues(parsed.error) });
    }
    if (parsed.data.batch.some((e) => (e as { type?: unknown } | null)?.type !== 'score-create')) {
      recordRefusedPath(ctx, req, 'ingestion-api');
    }
    const result = await processBatch(parsed.data.batch, {
      projectId: req.principal.projectId,
      settings: ctx.config.mode,
      attribution: attributionOf(req),
      store: ctx.store,
    });
    return reply.code(207).send(result);
  });
}
