/**
 * Whether the dual-write propagation is stuck (pure). Progress means a run that completed without
 * error: one that propagated partitions, or one that found none (idle is not stuck). A job whose
 * runs keep failing is stuck even though it keeps starting, and a job that never completed a run
 * counts as stuck once this worker has been up longer than the threshold.
 */
import type { PropagationHealth } from '../../contract/worker-api.ts';
import { partitionEndMs } from './staging.ts';

export interface PropagationRecord {
  lastRunStartedAt: number | null;
  lastSuccessAt: number | null;
  lastProcessedPartition: string | null;
  /** The last successful run found no completed partition to propagate. */
  idle: boolean;
  lastError: string | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const secondsSince = (now: number, ms: number | null) => (ms === null ? null : Math.round((now - ms) / 1000));

export function evaluatePropagation(input: {
  enabled: boolean;
  now: number;
  processStartedAt: number;
  thresholdMinutes: number;
  record: PropagationRecord;
}): PropagationHealth {
  const { enabled, now, record } = input;
  const thresholdSeconds = input.thresholdMinutes * 60;
  const sinceSuccess = secondsSince(now, record.lastSuccessAt);
  const sinceStart = secondsSince(now, input.processStartedAt) ?? 0;
  const stuck =
    enabled && (sinceSuccess === null ? sinceStart > thresholdSeconds : sinceSuccess > thresholdSeconds);
  const partitionEnd = record.lastProcessedPartition ? partitionEndMs(record.lastProcessedPartition) : null;
  return {
    enabled,
    stuck,
    idle: record.idle,
    lastRunStartedAt: iso(record.lastRunStartedAt),
    lastSuccessAt: iso(record.lastSuccessAt),
    secondsSinceLastRun: secondsSince(now, record.lastRunStartedAt),
    secondsSinceLastSuccess: sinceSuccess,
    lastProcessedPartition: record.lastProcessedPartition,
    propagationDelaySeconds:
      partitionEnd === null || Number.isNaN(partitionEnd) ? null : secondsSince(now, partitionEnd),
    thresholdSeconds,
    lastError: record.lastError,
  };
}
