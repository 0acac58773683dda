/**
 * The worker's Prometheus registry: process metrics and the dual-write propagation's progress,
 * which the chart's alerts read (propagation stuck: a backlog that does not drain, or no
 * successful run for longer than the stuck threshold).
 */
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { DrainReport } from '../../features/ingestion/log/drain.ts';
import type { Backlog } from '../../features/ingestion/log/queue.ts';
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
  const log = (name: string, help: string) => new Gauge({ name, help, registers: [registry] });
  const pendingFiles = log('observatory_ingestion_log_pending_files', 'Ingestion log files not yet drained');
  const pendingBytes = log(
    'observatory_ingestion_log_pending_bytes',
    'Bytes of ingestion log files not yet drained',
  );
  const oldestAge = log(
    'observatory_ingestion_log_oldest_pending_age_seconds',
    'Seconds since the oldest undrained write was accepted (0: none pending)',
  );
  const refusedFiles = log(
    'observatory_ingestion_log_refused_files',
    'Ingestion log files the analytics store refused, pending and retried (left out of the oldest age)',
  );
  const drained = (name: string, help: string) => new Counter({ name, help, registers: [registry] });
  const drainedFiles = drained(
    'observatory_ingestion_log_drained_files_total',
    'Log files this worker drained',
  );
  const drainedRows = drained(
    'observatory_ingestion_log_drained_rows_total',
    'Rows this worker wrote from the log',
  );
  const redeliveries = drained(
    'observatory_ingestion_log_redeliveries_total',
    'Log files claimed again after an earlier claim did not drain them',
  );
  const drainFailures = drained(
    'observatory_ingestion_log_drain_failures_total',
    'Log files whose write failed (retried) or that were given up on (missing or unreadable)',
  );
  return {
    registry,
    onIngestionDrain(r: DrainReport) {
      drainedFiles.inc(r.files);
      drainedRows.inc(r.rows);
      redeliveries.inc(r.redeliveries);
      drainFailures.inc(r.failed + r.dead);
    },
    onIngestionBacklog(b: Backlog) {
      pendingFiles.set(b.files);
      pendingBytes.set(b.bytes);
      oldestAge.set(b.oldestAgeSeconds);
      refusedFiles.set(b.refused);
    },
    onPropagation(m: PropagationMetrics) {
      backlog.set(m.backlog);
      if (m.lastProcessedDelaySeconds !== null) delay.set(m.lastProcessedDelaySeconds);
      lastSuccess.set(m.lastSuccessAt / 1000);
    },
  };
}
