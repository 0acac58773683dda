/**
 * The condition library (after Flux's runtime/conditions): every condition the operator writes
 * comes from one table that maps (type, reason) to its status and a message template, so a reason
 * and its message are derived from the same facts and cannot disagree. Writing a list keeps
 * lastTransitionTime while the status stays, stamps observedGeneration, and puts Ready,
 * Reconciling and Stalled first.
 */

import { SPEC_RULES } from '../api/rules.ts';
import type { Condition, ConditionType } from '../api/v1alpha1.ts';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** A message template: `{name}` placeholders filled from the facts. */
interface Entry {
  status: ConditionStatus;
  template: string;
}

const t = (status: ConditionStatus, template: string): Entry => ({ status, template });

const notInDual = t('Unknown', 'evaluated while the state is Dual');
const cutoverDone = t('True', 'the cutover to EventsOnly is recorded; it is final');
const notRequested = t('Unknown', 'spec.writeMode is not EventsOnly');

/** Reasons that stop progress until the user acts (kstatus Stalled), with the stall's own message. */
export const STALL_REASONS = [
  ...new Set([
    ...SPEC_RULES.map((r) => r.reason),
    'NameTooLong',
    'NoLegacyAfterBackfill',
    'InvalidSpec',
    'BackupNotConfirmed',
    'PreflightFailed',
    'UpgradeRefused',
    'UpgradeFailed',
    'MigrationFailed',
    'RollbackFailed',
    'BackfillStepFailed',
    'BackfillSourceTruncated',
    'CleanupFailed',
    'BackupFailed',
    'RestoreBackupUnknown',
    'RestoreModeMismatch',
    'RestoreFailed',
    'HibernationRefused',
    'InvalidBackupSchedule',
    'BackupRetentionEmpty',
    'BackupVerifyEmpty',
    'InvalidBackupRetention',
  ]),
];

export const CONDITIONS: Record<ConditionType, Record<string, Entry>> = {
  Ready: {
    Reconciled: t('True', 'state {state} reached and rolled out'),
    Progressing: t('False', '{detail}'),
    Stalled: t('False', 'stalled: {detail}'),
    Paused: t('False', 'spec.paused is true: no changes are made'),
    Hibernated: t('True', 'hibernated as spec.hibernate asks: {detail}'),
  },
  Reconciling: {
    Progressing: t('True', '{detail}'),
    NotReconciling: t('False', ''),
  },
  Stalled: {
    ...Object.fromEntries(STALL_REASONS.map((r) => [r, t('True', '{detail}')])),
    NotStalled: t('False', ''),
  },
  Paused: {
    SpecPaused: t('True', 'spec.paused is true'),
    NotPaused: t('False', 'spec.paused is false'),
  },
  PreflightPassed: {
    NotRequired: t('Unknown', 'runs before moving release "3" to "4"'),
    PreflightRunning: t('False', 'observatory preflight runs before the move to {to}: {detail}'),
    PreflightFailed: t('False', 'observatory preflight failed before the move to {to}: Job {job}'),
    PreflightSucceeded: t('True', 'observatory preflight passed for the move to {to}'),
    Release4Running: t('True', 'the deployment runs release 4'),
    UpgradeRefused: t('False', '{detail}'),
  },
  SchemaMigrated: {
    NoSchemaYet: t('Unknown', 'the first pass has not migrated the schema yet'),
    SchemaJobRunning: t('False', '{action} for {to}: {detail}'),
    SchemaJobFailed: t('False', '{action} for {to} failed: Job {job}'),
    SchemaUpToDate: t('True', 'the schema of {state} is in place'),
    UpgradeRollingBack: t(
      'False',
      'the migration to {image} failed ({why}): rewinding the analytics schema to version {version}; web and worker stay on {previous}: {detail}',
    ),
  },
  BackfillComplete: {
    BackfillDisabled: t('False', 'spec.backfill.enabled is false'),
    BackfillNotStarted: t('False', 'the backfill starts once the Dual rollout is complete'),
    BackfillRunning: t('False', 'step {step} of {total}{chunks}; {progress} done'),
    BackfillStepFailed: t('False', 'step {step} of {total} failed: Job {job}'),
    BackfillAwaitingWindow: t(
      'False',
      'step {step} of {total} starts in the next maintenance window ({opensAt}); {progress} done',
    ),
    AnalyticsStorePressure: t('False', 'step {step} of {total} is paused: {reason}; {progress} done'),
    BackfillSourceTruncated: t(
      'False',
      'the legacy tables were truncated: step {step} of {total} has no source',
    ),
    AllStepsFinished: t('True', 'all {total} backfill steps finished'),
  },
  BackupComplete: {
    NoBackupYet: t('Unknown', 'no backup taken yet; one runs before each irreversible step'),
    BackupTaken: t('True', 'backup {id} ({trigger}) complete: {objects} objects, {bytes} bytes'),
    BackupRunning: t('False', 'backup {id} before {step}: {detail}'),
    BackupFailed: t('False', 'backup {id} before {step} failed; {step} waits: {detail}'),
    BackupSkipped: t(
      'True',
      'spec.upgrade.backupConfirmed is true: the backup before {step} was taken outside the operator',
    ),
  },
  BackupScheduled: {
    ScheduleActive: t('True', 'next scheduled backup at {next}; latest successful: {last}; {kept}'),
    ScheduledBackupRunning: t('True', 'scheduled backup {id} runs: {detail}'),
    ScheduledBackupWaiting: t('True', 'the scheduled backup of {at} waits: {detail}'),
    ScheduledBackupFailed: t('False', 'scheduled backup {id} failed: {detail}; the next is at {next}'),
    RetentionFailed: t(
      'False',
      'the retention run after backup {id} failed: {detail}; the next backup retries it',
    ),
  },
  BackupVerified: {
    NotVerifiedYet: t('Unknown', 'no verification has finished yet: {detail}'),
    VerificationRunning: t('Unknown', 'verifying backup {id}: {detail}'),
    VerificationWaiting: t('Unknown', 'the verification of backup {id} waits: {detail}'),
    Verified: t(
      'True',
      'backup {id} restored into scratch databases and verified at {at}: {tables} tables, {rows}',
    ),
    RowsNotRecorded: t(
      'True',
      'backup {id} restored into scratch databases at {at} ({rows}); its manifest records no tables, so rows were not compared',
    ),
    VerificationFailed: t('False', 'backup {id} failed its verification at {at}: {detail}'),
  },
  Restored: {
    RestoreScalingDown: t('False', 'restoring backup {id}: {detail}'),
    RestoreRunning: t('False', 'restoring backup {id}: {detail}'),
    RestoreFailed: t('False', 'the restore of backup {id} failed: {detail}'),
    RestoreRefused: t('False', 'backup {id} is not restored: {detail}'),
    RestoreComplete: t(
      'True',
      'backup {id} restored at {at}; the deployment returned to release {release} in {writeMode}',
    ),
  },
  Hibernated: {
    Awake: t('False', 'spec.hibernate is false: web and worker run'),
    Waking: t('False', 'waking: web and worker roll out again in {state}'),
    HibernationWaiting: t('False', 'hibernation waits: {detail}'),
    Draining: t('False', 'hibernating since {since}: {detail}'),
    Hibernated: t(
      'True',
      'web and worker at zero since {at}; kept: state {state}, its settings and the backfill at {backfill}; set spec.hibernate: false to wake',
    ),
  },
  PropagationHealthy: {
    NotInDual: notInDual,
    CutoverDone: cutoverDone,
    AwaitingProbe: t('Unknown', 'no definite probe answer yet: {detail}'),
    WorkersHealthy: t('True', 'all {pods} worker pods report propagation healthy'),
    ProbeFailuresBelowThreshold: t(
      'True',
      '{detail}: {count} of spec.propagation.failureThreshold ({threshold}) consecutive failed probes',
    ),
    PropagationStuck: t(
      'False',
      'propagation stuck on {count} consecutive probes (spec.propagation.failureThreshold {threshold}): {pods}',
    ),
    ProbeUnanswered: t(
      'Unknown',
      'no definite answer on {count} consecutive probes (spec.propagation.failureThreshold {threshold}): {detail}',
    ),
  },
  ProducersCompatible: {
    NotInDual: notInDual,
    CutoverDone: cutoverDone,
    CutoverNotRequested: notRequested,
    ProducersUnknown: t('Unknown', 'the worker producer report is unavailable'),
    IncompatibleProducersSeen: t(
      'False',
      '{count} producer(s) EventsOnly would refuse were seen in the last {period}: {names}',
    ),
    NoIncompatibleProducers: t('True', 'no incompatible producer seen in the last {period}'),
    ProducersLosePropagation: t(
      'True',
      'no producer EventsOnly would refuse was seen in the last {period}; {count} OTLP producer(s) without client-side propagation will lose server-side propagation of trace attributes: {names}',
    ),
  },
  EvaluatorsCompatible: {
    NotInDual: notInDual,
    CutoverDone: cutoverDone,
    CutoverNotRequested: notRequested,
    EvaluatorsUnknown: t('Unknown', 'the worker producer report is unavailable'),
    NoLegacyEvaluators: t('True', 'no trace-level evaluator is enabled'),
    LegacyEvaluatorsActive: t(
      'False',
      '{count} trace-level evaluator(s) stop at the cutover: {names}; recreate them with target observation, or approve the cutover to stop them',
    ),
    LegacyEvaluatorsApproved: t(
      'True',
      '{count} trace-level evaluator(s) stop at the cutover, as approved for generation {generation}: {names}',
    ),
  },
  CutoverApproved: {
    NotInDual: notInDual,
    CutoverDone: cutoverDone,
    CutoverNotRequested: notRequested,
    AwaitingApproval: t('False', 'approve the cutover with: {command}'),
    Approved: t('True', 'cutover approved for generation {generation}'),
    AutomaticApproval: t('True', 'spec.cutover.approval is Automatic'),
  },
  CutoverReady: {
    NotInDual: notInDual,
    CutoverDone: cutoverDone,
    CutoverNotRequested: notRequested,
    GatesClosed: t('False', '{closed}'),
    AllGatesHold: t('True', 'every cutover gate holds'),
  },
};

export type Facts = Record<string, string | number>;

export interface ConditionValue {
  type: ConditionType;
  status: ConditionStatus;
  reason: string;
  message: string;
}

const MAX_MESSAGE = 32768;

/** The condition `type` with `reason`, its message filled from `facts` (throws on a reason the type does not own). */
export function condition(type: ConditionType, reason: string, facts: Facts = {}): ConditionValue {
  const entry = CONDITIONS[type][reason];
  if (!entry) throw new Error(`condition ${type} has no reason ${reason}`);
  const message = entry.template.replace(/\{(\w+)\}/g, (_, k: string) => {
    const v = facts[k];
    if (v === undefined) throw new Error(`condition ${type}/${reason} needs the fact ${k}`);
    return String(v);
  });
  return { type, status: entry.status, reason, message: message.slice(0, MAX_MESSAGE) };
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
const patterns = new Map<string, RegExp>();
function patternOf(template: string): RegExp {
  let p = patterns.get(template);
  if (!p) {
    p = new RegExp(`^${escapeRegExp(template).replace(/\{\w+\}/g, '[\\s\\S]*')}$`);
    patterns.set(template, p);
  }
  return p;
}

/** Why a written condition is not one the table produces, or undefined when it is. */
export function checkCondition(
  c: Pick<Condition, 'type' | 'status' | 'reason' | 'message'>,
): string | undefined {
  const entry = (CONDITIONS as Record<string, Record<string, Entry> | undefined>)[c.type]?.[c.reason];
  if (!entry) return `reason ${c.reason} is not one of ${c.type}'s`;
  if (entry.status !== c.status) return `reason ${c.reason} means ${entry.status}, not ${c.status}`;
  if (!patternOf(entry.template).test(c.message))
    return `message "${c.message}" does not follow "${entry.template}"`;
  return undefined;
}

const FIRST: readonly ConditionType[] = ['Ready', 'Reconciling', 'Stalled'];

/**
 * The new condition list: `values` replace the old conditions of their type (with the transition
 * time kept when the status did not change), the others stay as they were; kstatus ones first.
 */
export function writeConditions(
  old: readonly Condition[] | undefined,
  values: readonly ConditionValue[],
  generation: number,
  now: string,
): Condition[] {
  const byType = new Map<string, Condition>((old ?? []).map((c) => [c.type, c]));
  for (const v of values) {
    const before = byType.get(v.type);
    byType.set(v.type, {
      type: v.type,
      status: v.status,
      reason: v.reason,
      message: v.message,
      observedGeneration: generation,
      lastTransitionTime: before && before.status === v.status ? before.lastTransitionTime : now,
    });
  }
  const rank = (type: string) => {
    const i = FIRST.indexOf(type as ConditionType);
    return i >= 0 ? i : FIRST.length;
  };
  // Stable: domain conditions keep their first-written order after the kstatus ones.
  return [...byType.values()].sort((a, b) => rank(a.type) - rank(b.type));
}

export const findCondition = (list: readonly Condition[] | undefined, type: ConditionType) =>
  list?.find((c) => c.type === type);
