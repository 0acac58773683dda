/** Deprecated score reads (v1 and v2 lists, one score by id); 404 in events_only. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { RouteContext } from '../../../platform/http/context.ts';
import { projectRoutes, publicMount } from '../../../platform/http/project-routes.ts';
import { q } from '../../../platform/http/route.ts';
import { buildScoreById, buildScoreList, buildTracesByIds } from '../../reads/legacy.ts';
import { orNull } from '../../reads/row-values.ts';
import { mapScoreLegacy } from '../../reads/scores.ts';
import { type Row, runPaged, select } from '../../reads/select.ts';

const scoreListQuery = z.object({
  ...q.page(100, 50),
  userId: z.string().optional(),
  name: z.string().optional(),
  ...q.timeRange(),
  environment: q.many(),
  source: z.string().optional(),
  operator: z.string().optional(),
  value: z.coerce.number().optional(),
  scoreIds: q.csv(),
  configId: z.string().optional(),
  sessionId: z.string().optional(),
  datasetRunId: z.string().optional(),
  traceId: z.string().optional(),
  observationId: q.csv(),
  queueId: z.string().optional(),
  dataType: z.string().optional(),
  traceTags: q.many(),
  fields: q.csv(),
});

export function legacyScoreRoutes(app: FastifyInstance, ctx: RouteContext): void {
  for (const prefix of ['/api/public', '/api/public/v2']) {
    const legacy = projectRoutes(app, publicMount(prefix, 'Legacy', 'deprecated'));
    legacy(
      {
        method: 'GET',
        path: '/scores',
        summary: 'Scores with their trace fields (deprecated; 404 in events_only)',
        query: scoreListQuery,
      },
      async ({ query, projectId }) => {
        const { rows, meta } = await runPaged(ctx, buildScoreList({ ...query, projectId }), query);
        const withTrace = !query.fields || query.fields.includes('trace');
        const traces = new Map<string, Row>();
        const traceIds = [
          ...new Set(rows.map((r) => orNull(r['trace_id'])).filter((t): t is string => t !== null)),
        ];
        if (withTrace && traceIds.length > 0) {
          for (const t of await select(ctx, buildTracesByIds(projectId, traceIds)))
            traces.set(String(t['id']), t);
        }
        return {
          data: rows.map((r) => {
            const t = traces.get(String(r['trace_id']));
            return {
              ...mapScoreLegacy(r),
              ...(withTrace && t
                ? {
                    trace: {
                      userId: orNull(t['user_id']) ?? undefined,
                      tags: t['tags'],
                      environment: t['environment'],
                      sessionId: orNull(t['session_id']) ?? undefined,
                    },
                  }
                : {}),
            };
          }),
          meta,
        };
      },
    );
    legacy.lookup(
      { path: '/scores/:id', summary: 'One score (deprecated)' },
      'Score',
      async ({ params, projectId }) => (await select(ctx, buildScoreById(projectId, params.id)))[0],
      mapScoreLegacy,
    );
  }
}
