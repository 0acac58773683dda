/**
 * The record the dual-write propagation job (worker) keeps in the coordination store, and the
 * report read from it: the worker's stuck probe (`/api/health?failIfEventPropagationStuck=true`,
 * what the operator reads) and the web's migration page show the same report.
 */
import type { PropagationHealth } from '../../contract/worker-api.ts';
import type { ModeSettings } from '../../contract/write-modes.ts';
import { behaviourOf } from '../../contract/write-modes.ts';
import type { Coordination } from '../../platform/coordination/store.ts';
import { evaluatePropagation, type PropagationRecord } from './propagation-health.ts';

/** Where the job keeps its lease and record. */
export const PROPAGATION_KEYS = {
  lease: 'observatory:event-propagation:lease',
  lastRunStartedAt: 'observatory:event-propagation:last-run-started-at',
  lastSuccessAt: 'observatory:event-propagation:last-success-at',
  cursor: 'observatory:event-propagation:last-processed-partition',
  /** The chunks of the partition after the cursor and how many committed (propagation/progress.ts). */
  chunks: 'observatory:event-propagation:chunk-progress',
  idle: 'observatory:event-propagation:idle',
  lastError: 'observatory:event-propagation:last-error',
} as const;

async function readRecord(c: Coordination): Promise<PropagationRecord> {
  const [run, success, cursor, idle, error] = await Promise.all([
    c.get(PROPAGATION_KEYS.lastRunStartedAt),
    c.get(PROPAGATION_KEYS.lastSuccessAt),
    c.get(PROPAGATION_KEYS.cursor),
    c.get(PROPAGATION_KEYS.idle),
    c.get(PROPAGATION_KEYS.lastError),
  ]);
  return {
    lastRunStartedAt: run === null ? null : Number(run),
    lastSuccessAt: success === null ? null : Number(success),
    lastProcessedPartition: cursor,
    idle: idle === '1',
    lastError: error && error.length > 0 ? error : null,
  };
}

const READ_TIMEOUT_MS = 2_000;

const UNREADABLE: PropagationRecord = {
  lastRunStartedAt: null,
  lastSuccessAt: null,
  lastProcessedPartition: null,
  idle: false,
  lastError: 'propagation state unreadable',
};

/** Whether a deployment in this mode propagates staged rows, and so is judged on it. */
export const propagationWatched = (mode: ModeSettings) => {
  const b = behaviourOf(mode);
  return b.runsPropagation && b.writesStaging;
};

export async function propagationReport(
  coordination: Coordination,
  o: { enabled: boolean; processStartedAt: number; thresholdMinutes: number },
): Promise<PropagationHealth> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<PropagationRecord>((resolve) => {
    timer = setTimeout(() => resolve(UNREADABLE), READ_TIMEOUT_MS);
  });
  const record = await Promise.race([readRecord(coordination).catch(() => UNREADABLE), timeout]).finally(() =>
    clearTimeout(timer),
  );
  return evaluatePropagation({ ...o, now: Date.now(), record });
}
