/** `POST /api/public/ingestion`: the batch endpoint of the older SDKs, answered with 207. */
import type { FastifyPluginAsync } from 'fastify';
import { BadRequest } from '../../../kernel/errors.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { batchRequest, describeIssues } from '../../write-model/bodies.ts';
import { processBatch } from '../batch.ts';
import { type IngestionRouteContext, ingestionContextOf, recordRefusedPath } from './context.ts';

/** The reference documents batches of about 3.5 MB. */
export const BATCH_BODY_LIMIT = 3.5 * 1024 * 1024;

const openapi = {
  method: 'POST',
  url: '/api/public/ingestion',
  tag: 'Ingestion',
  summary: 'A batch of events; each answered in the 207 body (events_only: only score-create)',
  body: batchRequest,
} as const;

export const ingestionPlugin: FastifyPluginAsync<PluginOptions<IngestionRouteContext>> = async (
  app,
  { ctx },
) => {
  app.post(openapi.url, { bodyLimit: BATCH_BODY_LIMIT, config: { openapi } }, async (req, reply) => {
    const parsed = batchRequest.safeParse(req.body);
    if (!parsed.success) throw new BadRequest('Invalid request data', describeIssues(parsed.error));
    if (parsed.data.batch.some((e) => (e as { type?: unknown } | null)?.type !== 'score-create')) {
      recordRefusedPath(ctx, req, 'ingestion-api');
    }
    const result = await processBatch(parsed.data.batch, ingestionContextOf(ctx, req));
    return reply.code(207).send(result);
  });
};
