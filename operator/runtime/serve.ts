/** The operator's own endpoints: `/healthz` and `/readyz` on one port, Prometheus `/metrics` on another. */
import { createServer, type Server } from 'node:http';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Sample, ServiceGauge, ServiceSeries } from './service-series.ts';

const OBJECT = ['namespace', 'name'] as const;

export function operatorMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const gauge = <L extends string>(name: string, help: string, labels: readonly L[]) =>
    new Gauge({ name, help, labelNames: [...OBJECT, ...labels], registers: [registry] });
  const gauges: Record<ServiceGauge, Gauge<string>> = {
    state: gauge(
      'observatory_service_state',
      'Observed migration state of each ObservabilityService (1 for the current state)',
      ['state'],
    ),
    condition: gauge(
      'observatory_service_condition',
      'Status of each condition of an ObservabilityService (1 for the current status)',
      ['condition', 'status'],
    ),
    backfillStepsCompleted: gauge(
      'observatory_backfill_steps_completed',
      'Historic backfill steps completed',
      [],
    ),
    backfillStepState: gauge(
      'observatory_backfill_step_state',
      'State of each historic backfill step as the operator sees its Job (1 for the current state)',
      ['step', 'state'],
    ),
    backfillStepChunksDone: gauge(
      'observatory_backfill_step_chunks_done',
      'Chunks of each historic backfill step done, as the worker reports them',
      ['step'],
    ),
    backfillStepChunksPlanned: gauge(
      'observatory_backfill_step_chunks_planned',
      'Chunks of each historic backfill step planned, as the worker reports them (0 before the step starts)',
      ['step'],
    ),
    cutoverBlockedSince: gauge(
      'observatory_cutover_blocked_since_timestamp_seconds',
      'Since when the requested cutover to EventsOnly waits for a gate (CutoverReady False); absent when not waiting',
      [],
    ),
    backupLastSuccess: gauge(
      'observatory_backup_last_success_timestamp_seconds',
      'When the latest scheduled backup completed (when the schedule began, before the first); absent without spec.backup.schedule',
      [],
    ),
    backupAllowedAge: gauge(
      'observatory_backup_allowed_age_seconds',
      'Age past which the latest successful backup is overdue for spec.backup.schedule (and its maintenance windows)',
      [],
    ),
  };
  return {
    registry,
    reconcileDuration: new Histogram({
      name: 'observatory_operator_reconcile_duration_seconds',
      help: 'Duration of one reconcile pass',
      labelNames: ['result'],
      registers: [registry],
    }),
    reconcileErrors: new Counter({
      name: 'observatory_operator_reconcile_errors_total',
      help: 'Reconcile passes that failed (retried with backoff)',
      labelNames: OBJECT,
      registers: [registry],
    }),
    leader: new Gauge({
      name: 'observatory_operator_leader',
      help: 'Whether this operator process holds the leader Lease and reconciles (1) or stands by (0)',
      registers: [registry],
    }),
    probeFailures: new Counter({
      name: 'observatory_operator_probe_failures_total',
      help: 'Worker propagation probes that were not healthy',
      labelNames: ['namespace', 'name', 'result'],
      registers: [registry],
    }),
    objects: objectSeries(gauges),
  };
}

/**
 * Sets one object's series from a pass, removing those the pass no longer yields (a step that
 * moved on, a condition gone), and forgets an object that was deleted. Only samples whose value
 * changed are set: most passes change none.
 */
function objectSeries(gauges: Record<ServiceGauge, Gauge<string>>) {
  const current = new Map<string, Map<string, Sample>>();
  const labelsOf = (namespace: string, name: string, s: Sample) => ({ namespace, name, ...s.labels });
  const idOf = (s: Sample) => `${s.gauge} ${JSON.stringify(s.labels)}`;
  return {
    record(namespace: string, name: string, series: ServiceSeries) {
      const key = `${namespace}/${name}`;
      const previous = current.get(key) ?? new Map<string, Sample>();
      const next = new Map<string, Sample>();
      for (const [id, p] of previous) if (!series.replaces.includes(p.gauge)) next.set(id, p);
      for (const s of series.samples) next.set(idOf(s), s);
      for (const [id, p] of previous) if (!next.has(id)) gauges[p.gauge].remove(labelsOf(namespace, name, p));
      for (const [id, s] of next)
        if (previous.get(id)?.value !== s.value) gauges[s.gauge].set(labelsOf(namespace, name, s), s.value);
      current.set(key, next);
    },
    forget(namespace: string, name: string) {
      const key = `${namespace}/${name}`;
      for (const p of current.get(key)?.values() ?? []) gauges[p.gauge].remove(labelsOf(namespace, name, p));
      current.delete(key);
    },
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
