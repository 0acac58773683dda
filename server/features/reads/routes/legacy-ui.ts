/**
 * The version 3 experience of the web UI (`/api/ui/projects/:projectId/legacy/traces...`): the
 * traces table and the trace view over the legacy `traces`, `observations` and `scores` tables,
 * read by the same builders as the deprecated public endpoints (`GET /api/public/traces[/:id]`)
 * and gated like them: served in `legacy` and `dual`, 404 in `events_only`, where the pages read
 * only version 4. For users whose read path is version 3 (../../users/read-path.ts).
 */
import { z } from 'zod';
import { found } from '../../../platform/http/answers.ts';
import { familyPlugin, uiMount } from '../../../platform/http/project-routes.ts';
import { q } from '../../../platform/http/route.ts';
import { buildTraceAggregates, buildTraceList } from '../legacy.ts';
import { legacyTraceRow, legacyTraceView } from '../legacy-trace-view.ts';
import { buildRowScores } from '../row-scores.ts';
import { type Row, runPaged, select } from '../select.ts';
import { legacyTrace, traceFilters } from './legacy-public.ts';
import { matchedModel, modelsOfTrace, traceComments } from './ui-trace.ts';

export const uiLegacyTracesPlugin = familyPlugin(uiMount(), (declare, ctx) => {
  declare(
    {
      method: 'GET',
      gate: 'deprecated',
      path: '/legacy/traces',
      summary: 'A page of the traces table (version 3 experience)',
      query: z.object({
        ...q.page(200, 50),
        ...traceFilters,
        tags: q.many(),
      }),
    },
    async ({ query, projectId }) => {
      const { rows, meta } = await runPaged(ctx, buildTraceList({ ...query, projectId }), query);
      const ids = rows.map((r) => String(r['id']));
      const aggs = new Map<string, Row>();
      let scores: Row[] = [];
      if (ids.length > 0) {
        const [obs, s] = await Promise.all([
          select(ctx, buildTraceAggregates(projectId, ids).observations),
          select(ctx, buildRowScores(projectId, ids)),
        ]);
        for (const a of obs) aggs.set(String(a['trace_id']), a);
        scores = s;
      }
      return {
        data: rows.map((r) => legacyTraceRow(r, aggs.get(String(r['id'])), scores)),
        meta,
      };
    },
  );

  declare(
    {
      method: 'GET',
      gate: 'deprecated',
      path: '/legacy/traces/:traceId',
      summary: 'A trace with its observations, scores and comments (version 3 experience)',
    },
    async ({ params, projectId }) => {
      const [legacy, models] = await Promise.all([
        legacyTrace(ctx, projectId, params.traceId),
        modelsOfTrace(ctx, projectId),
      ]);
      const { trace, observations, scores } = found(legacy, 'trace', params.traceId);
      const view = legacyTraceView(trace, observations, scores).map((o) => ({
        ...o,
        matchedModel: 'modelId' in o ? matchedModel(models, o.modelId) : null,
      }));
      return {
        traceId: params.traceId,
        observations: view,
        comments: await traceComments(ctx, projectId, params.traceId, view.slice(1)),
        truncated: false,
      };
    },
  );
});
