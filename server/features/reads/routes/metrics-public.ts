/**
 * Metrics: `GET /api/public/v2/metrics?query=` over the events tables (and the score views), and
 * the deprecated v1 query and daily metrics over the version 3 tables (404 in events_only).
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { RouteContext } from '../../../platform/http/context.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { offsetOf, paged } from '../../../platform/http/project-routes.ts';
import { q, route } from '../../../platform/http/route.ts';
import { assembleDaily, buildDailyMetrics } from '../legacy.ts';
import { type MetricsView, parseMetricsQuery } from '../metrics.ts';
import { METRICS_V1_VIEWS, METRICS_V2_VIEWS } from '../metrics-views.ts';
import { select } from '../select.ts';
import { runMetricsQuery } from './metrics-query.ts';

const metricsQueryParam = z.object({ query: z.string().min(1).describe('JSON metrics query') });
const metricsResponse = z.object({ data: z.array(z.record(z.string(), z.unknown())) });

/** Runs one metrics query text against a set of views (v2 and the legacy v1 differ only in views). */
const runMetrics = (ctx: RouteContext, views: Record<string, MetricsView>, projectId: string, text: string) =>
  runMetricsQuery(ctx, views, projectId, parseMetricsQuery(text));

export const metricsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  route(
    app,
    {
      method: 'GET',
      gate: 'metrics-v2',
      url: '/api/public/v2/metrics',
      tag: 'Metrics v2',
      summary:
        'Aggregates over observations (events tables) or scores; high-cardinality group-bys are refused',
      query: metricsQueryParam,
      response: metricsResponse,
    },
    async ({ query, req }) => runMetrics(ctx, METRICS_V2_VIEWS, req.principal.projectId, query.query),
  );

  route(
    app,
    {
      method: 'GET',
      gate: 'deprecated',
      url: '/api/public/metrics',
      tag: 'Legacy',
      summary: 'Metrics query over the version 3 tables (deprecated; 404 in events_only)',
      query: metricsQueryParam,
      response: metricsResponse,
    },
    async ({ query, req }) => {
      return runMetrics(ctx, METRICS_V1_VIEWS, req.principal.projectId, query.query);
    },
  );

  route(
    app,
    {
      method: 'GET',
      gate: 'deprecated',
      url: '/api/public/metrics/daily',
      tag: 'Legacy',
      summary: 'Daily trace and observation counts, usage and cost by model (deprecated)',
      query: z.object({
        ...q.page(1000, 50),
        traceName: z.string().optional(),
        userId: z.string().optional(),
        tags: q.many(),
        environment: q.many(),
        ...q.timeRange(),
      }),
    },
    async ({ query, req }) => {
      const qs = buildDailyMetrics({ ...query, projectId: req.principal.projectId });
      const [traces, observations] = await Promise.all([
        select(ctx, qs.traces),
        select(ctx, qs.observations),
      ]);
      const days = assembleDaily(traces, observations);
      const start = offsetOf(query);
      return paged(query, days.slice(start, start + query.limit), days.length);
    },
  );
};
