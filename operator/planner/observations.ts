/**
 * What the runtime must observe for this object beyond its informers, so it probes the worker
 * only when the answer matters (the probes and reports feed the cutover gates and the backfill).
 */
import { backfillEnabled, desiredState, withDefaults } from '../api/effective.ts';
import type { ObservabilityService } from '../api/v1alpha1.ts';
import { STUCK_PROBE_PATH } from '../render/workloads.ts';

export interface ObservationsNeeded {
  /** GET this path on port 3030 of every worker pod -> World.workerProbes (200 healthy, 503 stuck, else unreachable). */
  workerProbePath?: string;
  /** GET /api/producers?since=<value> on the worker Service -> World.producers. */
  producersSince?: string;
  /** GET /api/backfill on the worker Service -> World.backfill. */
  backfill: boolean;
}

export function observationsNeeded(object: ObservabilityService): ObservationsNeeded {
  const spec = withDefaults(object.spec);
  const state = object.status?.state;
  const cutoverAhead = state === 'Dual' && desiredState(spec) === 'EventsOnly';
  return {
    ...(state === 'Dual' ? { workerProbePath: STUCK_PROBE_PATH } : {}),
    ...(cutoverAhead ? { producersSince: spec.cutover.producerQuietPeriod } : {}),
    backfill: (state === 'Dual' || state === 'EventsOnly') && backfillEnabled(spec),
  };
}
