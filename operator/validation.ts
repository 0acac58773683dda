/**
 * The reconciler's copy of the admission rules (G8): the same refusals as the CRD's CEL, for
 * clusters where a rule did not apply (CRD installed without it, objects stored before it), plus
 * the refusals only the status can justify (the point of no return). Mode combinations come from
 * the server's own rules module. Violations name a reason and a field path, never a value.
 */

import { KEEP_LAST_LIMITS } from '../server/contract/backup.ts';
import { parseDuration } from '../server/contract/duration.ts';
import { BACKFILL_LIMITS, type BackfillTuningKey, ENV_DEFAULTS, ENV_LIMITS } from '../server/contract/env.ts';
import { findViolations, type ModeSettings, type SettingKey } from '../server/contract/write-modes.ts';
import { backfillEnabled } from './api/effective.ts';
import {
  BACKFILL_WIDTH_RULE,
  MAX_BACKFILL_ROWS_IN_FLIGHT,
  MAX_NAME_LENGTH,
  SPEC_RULES,
} from './api/rules.ts';
import { OPERATOR_OWNED_ENV } from './api/template.ts';
import {
  AUTOSCALING_BOUNDS_RULE,
  BLOB_CREDENTIALS_RULE,
  JOB_TTL_LIMITS,
  type MigrationState,
  type ObjectMeta,
  type ObservabilityServiceSpec,
  type ObservabilityServiceStatus,
  REPLICA_LIMITS,
  SCALE_DOWN_STABILIZATION_LIMITS,
  TARGET_BACKLOG_AGE_LIMITS,
} from './api/v1alpha1.ts';
import { cronProblem, windowProblem } from './api/windows.ts';
import { SERVER_OTEL, SERVER_WRITE_MODE } from './render/settings.ts';

export interface SpecViolation {
  /** Stable CamelCase reason (the Stalled condition's reason when it is the first one). */
  reason: string;
  /** Path of the field to change, e.g. `spec.writeMode`. */
  field: string;
  message: string;
}

const SPEC_PATH: Record<SettingKey, string> = {
  release: 'spec.release',
  writeMode: 'spec.writeMode',
  nativeOtelBehaviour: 'spec.nativeOtelBehaviour',
  allowPreviewOptIn: 'spec.allowPreviewOptIn',
  enableHistoricBackfill: 'spec.backfill.enabled',
  dropPidTidSortingTables: 'spec.backfill.dropScratchTables',
};

const ruleByReason = new Map(SPEC_RULES.map((r) => [r.reason, r]));

/**
 * The spec's settings as the server would see them, with explicit values kept as written so an
 * explicit bad combination is caught; unset ones take their documented meaning.
 */
export function specModeSettings(spec: ObservabilityServiceSpec): ModeSettings {
  const mode = spec.writeMode ?? 'Legacy';
  return {
    release: spec.release,
    writeMode: SERVER_WRITE_MODE[mode],
    nativeOtelBehaviour: SERVER_OTEL[spec.nativeOtelBehaviour ?? (mode === 'Dual' ? 'DualWrite' : 'Direct')],
    allowPreviewOptIn: spec.allowPreviewOptIn ?? true,
    enableHistoricBackfill: backfillEnabled(spec),
    dropPidTidSortingTables: spec.backfill?.dropScratchTables ?? false,
  };
}

function add(out: SpecViolation[], v: SpecViolation): void {
  if (!out.some((o) => o.reason === v.reason && o.field === v.field)) out.push(v);
}

/** A violation of one of the CRD's rules, with the CRD's message. */
function fromRule(reason: string): SpecViolation {
  const r = ruleByReason.get(reason);
  if (!r) throw new Error(`no spec rule ${reason}`);
  return { reason, field: r.field, message: r.message };
}

export interface ValidationInput {
  meta?: Pick<ObjectMeta, 'name'>;
  spec: ObservabilityServiceSpec;
  /** The spec before this update, when known (the runtime may keep the last one it reconciled). */
  oldSpec?: ObservabilityServiceSpec;
  status?: ObservabilityServiceStatus;
}

export function validate({ meta, spec, oldSpec, status }: ValidationInput): SpecViolation[] {
  const out: SpecViolation[] = [];
  if (meta && meta.name.length > MAX_NAME_LENGTH) {
    add(out, {
      reason: 'NameTooLong',
      field: 'metadata.name',
      message: `metadata.name must be at most ${MAX_NAME_LENGTH} characters (children are named <name>-worker)`,
    });
  }
  const modeKnown = !(spec.release === '4' && spec.writeMode === undefined);
  if (!modeKnown) add(out, fromRule('WriteModeRequired'));

  // The mode combinations: the server's rules, blamed on the spec field the user wrote.
  for (const v of modeKnown ? findViolations(specModeSettings(spec)) : []) {
    const rule = ruleByReason.get(v.reason);
    if (rule) add(out, fromRule(v.reason));
    else {
      const field = SPEC_PATH[v.settings[v.settings.length - 1] ?? 'writeMode'];
      add(out, {
        reason: v.reason,
        field,
        message: v.rule.replace(/\{(\w+)\}/g, (_, k: SettingKey) => SPEC_PATH[k]),
      });
    }
  }
  if (spec.cleanup?.truncateLegacyTables && spec.writeMode !== 'EventsOnly')
    add(out, fromRule('CleanupRequiresEventsOnly'));

  // The template rules the CRD checks per field (the same messages as its CEL).
  for (const role of ['web', 'worker', 'jobs'] as const) {
    for (const e of spec[role]?.template?.env ?? [])
      if (OPERATOR_OWNED_ENV.includes(e.name))
        add(out, {
          reason: 'OperatorOwnedEnv',
          field: `spec.${role}.template.env`,
          message: `env ${e.name} is set by the operator from the spec and cannot be overridden`,
        });
  }
  for (const [purpose, bucket] of Object.entries(spec.blobStorage ?? {}))
    if ((bucket.accessKeyIdSecretRef === undefined) !== (bucket.secretAccessKeySecretRef === undefined))
      add(out, {
        reason: 'BlobCredentialsIncomplete',
        field: `spec.blobStorage.${purpose}`,
        message: BLOB_CREDENTIALS_RULE.message,
      });
  const destination = spec.backup?.destination;
  if (
    destination &&
    (destination.accessKeyIdSecretRef === undefined) !== (destination.secretAccessKeySecretRef === undefined)
  )
    add(out, {
      reason: 'BlobCredentialsIncomplete',
      field: 'spec.backup.destination',
      message: BLOB_CREDENTIALS_RULE.message,
    });
  if (spec.backup?.include?.length === 0)
    add(out, {
      reason: 'BackupIncludesNothing',
      field: 'spec.backup.include',
      message: 'spec.backup.include must name at least one of analytics, relational',
    });
  for (const role of ['web', 'worker'] as const) {
    const budget = spec[role]?.podDisruptionBudget;
    if (budget?.minAvailable !== undefined && budget.maxUnavailable !== undefined)
      add(out, {
        reason: 'DisruptionBudgetConflict',
        field: `spec.${role}.podDisruptionBudget`,
        message: 'set at most one of minAvailable and maxUnavailable',
      });
  }

  // The bounds the CRD's schema sets on the tuning fields (backfill, propagation), and the backfill's width.
  const ranged: Range[] = [
    ...(['chunkRows', 'throttleMs', 'concurrency'] as BackfillTuningKey[]).map(
      (k) =>
        [`spec.backfill.${k}`, spec.backfill?.[k], BACKFILL_LIMITS[k]] as [
          string,
          number | undefined,
          { min: number; max: number },
        ],
    ),
    ['spec.propagation.chunkRows', spec.propagation?.chunkRows, ENV_LIMITS.propagationChunkRows],
    ['spec.jobs.ttlSecondsAfterFinished', spec.jobs?.ttlSecondsAfterFinished, JOB_TTL_LIMITS],
    ['spec.backup.retention.keepLast', spec.backup?.retention?.keepLast, KEEP_LAST_LIMITS],
    ...ingestionLogRanges(spec),
    ...autoscalingRanges(spec),
  ];
  for (const [field, v, { min, max }] of ranged)
    if (v !== undefined && !(Number.isInteger(v) && v >= min && v <= max))
      add(out, {
        reason: 'OutOfRange',
        field,
        message: `${field} must be an integer between ${min} and ${max}`,
      });
  const b = spec.backfill;
  if (
    b?.chunkRows !== undefined &&
    b.concurrency !== undefined &&
    b.chunkRows * b.concurrency > MAX_BACKFILL_ROWS_IN_FLIGHT
  )
    add(out, {
      reason: 'BackfillTooWide',
      field: 'spec.backfill.concurrency',
      message: BACKFILL_WIDTH_RULE.message,
    });

  const scaling = spec.worker?.autoscaling;
  if (scaling && scaling.minReplicas !== undefined && scaling.minReplicas > scaling.maxReplicas)
    add(out, {
      reason: 'AutoscalingBoundsInverted',
      field: 'spec.worker.autoscaling.minReplicas',
      message: AUTOSCALING_BOUNDS_RULE.message,
    });
  if (scaling?.enabled) {
    const log = spec.blobStorage?.ingestionLog;
    if (!log) add(out, fromRule('AutoscalingNeedsIngestionLog'));
    const bound = log?.backlogMaxAgeSeconds ?? ENV_DEFAULTS.ingestionBacklogMaxAgeSeconds;
    if (log && scaling.targetBacklogAgeSeconds !== undefined && scaling.targetBacklogAgeSeconds >= bound)
      add(out, fromRule('AutoscalingTargetAboveBacklogBound'));
  }

  const schedule = spec.backup?.schedule;
  const scheduleProblem = schedule === undefined ? undefined : cronProblem(schedule);
  if (scheduleProblem)
    add(out, {
      reason: 'InvalidBackupSchedule',
      field: 'spec.backup.schedule',
      message: `spec.backup.schedule ${scheduleProblem}`,
    });
  const verifySchedule = spec.backup?.verify?.schedule;
  const verifyProblem = verifySchedule === undefined ? undefined : cronProblem(verifySchedule);
  if (verifyProblem)
    add(out, {
      reason: 'InvalidBackupSchedule',
      field: 'spec.backup.verify.schedule',
      message: `spec.backup.verify.schedule ${verifyProblem}`,
    });
  const verify = spec.backup?.verify;
  if (verify && verify.schedule === undefined && verify.afterEveryBackups === undefined)
    add(out, {
      reason: 'BackupVerifyEmpty',
      field: 'spec.backup.verify',
      message: 'spec.backup.verify must set schedule, afterEveryBackups or both',
    });
  const retention = spec.backup?.retention;
  if (retention && retention.keepLast === undefined && retention.maxAge === undefined)
    add(out, {
      reason: 'BackupRetentionEmpty',
      field: 'spec.backup.retention',
      message: 'spec.backup.retention must set keepLast, maxAge or both',
    });
  const maxAge = retention?.maxAge === undefined ? 1 : parseDuration(retention.maxAge);
  if (!maxAge)
    add(out, {
      reason: 'InvalidBackupRetention',
      field: 'spec.backup.retention.maxAge',
      message: 'spec.backup.retention.maxAge must be a duration above 0s (e.g. 30d)',
    });

  for (const [i, w] of (spec.maintenanceWindows ?? []).entries()) {
    const problem = windowProblem(w);
    if (problem) {
      const field = `spec.maintenanceWindows[${i}].${problem.field}`;
      add(out, { reason: 'InvalidMaintenanceWindow', field, message: `${field} ${problem.message}` });
    }
  }

  // Transition rules (what CEL checks with oldSelf).
  if (oldSpec?.writeMode === 'EventsOnly') {
    if (spec.writeMode !== 'EventsOnly') add(out, fromRule('EventsOnlyIsFinal'));
    if (spec.release === '3') add(out, fromRule('NoRollbackAfterEventsOnly'));
  }

  // Parking mid-cutover would leave the commitment half made; the status shows it, CEL cannot.
  if (spec.hibernate && cutoverInProgress(status))
    add(out, {
      reason: 'HibernationRefused',
      field: 'spec.hibernate',
      message:
        'spec.hibernate cannot be true while the cutover to EventsOnly is in progress: set it back to false, and hibernate once status.state is EventsOnly',
    });

  // The point of no return as the status records it, which CEL cannot see.
  if (committed(status)) {
    if (spec.release === '3') add(out, fromRule('NoRollbackAfterEventsOnly'));
    else if (spec.writeMode !== 'EventsOnly') add(out, fromRule('EventsOnlyIsFinal'));
  } else if (status?.state === 'Dual' && spec.writeMode === 'Legacy' && backfillStarted(status)) {
    add(out, {
      reason: 'NoLegacyAfterBackfill',
      field: 'spec.writeMode',
      message:
        'spec.writeMode cannot go back to Legacy once the backfill started: it runs once, and data written in Legacy afterwards would be missing from the new tables',
    });
  }
  return out;
}

/** The cutover's intent is recorded and its pass has not finished. */
export function cutoverInProgress(status: ObservabilityServiceStatus | undefined): boolean {
  return status?.target?.state === 'EventsOnly' && status.state !== 'EventsOnly';
}

type Range = [field: string, value: number | undefined, limits: { min: number; max: number }];

/** The ingestion log's bounds, from the server's contract. */
function ingestionLogRanges(spec: ObservabilityServiceSpec): Range[] {
  const log = spec.blobStorage?.ingestionLog;
  const at = 'spec.blobStorage.ingestionLog';
  return [
    [`${at}.backlogMaxAgeSeconds`, log?.backlogMaxAgeSeconds, ENV_LIMITS.ingestionBacklogMaxAgeSeconds],
    [`${at}.backlogMaxBytes`, log?.backlogMaxBytes, ENV_LIMITS.ingestionBacklogMaxBytes],
    [`${at}.retentionHours`, log?.retentionHours, ENV_LIMITS.ingestionLogRetentionHours],
  ];
}

function autoscalingRanges(spec: ObservabilityServiceSpec): Range[] {
  const a = spec.worker?.autoscaling;
  const at = 'spec.worker.autoscaling';
  return [
    [`${at}.minReplicas`, a?.minReplicas, REPLICA_LIMITS],
    [`${at}.maxReplicas`, a?.maxReplicas, REPLICA_LIMITS],
    [`${at}.targetBacklogAgeSeconds`, a?.targetBacklogAgeSeconds, TARGET_BACKLOG_AGE_LIMITS],
    [
      `${at}.scaleDownStabilizationSeconds`,
      a?.scaleDownStabilizationSeconds,
      SCALE_DOWN_STABILIZATION_LIMITS,
    ],
  ];
}

/** EventsOnly was reached or its intent recorded: there is no way back from here. */
export function committed(status: ObservabilityServiceStatus | undefined): boolean {
  const reached: (MigrationState | undefined)[] = [status?.state, status?.target?.state];
  return reached.includes('EventsOnly');
}

function backfillStarted(status: ObservabilityServiceStatus): boolean {
  return (status.backfill?.completedSteps ?? 0) > 0 || status.backfill?.currentJob !== undefined;
}
