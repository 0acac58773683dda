/** `GET /api/public/v2/metrics?query=` over the events tables (and the score views). */
import type { FastifyInstance } from 'fastify';
import { METRICS_V2_VIEWS } from '../../../reads/metrics-views.ts';
import type { WebContext } from '../../context.ts';
import { route } from '../../route.ts';
import { refuseUnlessMetricsV2 } from './common.ts';
import { metricsQueryParam, metricsResponse, runMetrics } from './metrics-run.ts';

export function metricsV2Routes(app: FastifyInstance, ctx: WebContext): void {
  route(
    app,
    {
      method: 'GET',
      url: '/api/public/v2/metrics',
      tag: 'Metrics v2',
      summary:
        'Aggregates over observations (events tables) or scores; high-cardinality group-bys are refused',
      query: metricsQueryParam,
      response: metricsResponse,
    },
    async ({ query, req, reply }) => {
      if (refuseUnlessMetricsV2(ctx, reply)) return;
      return runMetrics(ctx, METRICS_V2_VIEWS, req.principal.projectId, query.query);
    },
  );
}
