/**
 * Deprecated reads of traces, observations and sessions from the version 3 tables: served in
 * `legacy` and `dual`, 404 in `events_only` (the spec's endpoint table).
 */
import { z } from 'zod';
import { found, notFound } from '../../../platform/http/answers.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import { familyPlugin, publicMount } from '../../../platform/http/project-routes.ts';
import { q } from '../../../platform/http/route.ts';
import {
  buildObservationById,
  buildObservationList,
  buildObservationsOfTrace,
  buildScoresOfTrace,
  buildSessionList,
  buildSessionTraces,
  buildTraceAggregates,
  buildTraceById,
  buildTraceList,
  htmlPath,
  mapLegacyObservation,
  mapTrace,
  traceLatency,
} from '../legacy.ts';
import { mapScoreLegacy } from '../scores.ts';
import { type Row, runPaged, select } from '../select.ts';

const page = q.page(1000, 50);

/** The trace list's filters, as the public API and the UI's version 3 traces table take them. */
export const traceFilters = {
  userId: z.string().optional(),
  name: z.string().optional(),
  sessionId: z.string().optional(),
  ...q.timeRange(),
};

/** A trace of the legacy tables with its observations and scores, or undefined for none. */
export async function legacyTrace(ctx: RouteContext, projectId: string, traceId: string) {
  const [trace] = await select(ctx, buildTraceById(projectId, traceId));
  if (!trace) return undefined;
  const [observations, scores] = await Promise.all([
    select(ctx, buildObservationsOfTrace(projectId, traceId)),
    select(ctx, buildScoresOfTrace(projectId, traceId)),
  ]);
  return { trace, observations, scores };
}

export const legacyReadsPlugin = familyPlugin(
  publicMount('/api/public', 'Legacy', 'deprecated'),
  (legacy, ctx) => {
    legacy(
      {
        method: 'GET',
        path: '/traces',
        summary: 'Traces (deprecated; 404 in events_only)',
        query: z.object({
          ...page,
          ...traceFilters,
          orderBy: z.string().optional(),
          tags: q.many(),
          version: z.string().optional(),
          release: z.string().optional(),
          environment: q.many(),
        }),
      },
      async ({ query, projectId }) => {
        const { rows, meta } = await runPaged(ctx, buildTraceList({ ...query, projectId }), query);
        const ids = rows.map((r) => String(r['id']));
        const aggs = new Map<string, Row>();
        const scoreIds = new Map<string, string[]>();
        if (ids.length > 0) {
          const qs = buildTraceAggregates(projectId, ids);
          const [obs, scores] = await Promise.all([select(ctx, qs.observations), select(ctx, qs.scores)]);
          for (const a of obs) aggs.set(String(a['trace_id']), a);
          for (const s of scores) scoreIds.set(String(s['trace_id']), s['ids'] as string[]);
        }
        return {
          data: rows.map((r) => {
            const id = String(r['id']);
            const agg = aggs.get(id);
            return {
              ...mapTrace(r),
              htmlPath: htmlPath(projectId, id),
              latency: traceLatency(agg),
              totalCost: agg ? Number(agg['cost']) : 0,
              observations: (agg?.['ids'] as string[] | undefined) ?? [],
              scores: scoreIds.get(id) ?? [],
            };
          }),
          meta,
        };
      },
    );

    legacy(
      {
        method: 'GET',
        path: '/traces/:id',
        summary: 'A trace with its observations and scores (deprecated)',
      },
      async ({ params, projectId }) => {
        const { trace, observations, scores } = found(
          await legacyTrace(ctx, projectId, params.id),
          'Trace',
          params.id,
        );
        const mapped = observations.map(mapLegacyObservation);
        const starts = mapped.map((o) => Date.parse(o['startTime'] as string));
        const ends = mapped.map((o) => Date.parse((o['endTime'] ?? o['startTime']) as string));
        return {
          ...mapTrace(trace),
          htmlPath: htmlPath(projectId, params.id),
          latency: mapped.length > 0 ? (Math.max(...ends) - Math.min(...starts)) / 1000 : null,
          totalCost: mapped.reduce((s, o) => s + Number(o['calculatedTotalCost'] ?? 0), 0),
          observations: mapped,
          scores: scores.map(mapScoreLegacy),
        };
      },
    );

    legacy(
      {
        method: 'GET',
        path: '/observations',
        summary: 'Observations (deprecated; 404 in events_only)',
        query: z.object({
          ...page,
          name: z.string().optional(),
          userId: z.string().optional(),
          type: z.string().optional(),
          traceId: z.string().optional(),
          level: z.string().optional(),
          parentObservationId: z.string().optional(),
          environment: q.many(),
          fromStartTime: q.datetime().optional(),
          toStartTime: q.datetime().optional(),
          version: z.string().optional(),
        }),
      },
      async ({ query, projectId }) => {
        const { rows, meta } = await runPaged(ctx, buildObservationList({ ...query, projectId }), query);
        return { data: rows.map(mapLegacyObservation), meta };
      },
    );

    legacy.lookup(
      { path: '/observations/:id', summary: 'One observation (deprecated)' },
      'Observation',
      async ({ params, projectId }) => (await select(ctx, buildObservationById(projectId, params.id)))[0],
      mapLegacyObservation,
    );

    legacy(
      {
        method: 'GET',
        path: '/sessions',
        summary: 'Sessions (deprecated; 404 in events_only)',
        query: z.object({
          ...page,
          ...q.timeRange(),
          environment: q.many(),
        }),
      },
      async ({ query, projectId }) => {
        const { rows, meta } = await runPaged(ctx, buildSessionList({ ...query, projectId }), query);
        return {
          data: rows.map((r) => ({
            id: r['id'],
            createdAt: new Date(Date.parse(`${String(r['created_at']).replace(' ', 'T')}Z`)).toISOString(),
            projectId,
            environment: r['session_environment'],
          })),
          meta,
        };
      },
    );

    legacy(
      {
        method: 'GET',
        path: '/sessions/:id',
        summary: 'A session with its traces (deprecated)',
      },
      async ({ params, projectId }) => {
        const traces = await select(ctx, buildSessionTraces(projectId, params.id));
        if (traces.length === 0) throw notFound('Session', params.id);
        const mapped = traces.map(mapTrace);
        return {
          id: params.id,
          createdAt: mapped[0]!['timestamp'],
          projectId,
          environment: mapped[0]!['environment'],
          traces: mapped,
        };
      },
    );
  },
);
