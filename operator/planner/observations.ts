/**
 * What the runtime must observe for this object beyond its informers, so it probes the worker
 * only when the answer matters (the probes and reports feed the cutover gates, the backfill and the
 * worker autoscaler).
 */

import { PROPAGATION_PROBE_PATH } from '../../server/contract/worker-api.ts';
import { backfillEnabled, desiredState, withDefaults, workerAutoscaling } from '../api/effective.ts';
import type { ObservabilityService } from '../api/v1alpha1.ts';

export interface ObservationsNeeded {
  /** GET this path on the worker port of every worker pod -> World.workerProbes (200 healthy, 503 stuck, else unreachable). */
  workerProbePath?: string;
  /** GET /api/producers?since=<value> on the worker Service -> World.producers. */
  producersSince?: string;
  /** GET /api/backfill on the worker Service -> World.backfill. */
  backfill: boolean;
  /** GET /api/ingestion/backlog on a worker -> World.ingestionBacklog (autoscaler, hibernation drain). */
  ingestionBacklog: boolean;
  /** GET /api/job-results on a worker -> World.jobResults (the preflight, schema and cleanup Jobs'). */
  jobResults: boolean;
}

export function observationsNeeded(object: ObservabilityService): ObservationsNeeded {
  const spec = withDefaults(object.spec);
  const status = object.status;
  const state = status?.state;
  const cutoverAhead = state === 'Dual' && desiredState(spec) === 'EventsOnly';
  const target = status?.target;
  // A target naming the running state and image is a pass that ended (a rolled-back upgrade's too).
  const passing = target !== undefined && (target.state !== state || target.image !== status?.deployedImage);
  return {
    ...(state === 'Dual' ? { workerProbePath: PROPAGATION_PROBE_PATH } : {}),
    ...(cutoverAhead ? { producersSince: spec.cutover.producerQuietPeriod } : {}),
    backfill: (state === 'Dual' || state === 'EventsOnly') && backfillEnabled(spec),
    // The autoscaler's input, and the drain a hibernation waits for.
    ingestionBacklog:
      workerAutoscaling(spec) !== undefined ||
      (spec.hibernate && status?.hibernation?.phase === 'Draining' && !!spec.blobStorage?.ingestionLog),
    // A pass before its schema is migrated runs the preflight and schema Jobs; then the cleanup's.
    jobResults:
      (passing && !target.schemaMigrated) ||
      (state === 'EventsOnly' && !!spec.cleanup?.truncateLegacyTables && !status?.legacyTablesTruncated),
  };
}
