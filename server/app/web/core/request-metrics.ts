/**
 * The web's Prometheus metrics on `GET /metrics`: process metrics and every answered request by
 * route pattern (never the raw URL: ids would make a series each), method and status, so the
 * ingestion rates and their refusals (429, 503, 404 in a mode) can be read per endpoint. The route
 * is served by `metricsApp`: the API's own instance, or a listener of its own (`METRICS_PORT`).
 */
import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import type { MetricPointTally } from '../../../features/ingestion/otlp-metrics.ts';

export function instrumentRequests(
  app: FastifyInstance,
  metricsApp: FastifyInstance = app,
  registry: Registry = new Registry(),
): Registry {
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'observatory_web_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status code',
    labelNames: ['route', 'method', 'status_code'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'observatory_web_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route pattern and method',
    labelNames: ['route', 'method'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  app.addHook('onResponse', async (req, reply) => {
    // Unmatched URLs share one label value, whatever a client sends.
    const route = req.routeOptions.url ?? 'unmatched';
    requests.inc({ route, method: req.method, status_code: String(reply.statusCode) });
    duration.observe({ route, method: req.method }, reply.elapsedTime / 1000);
  });
  metricsApp.get('/metrics', async (_req, reply) =>
    reply.header('content-type', registry.contentType).send(await registry.metrics()),
  );
  return registry;
}

/**
 * The OTLP metric points the web received (HTTP and gRPC), by outcome: `stored` (the GenAI
 * metrics), `not_stored` (every other metric: accepted and counted only), `rejected` (partial success).
 */
export function metricPointsTally(registry: Registry): MetricPointTally {
  const points = new Counter({
    name: 'observatory_web_otlp_metric_points_total',
    help: 'OTLP metric data points received, by outcome: stored, not_stored (other metrics), rejected',
    labelNames: ['outcome'],
    registers: [registry],
  });
  return (outcome, n) => {
    points.inc({ outcome }, n);
  };
}
