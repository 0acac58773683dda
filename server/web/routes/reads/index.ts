/**
 * Every read route, registered by one call from the authenticated context of the web app. Each
 * route checks its own write-mode gate, so registration does not depend on the mode.
 */
import type { FastifyInstance } from 'fastify';
import type { WebContext } from '../../context.ts';
import { datasetRoutes } from './datasets.ts';
import { experimentRoutes } from './experiments.ts';
import { legacyRunRoutes } from './legacy-runs.ts';
import { legacyScoreAndMetricRoutes } from './legacy-scores-metrics.ts';
import { legacyTracingRoutes } from './legacy-tracing.ts';
import { metricsV2Routes } from './metrics-v2.ts';
import { observationsV2Routes } from './observations-v2.ts';
import { openApiRoutes } from './openapi.ts';
import { projectRoutes } from './projects.ts';
import { scoresV3Routes } from './scores-v3.ts';

export function readRoutes(app: FastifyInstance, ctx: WebContext): void {
  datasetRoutes(app, ctx);
  observationsV2Routes(app, ctx);
  scoresV3Routes(app, ctx);
  metricsV2Routes(app, ctx);
  experimentRoutes(app, ctx);
  legacyTracingRoutes(app, ctx);
  legacyScoreAndMetricRoutes(app, ctx);
  legacyRunRoutes(app, ctx);
  projectRoutes(app, ctx);
  openApiRoutes(app, ctx);
}
