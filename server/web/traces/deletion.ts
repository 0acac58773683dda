/**
 * Trace deletion (`DELETE /api/public/traces/{traceId}` and the bulk `DELETE /api/public/traces`),
 * served in every write mode: a trace's rows leave every table that can hold them, whichever mode
 * wrote them. As in the reference, an id the project does not hold is not an error (the call is
 * idempotent and never says whether an id exists elsewhere). The trace view's delete action is the
 * same deletion in the UI's project scope, for owners, audited with the signed-in user.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { deleteTraces, traceDeletionDeps } from '../../deletion/traces.ts';
import type { PluginOptions } from '../core/plugin-options.ts';
import { route } from '../core/route.ts';
import { projectParams } from '../ui-shell/scope.ts';

const deleteTraceResponse = z.object({ message: z.string() });

const depsOf = (ctx: PluginOptions['ctx']) =>
  traceDeletionDeps(ctx.config, { pool: ctx.pool, analytics: ctx.analytics, mediaBlobs: ctx.mediaBlobs });

export const traceDeletionPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  const deps = depsOf(ctx);

  route(
    app,
    {
      method: 'DELETE',
      url: '/api/public/traces/:traceId',
      tag: 'Trace',
      summary: 'Delete a trace with its observations, scores, comments and media',
      params: z.object({ traceId: z.string().min(1) }),
      response: deleteTraceResponse,
    },
    async ({ params, req }) => {
      await deleteTraces(deps, req.principal.projectId, { publicKey: req.principal.publicKey }, [
        params.traceId,
      ]);
      return { message: 'Trace deleted successfully' };
    },
  );

  route(
    app,
    {
      method: 'DELETE',
      url: '/api/public/traces',
      tag: 'Trace',
      summary: 'Delete up to 1000 traces with their observations, scores, comments and media',
      body: z.strictObject({
        traceIds: z
          .array(z.string().min(1))
          .min(1, 'At least 1 traceId is required.')
          .max(1000, 'Cannot specify more than 1000 traces in a single request.'),
      }),
      response: deleteTraceResponse,
    },
    async ({ body, req }) => {
      await deleteTraces(
        deps,
        req.principal.projectId,
        { publicKey: req.principal.publicKey },
        body.traceIds,
      );
      return { message: 'Traces deleted successfully' };
    },
  );
};

/** Registered in the UI's project scope (./ui.ts), whose hook checks the project and the role. */
export const uiTraceDeletionPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  const deps = depsOf(ctx);
  route(
    app,
    {
      method: 'DELETE',
      url: '/api/ui/projects/:projectId/traces/:traceId',
      tag: 'UI',
      summary: 'Delete a trace with its observations, scores, comments and media (owners)',
      role: { atLeast: 'owner', refusal: 'only owners delete traces' },
      params: projectParams.extend({ traceId: z.string().min(1) }),
      response: deleteTraceResponse,
    },
    async ({ params, req }) => {
      await deleteTraces(deps, req.project.id, { userId: req.session.user.id }, [params.traceId]);
      return { message: 'Trace deleted successfully' };
    },
  );
};
