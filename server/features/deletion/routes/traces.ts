/**
 * Trace deletion (`DELETE /api/public/traces/{traceId}` and the bulk `DELETE /api/public/traces`),
 * served in every write mode. As in the reference, the request queues the deletion and answers at
 * once (200, `{message}`, plus the queued deletion's id); the worker deletes the rows from every
 * table that can hold them, whichever mode wrote them, in bounded batches (server/features/deletion/queue.ts).
 * An id the project does not hold is not an error (the call is idempotent and never says whether an
 * id exists elsewhere). `GET /api/public/trace-deletions/{deletionId}` shows a deletion's progress,
 * and `GET /api/public/trace-deletions?traceId=` the project's deletions still under way. The trace
 * view's delete action is the same deletion in the UI's project scope, for owners, audited with the
 * signed-in user.
 */
import type { FastifyPluginAsync } from 'fastify';
import type pg from 'pg';
import { z } from 'zod';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { type Declare, projectRoutes, publicMount, uiMount } from '../../../platform/http/project-routes.ts';
import { actorOf } from '../../audit/routes/audit.ts';
import { enqueueTraceDeletion, pendingTraceDeletions, traceDeletionOf } from '../queue.ts';

const deleteTraceResponse = z.object({ message: z.string(), deletionId: z.string() });

const traceDeletion = z.object({
  id: z.string(),
  status: z.enum(['queued', 'running', 'succeeded', 'failed']),
  traceCount: z.number(),
  deletedCount: z.number(),
  error: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  finishedAt: z.string().nullable(),
});

/** Deletions still under way listed at most. */
const PENDING_LIMIT = 50;

/** The one-trace delete and the deletions' reads, declared once for the public API and the UI's project scope. */
function traceDeletionRoutes(declare: Declare, pool: pg.Pool) {
  declare(
    {
      method: 'DELETE',
      path: '/traces/:traceId',
      summary: 'Queue the deletion of a trace with its observations, scores, comments and media',
      response: deleteTraceResponse,
    },
    async ({ params, projectId, req }) => {
      const queued = await enqueueTraceDeletion(pool, projectId, actorOf(req), [params.traceId]);
      return { message: 'Trace deleted successfully', deletionId: queued.id };
    },
  );
  declare.lookup(
    {
      path: '/trace-deletions/:deletionId',
      summary: 'Get a queued trace deletion: its status and how many of its traces are deleted',
      response: traceDeletion,
    },
    'Trace deletion',
    ({ params, projectId }) => traceDeletionOf(pool, projectId, params.deletionId),
  );
  declare(
    {
      method: 'GET',
      path: '/trace-deletions',
      summary: 'List the trace deletions still under way, newest first (those of one trace with traceId)',
      query: z.object({ traceId: z.string().min(1).optional() }),
      response: z.object({ data: z.array(traceDeletion) }),
    },
    async ({ query, projectId }) => ({
      data: await pendingTraceDeletions(pool, projectId, query.traceId, PENDING_LIMIT),
    }),
  );
}

export const traceDeletionPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  const declare = projectRoutes(app, publicMount('/api/public', 'Trace'));
  traceDeletionRoutes(declare, ctx.pool);
  declare(
    {
      method: 'DELETE',
      path: '/traces',
      summary: 'Queue the deletion of up to 1000 traces with their observations, scores, comments and media',
      body: z.strictObject({
        traceIds: z
          .array(z.string().min(1))
          .min(1, 'At least 1 traceId is required.')
          .max(1000, 'Cannot specify more than 1000 traces in a single request.'),
      }),
      response: deleteTraceResponse,
    },
    async ({ body, projectId, req }) => {
      const queued = await enqueueTraceDeletion(ctx.pool, projectId, actorOf(req), body.traceIds);
      return { message: 'Traces deleted successfully', deletionId: queued.id };
    },
  );
};

/** Registered in the UI's project scope (server/app/web/ui-shell/plugin.ts), whose hook checks the project and the role. */
export const uiTraceDeletionPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  const owners = uiMount({ atLeast: 'owner', refusal: 'only owners delete traces' });
  traceDeletionRoutes(projectRoutes(app, owners), ctx.pool);
};
