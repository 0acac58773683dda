/**
 * The web UI's sessions and users lists (`/api/ui/projects/:projectId/sessions|users`, members),
 * derived from `events_core` and so gated like the observations table on the version 4 read path;
 * their version 3 experience (`.../legacy/sessions|users`) from the legacy `traces` and
 * `observations`, served in `legacy` and `dual` and 404 in `events_only`; and the background
 * migrations page (`/api/ui/migration`, owners): the write mode, the
 * historic backfill's steps as the worker and `observatory backfill` record them with the command
 * and the operator annotation that retry a failed one, the propagation report the worker's stuck
 * probe gives the operator, and the producers `events_only` would refuse or change. Read-only.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { BackfillManager } from '../../backfill/manager.ts';
import { parseDuration } from '../../contract/duration.ts';
import { ANNOTATIONS, annotateCommand, backfillRetryCommand } from '../../contract/retries.ts';
import { DEFAULT_PRODUCERS_SINCE } from '../../contract/worker-api.ts';
import { behaviourOf } from '../../contract/write-modes.ts';
import { upgradeAdvice } from '../../producers/advice.ts';
import { producersSince } from '../../producers/recorder.ts';
import { buildGroupingList, GROUPINGS, groupingCursor, mapGroupingRow } from '../../reads/groupings.ts';
import { buildLegacyGroupingList } from '../../reads/legacy-groupings.ts';
import { dialectOf } from '../../runtime/schema.ts';
import { projectsOf } from '../../users/store.ts';
import { propagationReport, propagationWatched } from '../../worker/propagation/report.ts';
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

/**
 * The two read paths of the lists: version 4 over `events_core`, and the version 3 experience over
 * the legacy tables, gated like the deprecated public reads (404 in `events_only`). One row shape.
 */
const LIST_PATHS = {
  v4: { gate: 'v4-reads', prefix: '', from: 'observations', build: buildGroupingList },
  v3: { gate: 'deprecated', prefix: 'legacy/', from: 'legacy traces', build: buildLegacyGroupingList },
} as const;

export const uiListsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  // The web does not know when the worker started: a propagation that never completed a run is
  // judged from this process's start, as the worker judges it from its own.
  const startedAt = Date.now();
  requireUiSession(app, ctx);
  app.addHook('onRequest', modeGate(ctx));

  for (const grouping of GROUPINGS) {
    for (const path of ['v4', 'v3'] as const) {
      const { gate, prefix, from, build } = LIST_PATHS[path];
      route(
        app,
        {
          method: 'GET',
          gate,
          url: `/api/ui/projects/:projectId/${prefix}${grouping}s`,
          tag: 'UI',
          summary: `A page of the project's ${grouping}s, derived from its ${from}`,
          params: z.object({ projectId: z.string().min(1) }),
          query: listQuery,
        },
        async ({ params, query, req }) => {
          const { id: projectId } = await projectAccess(ctx, req, params.projectId);
          const rows = await select(ctx, build({ projectId, grouping, ...query }));
          const cursor = groupingCursor(rows, query.limit);
          return {
            data: rows.slice(0, query.limit).map((r) => mapGroupingRow(grouping, r)),
            meta: cursor ? { cursor } : {},
          };
        },
      );
    }
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
      const operator = ctx.config.operatorObject;
      const manager = new BackfillManager({
        pool: ctx.pool,
        analytics: ctx.analytics,
        dialect: dialectOf(ctx.config),
        settings: mode,
        workerId: 'web',
      });
      const [steps, propagation, producers] = await Promise.all([
        manager.status(),
        ctx.coordination
          ? propagationReport(ctx.coordination, {
              enabled: propagationWatched(mode),
              processStartedAt: startedAt,
              thresholdMinutes: ctx.config.propagationStuckThresholdMinutes,
            })
          : null,
        mode.release === '4'
          ? producersSince(ctx.pool, new Date(Date.now() - parseDuration(DEFAULT_PRODUCERS_SINCE)!))
          : null,
      ]);
      return {
        release: mode.release,
        writeMode: mode.writeMode,
        allowPreviewOptIn: mode.allowPreviewOptIn,
        backfillMayRun: behaviourOf(mode).backfillMayRun,
        steps: steps.map((s) => ({
          ...s,
          retry:
            s.status === 'failed'
              ? {
                  command: backfillRetryCommand(s.step),
                  annotation: ANNOTATIONS.retryBackfill,
                  value: String(s.step),
                  kubectl: operator
                    ? annotateCommand(
                        operator.name,
                        ANNOTATIONS.retryBackfill,
                        String(s.step),
                        operator.namespace,
                      )
                    : null,
                }
              : null,
        })),
        propagation,
        producers: producers && {
          since: producers.since,
          window: DEFAULT_PRODUCERS_SINCE,
          data: producers.producers.map((p) => ({ ...p, advice: upgradeAdvice(p) })),
        },
      };
    },
  );
};
