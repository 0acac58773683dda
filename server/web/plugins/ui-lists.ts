/**
 * The web UI's sessions and users lists (`/api/ui/projects/:projectId/sessions|users`, members),
 * derived from `events_core` and so gated like the observations table on the version 4 read path,
 * and the background migrations page (`/api/ui/migration`, owners): the write mode and the
 * historic backfill's steps as the worker and `observatory backfill` record them. Read-only.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { BackfillManager } from '../../backfill/manager.ts';
import { behaviourOf } from '../../contract/write-modes.ts';
import { buildGroupingList, type Grouping, groupingCursor, mapGroupingRow } from '../../reads/groupings.ts';
import { dialectOf } from '../../runtime/schema.ts';
import { projectsOf } from '../../users/store.ts';
import { Forbidden } from '../errors.ts';
import { modeGate } from '../gates.ts';
import { q, route } from '../route.ts';
import { select } from '../select.ts';
import { requireUiSession } from '../ui-session.ts';
import type { PluginOptions } from './types.ts';
import { projectAccess } from './ui-projects.ts';

const listQuery = z.object({
  fromStartTime: q.datetime().optional(),
  toStartTime: q.datetime().optional(),
  cursor: z.string().optional(),
  limit: q.int(1, 200, 50),
});

export const uiListsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  requireUiSession(app, ctx);
  app.addHook('onRequest', modeGate(ctx));

  for (const grouping of ['session', 'user'] as Grouping[]) {
    route(
      app,
      {
        method: 'GET',
        gate: 'v4-reads',
        url: `/api/ui/projects/:projectId/${grouping}s`,
        tag: 'UI',
        summary: `A page of the project's ${grouping}s, derived from its observations`,
        params: z.object({ projectId: z.string().min(1) }),
        query: listQuery,
      },
      async ({ params, query, req }) => {
        const { id: projectId } = await projectAccess(ctx, req, params.projectId);
        const rows = await select(ctx, buildGroupingList({ projectId, grouping, ...query }));
        const cursor = groupingCursor(rows, query.limit);
        return {
          data: rows.slice(0, query.limit).map((r) => mapGroupingRow(grouping, r)),
          meta: cursor ? { cursor } : {},
        };
      },
    );
  }

  route(
    app,
    {
      method: 'GET',
      url: '/api/ui/migration',
      tag: 'UI',
      summary: 'The write mode and the historic backfill progress (owners)',
    },
    async ({ req }) => {
      const projects = await projectsOf(ctx.pool, req.session.user.id);
      if (!projects.some((p) => p.role === 'owner')) {
        throw new Forbidden('the background migrations page is for owners');
      }
      const mode = ctx.config.mode;
      const manager = new BackfillManager({
        pool: ctx.pool,
        analytics: ctx.analytics,
        dialect: dialectOf(ctx.config),
        settings: mode,
        workerId: 'web',
      });
      const steps = await manager.status();
      return {
        release: mode.release,
        writeMode: mode.writeMode,
        allowPreviewOptIn: mode.allowPreviewOptIn,
        backfillMayRun: behaviourOf(mode).backfillMayRun,
        steps: steps.map((s) => ({
          ...s,
          retryCommand: s.status === 'failed' ? `observatory backfill retry --step ${s.step}` : null,
        })),
      };
    },
  );
};
