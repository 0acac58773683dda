/**
 * The admission rules of the spec as CEL (`x-kubernetes-validations` on `.spec`). Each rule has a
 * stable reason and the field it blames; `operator/validation.ts` reports violations of the same
 * rules with the same reasons and messages, so kubectl and the Stalled condition read alike.
 * Every field the rules touch is an enum, a boolean or a bounded integer, which keeps the CEL cost tiny.
 */
import { ENV_DEFAULTS } from '../../server/contract/env.ts';
import type { CelRule } from './schema.ts';

/** Longest object name whose children (`<name>-worker` Services, DNS labels) stay valid. */
export const MAX_NAME_LENGTH = 56;

export interface SpecRule {
  /** Stable CamelCase reason (also used by the reconciler's validation). */
  reason: string;
  /** The field blamed, as a path from the object root. */
  field: string;
  message: string;
  cel: string;
  /** Uses oldSelf: evaluated by the API server on updates only. */
  transition?: boolean;
}

const mode = (m: string) => `(has(self.writeMode) && self.writeMode == '${m}')`;
const autoscaled = 'has(self.worker) && has(self.worker.autoscaling) && self.worker.autoscaling.enabled';
const ingestionLog = 'has(self.blobStorage) && has(self.blobStorage.ingestionLog)';

export const SPEC_RULES: readonly SpecRule[] = [
  {
    reason: 'EventsOnlyRequiresDirectOtel',
    field: 'spec.nativeOtelBehaviour',
    message: 'spec.nativeOtelBehaviour must be Direct (or unset) when spec.writeMode is EventsOnly',
    cel: `!(${mode('EventsOnly')} && has(self.nativeOtelBehaviour) && self.nativeOtelBehaviour == 'DualWrite')`,
  },
  {
    reason: 'EventsOnlyRequiresPreviewOptIn',
    field: 'spec.allowPreviewOptIn',
    message: 'spec.allowPreviewOptIn must be true when spec.writeMode is EventsOnly',
    cel: `!(${mode('EventsOnly')} && has(self.allowPreviewOptIn) && !self.allowPreviewOptIn)`,
  },
  {
    reason: 'LegacyForbidsBackfill',
    field: 'spec.backfill.enabled',
    message:
      'spec.backfill.enabled must be false (or unset) when spec.writeMode is Legacy: the backfill runs once and must start only after dual write is active',
    cel: `!(${mode('Legacy')} && has(self.backfill) && has(self.backfill.enabled) && self.backfill.enabled)`,
  },
  {
    reason: 'Release3OnlyLegacy',
    field: 'spec.writeMode',
    message: 'spec.writeMode must be unset or Legacy when spec.release is "3"',
    cel: `self.release != '3' || !has(self.writeMode) || self.writeMode == 'Legacy'`,
  },
  {
    reason: 'WriteModeRequired',
    field: 'spec.writeMode',
    message: 'spec.writeMode is required when spec.release is "4" (Legacy, Dual or EventsOnly)',
    cel: `self.release != '4' || has(self.writeMode)`,
  },
  {
    reason: 'CleanupRequiresEventsOnly',
    field: 'spec.cleanup.truncateLegacyTables',
    message: 'spec.cleanup.truncateLegacyTables may be true only when spec.writeMode is EventsOnly',
    cel: `!(has(self.cleanup) && has(self.cleanup.truncateLegacyTables) && self.cleanup.truncateLegacyTables) || ${mode('EventsOnly')}`,
  },
  {
    reason: 'AutoscalingNeedsIngestionLog',
    field: 'spec.worker.autoscaling.enabled',
    message:
      'spec.worker.autoscaling.enabled needs spec.blobStorage.ingestionLog: the workers are scaled on its backlog',
    cel: `!(${autoscaled}) || (${ingestionLog})`,
  },
  {
    reason: 'AutoscalingTargetAboveBacklogBound',
    field: 'spec.worker.autoscaling.targetBacklogAgeSeconds',
    message: `spec.worker.autoscaling.targetBacklogAgeSeconds must be below spec.blobStorage.ingestionLog.backlogMaxAgeSeconds (default ${ENV_DEFAULTS.ingestionBacklogMaxAgeSeconds}): past that bound the web refuses writes before more workers could help`,
    cel: `!(${autoscaled}) || !(${ingestionLog}) || !has(self.worker.autoscaling.targetBacklogAgeSeconds) || self.worker.autoscaling.targetBacklogAgeSeconds < (has(self.blobStorage.ingestionLog.backlogMaxAgeSeconds) ? self.blobStorage.ingestionLog.backlogMaxAgeSeconds : ${ENV_DEFAULTS.ingestionBacklogMaxAgeSeconds})`,
  },
  {
    reason: 'EventsOnlyIsFinal',
    field: 'spec.writeMode',
    message: 'spec.writeMode cannot change once it is EventsOnly: the cutover is the point of commitment',
    cel: `!has(oldSelf.writeMode) || oldSelf.writeMode != 'EventsOnly' || ${mode('EventsOnly')}`,
    transition: true,
  },
  {
    reason: 'NoRollbackAfterEventsOnly',
    field: 'spec.release',
    message:
      'spec.release cannot go back to "3" once spec.writeMode was EventsOnly: data written since exists only in the new tables',
    cel: `!has(oldSelf.writeMode) || oldSelf.writeMode != 'EventsOnly' || self.release == '4'`,
    transition: true,
  },
];

/**
 * Rows in flight at once (chunkRows x concurrency): beyond this one backfill Job could hold more of
 * the analytics store's memory than a node has, whatever each field allows alone.
 */
export const MAX_BACKFILL_ROWS_IN_FLIGHT = 20_000_000;

/** The cross-field rule of `spec.backfill` (both fields are defaulted, so CEL sees them). */
export const BACKFILL_WIDTH_RULE: CelRule = {
  rule: `!has(self.chunkRows) || !has(self.concurrency) || self.chunkRows * self.concurrency <= ${MAX_BACKFILL_ROWS_IN_FLIGHT}`,
  message: `spec.backfill.chunkRows x spec.backfill.concurrency must be at most ${MAX_BACKFILL_ROWS_IN_FLIGHT} rows in flight`,
  fieldPath: '.concurrency',
  reason: 'FieldValueInvalid',
};

/** The rules as the CRD carries them on `.spec` (field paths relative to it). */
export const spec: CelRule[] = SPEC_RULES.map((r) => ({
  rule: r.cel,
  message: r.message,
  fieldPath: r.field.replace(/^spec/, ''),
  reason: 'FieldValueForbidden',
}));
