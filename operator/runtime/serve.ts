/** The operator's own endpoints: `/healthz` and `/readyz` on one port, Prometheus `/metrics` on another. */
import { createServer, type Server } from 'node:http';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export function operatorMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    reconcileDuration: new Histogram({
      name: 'observatory_operator_reconcile_duration_seconds',
      help: 'Duration of one reconcile pass',
      labelNames: ['result'],
      registers: [registry],
    }),
    state: new Gauge({
      name: 'observatory_service_state',
      help: 'Observed migration state of each ObservabilityService (1 for the current state)',
      labelNames: ['namespace', 'name', 'state'],
      registers: [registry],
    }),
    probeFailures: new Counter({
      name: 'observatory_operator_probe_failures_total',
      help: 'Worker propagation probes that were not healthy',
      labelNames: ['namespace', 'name', 'result'],
      registers: [registry],
    }),
    backfillSteps: new Gauge({
      name: 'observatory_backfill_steps_completed',
      help: 'Historic backfill steps completed',
      labelNames: ['namespace', 'name'],
      registers: [registry],
    }),
  };
}
export type OperatorMetrics = ReturnType<typeof operatorMetrics>;

export function serveHealth(port: number, ready: () => boolean, host = '0.0.0.0'): Promise<Server> {
  const server = createServer((req, res) => {
    const ok = req.url === '/healthz' || (req.url === '/readyz' && ready());
    res.writeHead(ok ? 200 : req.url === '/readyz' ? 503 : 404, { 'content-type': 'text/plain' });
    res.end(ok ? 'ok' : 'not ready');
  });
  return new Promise((resolve) => server.listen(port, host, () => resolve(server)));
}

export function serveMetrics(port: number, registry: Registry, host = '0.0.0.0'): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    void registry.metrics().then((text) => {
      res.writeHead(200, { 'content-type': registry.contentType });
      res.end(text);
    });
  });
  return new Promise((resolve) => server.listen(port, host, () => resolve(server)));
}
