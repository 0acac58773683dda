/**
 * The worker's Prometheus registry: process metrics and the dual-write propagation's progress,
 * which the chart's alerts read (propagation stuck: a backlog that does not drain, or no
 * successful run for longer than the stuck threshold).
 */
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { PropagationMetrics } from './propagation/job.ts';

export function workerMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const backlog = new Gauge({
    name: 'observatory_event_propagation_partition_backlog',
    help: 'Staging partitions not yet propagated to events_full',
    registers: [registry],
  });
  const delay = new Gauge({
    name: 'observatory_event_propagation_last_processed_partition_delay_seconds',
    help: 'Seconds between the end of the last propagated partition and now',
    registers: [registry],
  });
  const lastSuccess = new Gauge({
    name: 'observatory_event_propagation_last_success_timestamp_seconds',
    help: 'When this worker last finished a propagation run successfully (0: never; only the lease holder runs)',
    registers: [registry],
  });
  return {
    registry,
    onPropagation(m: PropagationMetrics) {
      backlog.set(m.backlog);
      if (m.lastProcessedDelaySeconds !== null) delay.set(m.lastProcessedDelaySeconds);
      lastSuccess.set(m.lastSuccessAt / 1000);
    },
  };
}
