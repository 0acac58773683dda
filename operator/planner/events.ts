/**
 * Kubernetes Events for the transitions an admin cares about, derived from the old and the new
 * status: state reached, intent recorded, gate opened or closed, Job failed (Stalled), approval
 * or retry consumed, an image upgrade rolled back, backfill steps finished, workers scaled, backups
 * verified or not, hibernated or woken, Ready reached, paused or resumed. Since they come
 * from a status change, and the runtime emits them only after that status was written, each
 * transition yields one Event however many reconciles see it.
 */
import { RELEASE_3_SCHEMA_VERSION } from '../../server/contract/schema-versions.ts';
import type { Condition, ConditionType, ObservabilityServiceStatus } from '../api/v1alpha1.ts';
import type { Action } from './types.ts';

export type EventAction = Extract<Action, { kind: 'event' }>;

const GATES: readonly ConditionType[] = [
  'PropagationHealthy',
  'ProducersCompatible',
  'EvaluatorsCompatible',
  'CutoverApproved',
  'CutoverReady',
];

const find = (s: ObservabilityServiceStatus, type: ConditionType): Condition | undefined =>
  s.conditions?.find((c) => c.type === type);

export function transitionEvents(
  old: ObservabilityServiceStatus,
  next: ObservabilityServiceStatus,
  manualApproval: boolean,
): EventAction[] {
  const out: EventAction[] = [];
  const normal = (reason: string, message: string) =>
    out.push({ kind: 'event', type: 'Normal', reason, message });
  const warning = (reason: string, message: string) =>
    out.push({ kind: 'event', type: 'Warning', reason, message });

  const t = next.target;
  if (t && t.since !== old.target?.since) {
    const from = next.state ?? 'Release3';
    if (t.state === 'EventsOnly' && from !== 'EventsOnly') {
      normal('CutoverStarted', `recorded the intent to move from ${from} to EventsOnly`);
      if (manualApproval) normal('ApprovalConsumed', 'the cutover approval was used: the cutover is final');
    } else if (t.state === from)
      normal('TargetRecorded', `recorded the intent to roll out ${t.image} in ${from}`);
    else normal('TargetRecorded', `recorded the intent to move from ${from} to ${t.state}`);
  }
  if (t?.preflightPassed && !old.target?.preflightPassed)
    normal('PreflightPassed', 'observatory preflight passed');
  if (t?.schemaMigrated && !old.target?.schemaMigrated)
    normal(
      'SchemaMigrated',
      t.state === 'Release3' && old.state !== 'Release3'
        ? `analytics schema rewound to version ${RELEASE_3_SCHEMA_VERSION}`
        : 'schema migrations applied',
    );
  if (t?.rollingBack && !old.target?.rollingBack)
    warning(
      'UpgradeMigrationFailed',
      `the migration to ${t.image} failed (${t.rollingBack}): rewinding the schema${t.schema ? ` to version ${t.schema.database}` : ''}; web and worker stay on ${t.fromImage ?? old.deployedImage}`,
    );
  if (next.failedUpgrade && next.failedUpgrade.at !== old.failedUpgrade?.at)
    warning(
      'UpgradeRolledBack',
      `the upgrade to ${next.failedUpgrade.image} was rolled back (${next.failedUpgrade.reason}): schema at version ${next.failedUpgrade.schemaVersion}, web and worker on ${next.deployedImage}`,
    );
  if (next.state !== undefined && (next.state !== old.state || next.deployedImage !== old.deployedImage)) {
    const from = old.state ?? 'Release3';
    if (from !== next.state) normal('StateAdvanced', `moved from ${from} to ${next.state}`);
    else normal('RolledOut', `${next.state}: rolled out ${next.deployedImage}`);
  }

  const before = old.backfill?.completedSteps ?? 0;
  const after = next.backfill?.completedSteps ?? 0;
  for (let step = before + 1; step <= after; step++)
    normal('BackfillStepCompleted', `backfill step ${step} of ${next.backfill!.totalSteps} finished`);
  if (next.legacyTablesTruncated && !old.legacyTablesTruncated)
    normal('LegacyTablesTruncated', 'truncated the analytics tables traces and observations');
  for (const [annotation, value] of Object.entries(next.consumedRetries ?? {}))
    if (old.consumedRetries?.[annotation] !== value)
      normal('RetryRequested', `retry requested by ${annotation}=${value}`);

  for (const type of GATES) {
    const a = find(old, type);
    const b = find(next, type);
    if (!b || a?.status === b.status || b.reason === 'CutoverDone') continue;
    if (b.status === 'True') normal('GateOpened', `${type}: ${b.message}`);
    else if (a?.status === 'True') warning('GateClosed', `${type}: ${b.message}`);
  }

  const scaled = next.autoscaling;
  if (scaled?.lastScaleTime && scaled.lastScaleTime !== old.autoscaling?.lastScaleTime) {
    const before = old.autoscaling?.desiredReplicas;
    normal(
      before !== undefined && scaled.desiredReplicas < before ? 'WorkersScaledDown' : 'WorkersScaledUp',
      scaled.message,
    );
  }

  const stalled = find(next, 'Stalled');
  const wasStalled = find(old, 'Stalled');
  if (
    stalled?.status === 'True' &&
    (wasStalled?.status !== 'True' ||
      wasStalled.reason !== stalled.reason ||
      wasStalled.message !== stalled.message)
  )
    warning(stalled.reason, stalled.message);
  // A backup beside the fold (requested, scheduled) fails without stalling: say so once.
  for (const b of next.backups ?? [])
    if (b.result === 'Failed' && !old.backups?.some((o) => o.id === b.id && o.result === 'Failed'))
      warning('BackupFailed', `backup ${b.id} (${b.trigger}) failed: ${b.message ?? 'no reason given'}`);
  // A verification's verdict, once: a backup that does not restore as recorded needs a person.
  const verdict = next.backupVerification?.last;
  if (verdict && verdict.finishedAt !== old.backupVerification?.last?.finishedAt) {
    if (verdict.result === 'Differs' || verdict.result === 'Failed')
      warning(
        'BackupVerificationFailed',
        `backup ${verdict.id} failed its verification: ${verdict.message ?? 'no reason given'}`,
      );
    else
      normal(
        'BackupVerified',
        `backup ${verdict.id} restored into scratch databases: ${verdict.result === 'Verified' ? `${verdict.tables ?? 0} tables verified` : 'rows not recorded in its manifest'}`,
      );
  }
  const h = next.hibernation;
  if (h && !old.hibernation) normal('Hibernating', 'spec.hibernate: web and worker drain and scale to zero');
  if (h?.phase === 'Hibernated' && old.hibernation?.phase !== 'Hibernated')
    normal(
      'Hibernated',
      `web and worker at zero; state ${next.state ?? 'none'}, its settings and the backfill cursor are kept`,
    );
  if (!h && old.hibernation) normal('Woken', `web and worker run again in ${next.state ?? 'none'}`);
  const ready = find(next, 'Ready');
  if (ready?.status === 'True' && find(old, 'Ready')?.status !== 'True' && ready.reason !== 'Hibernated')
    normal('Ready', `state ${next.state} reached and rolled out`);
  const paused = find(next, 'Paused')?.status === 'True';
  const wasPaused = find(old, 'Paused')?.status === 'True';
  if (paused !== wasPaused)
    normal(
      paused ? 'Paused' : 'Resumed',
      paused ? 'spec.paused is true: no changes are made' : 'reconciliation resumed',
    );
  return out;
}
