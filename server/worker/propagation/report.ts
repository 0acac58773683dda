/**
 * The propagation report of the worker's stuck probe (`/api/health?failIfEventPropagationStuck=true`,
 * what the operator reads) from the record the propagation job keeps in the coordination store.
 * The web's migration page reads the same record into the same report.
 */
import type { PropagationHealth } from '../../contract/worker-api.ts';
import type { ModeSettings } from '../../contract/write-modes.ts';
import { behaviourOf } from '../../contract/write-modes.ts';
import type { Coordination } from '../../coordination/store.ts';
import { evaluatePropagation, type PropagationRecord } from './health.ts';
import { readRecord } from './job.ts';

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
