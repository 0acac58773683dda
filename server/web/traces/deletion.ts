/**
 * Trace deletion (`DELETE /api/public/traces/{traceId}` and the bulk `DELETE /api/public/traces`),
 * served in every write mode: a trace's rows leave every table that can hold them, whichever mode
 * wrote them. As in the reference, an id the project does not hold is not an error (the call is
 * idempotent and never says whether an id exists elsewhere). The trace view's delete action is the
 * same deletion in the UI's project scope, for owners, audited with the signed-in user.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { deleteTraces, type TraceDeletionDeps, traceDeletionDeps } from '../../deletion/traces.ts';
import { actorOf } from '../core/audit.ts';
import type { PluginOptions } from '../core/plugin-options.ts';
import { type Declare, projectRoutes, publicMount, uiMount } from '../core/project-routes.ts';

const deleteTraceResponse = z.object({ message: z.string() });

const depsOf = (ctx: PluginOptions['ctx']) =>
  traceDeletionDeps(ctx.config, { pool: ctx.pool, analytics: ctx.analytics, mediaBlobs: ctx.mediaBlobs });

/** The one-trace delete, declared once for the public API and the UI's project scope (owners). */
function traceDeletion(declare: Declare, deps: TraceDeletionDeps) {
  declare(
    {
      method: 'DELETE',
      path: '/traces/:traceId',
      summary: 'Delete a trace with its observations, scores, comments and media',
      response: deleteTraceResponse,
    },
    async ({ params, projectId, req }) => {
      await deleteTraces(deps, projectId, actorOf(req), [params.traceId]);
      return { message: 'Trace deleted successfully' };
    },
  );
}

export const traceDeletionPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  const deps = depsOf(ctx);
  const declare = projectRoutes(app, publicMount('/api/public', 'Trace'));
  traceDeletion(declare, deps);
  declare(
    {
      method: 'DELETE',
      path: '/traces',
      summary: 'Delete up to 1000 traces with their observations, scores, comments and media',
      body: z.strictObject({
        traceIds: z
          .array(z.string().min(1))
          .min(1, 'At least 1 traceId is required.')
          .max(1000, 'Cannot specify more than 1000 traces in a single request.'),
      }),
      response: deleteTraceResponse,
    },
    async ({ body, projectId, req }) => {
      await deleteTraces(deps, projectId, actorOf(req), body.traceIds);
      return { message: 'Traces deleted successfully' };
    },
  );
};

/** Registered in the UI's project scope (./ui.ts), whose hook checks the project and the role. */
export const uiTraceDeletionPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  const owners = uiMount({ atLeast: 'owner', refusal: 'only owners delete traces' });
  traceDeletion(projectRoutes(app, owners), depsOf(ctx));
};
