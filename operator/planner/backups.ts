/**
 * Backups as Jobs (`observatory backup --id ID`): the id is derived from what asked for the backup
 * (the pass's recorded intent, or the request annotation), so a restarted operator finds the Job
 * it created instead of taking a second backup. A backup counts as complete only when its Job
 * succeeded and left a summary (server/contract/backup.ts) that parses and names the same id; the
 * operator never reads the bucket. Each result goes to status.backups (newest first, bounded) and
 * to an owned ConfigMap.
 */
import {
  BACKUP_ID_PATTERN,
  BACKUP_PARTS,
  type BackupSummary,
  backupSummarySchema,
} from '../../server/contract/backup.ts';
import type { WriteMode as ServerWriteMode } from '../../server/contract/write-modes.ts';
import {
  type BackupRecord,
  MAX_BACKUPS_RECORDED,
  type MigrationState,
  type ObservabilityServiceStatus,
  type WriteMode,
} from '../api/v1alpha1.ts';
import { renderBackupRecord } from '../render/backups.ts';
import { type BackupTarget, jobNameFor, renderJob } from '../render/jobs.ts';
import { SERVER_WRITE_MODE } from '../render/settings.ts';
import { shortHash } from '../util/hash.ts';
import { attemptOf, pendingRetry, retryHint } from './jobs.ts';
import type { StepInput, StepOutput } from './step.ts';
import { readSummary, type Summary } from './termination.ts';

export type BackupTrigger = BackupRecord['trigger'];

const JOB_POLL_SECONDS = 15;
const ID = new RegExp(BACKUP_ID_PATTERN);

/** The backup before a pass's irreversible step: one id per recorded intent (`target.since`). */
export type PassTrigger = 'Release4' | 'Cutover' | 'Upgrade';
export function passBackupId(uid: string, trigger: PassTrigger, since: string): string {
  return `${trigger.toLowerCase()}-${shortHash({ uid, trigger, since }, 12)}`;
}

/** A requested backup: the annotation's value when it is a valid id, else an id derived from it. */
export function requestedBackupId(uid: string, value: string): string {
  return ID.test(value) ? value : `requested-${shortHash({ uid, value }, 12)}`;
}

const CRD_WRITE_MODE = Object.fromEntries(
  Object.entries(SERVER_WRITE_MODE).map(([crd, server]) => [server, crd]),
) as Record<ServerWriteMode, WriteMode>;

/** The state a backup was taken in (a restore returns there). */
export function stateOfBackup(b: Pick<BackupRecord, 'release' | 'writeMode'>): MigrationState | undefined {
  if (b.release === '3') return 'Release3';
  return b.writeMode;
}

/** The Job's summary, when it is one of a complete backup of `id`; otherwise why not. */
export function parseSummary(id: string, message: string | undefined): Summary<BackupSummary> {
  const read = readSummary(backupSummarySchema, message);
  if (read.ok && read.summary.id !== id)
    return { ok: false, why: `the summary is of backup ${read.summary.id}` };
  return read;
}

function completeRecord(id: string, trigger: BackupTrigger, job: string, s: BackupSummary): BackupRecord {
  return {
    id,
    trigger,
    result: 'Complete',
    job,
    parts: s.parts.map(({ part, objects, bytes }) => ({ part, objects, bytes })),
    objects: s.parts.reduce((n, p) => n + p.objects, 0),
    bytes: s.parts.reduce((n, p) => n + p.bytes, 0),
    startedAt: s.startedAt,
    finishedAt: s.finishedAt,
    release: s.release,
    writeMode: CRD_WRITE_MODE[s.writeMode],
  };
}

/** The backups as this reconcile has them so far. */
export const backupsOf = (input: StepInput, out: StepOutput): BackupRecord[] =>
  out.status.backups ?? input.status.backups ?? [];

/** Records a backup's result first in status.backups and in its ConfigMap. */
function record(input: StepInput, out: StepOutput, r: BackupRecord): void {
  const others = backupsOf(input, out).filter((b) => b.id !== r.id);
  out.patch({ backups: [r, ...others].slice(0, MAX_BACKUPS_RECORDED) });
  out.act(
    { kind: 'applyConfigMap', object: renderBackupRecord(input.object.metadata, r) },
    `record backup ${r.id} (${r.result})`,
  );
}

export type BackupProgress =
  | { kind: 'complete'; record: BackupRecord }
  | { kind: 'waiting'; detail: string }
  | { kind: 'failed'; detail: string };

export interface BackupRequest {
  id: string;
  trigger: BackupTrigger;
  /** The state whose settings the Job runs with (the one running). */
  state: MigrationState;
  image: string;
}

export const BACKUP_PURPOSE = 'backup' as const;

/** Creates, watches and records the Job of one backup; a failed one stays failed until a retry. */
export function ensureBackup(input: StepInput, out: StepOutput, r: BackupRequest): BackupProgress {
  const recorded = backupsOf(input, out).find((b) => b.id === r.id);
  if (recorded?.result === 'Complete') return { kind: 'complete', record: recorded };
  // A requested backup is retried by a new request (a new id), so its Job's name never moves while it runs.
  const requested = r.trigger === 'Requested';
  const attempt = requested ? 0 : attemptOf(input.status, BACKUP_PURPOSE);
  const hint = () =>
    requested
      ? `request another: kubectl observatory backup ${input.object.metadata.name}`
      : retryHint(input, BACKUP_PURPOSE, attempt);
  const name = jobNameFor(input.render, { purpose: BACKUP_PURPOSE, attempt, inputs: { id: r.id } });
  const live = input.world.jobs.find((j) => j.name === name);
  const waiting = (detail: string, seconds = JOB_POLL_SECONDS): BackupProgress => {
    out.wait(seconds, detail);
    return { kind: 'waiting', detail };
  };
  if (recorded?.result === 'Failed' && recorded.job === name) {
    const retry = requested ? undefined : pendingRetry(input, BACKUP_PURPOSE);
    if (!retry) {
      const detail = `Job ${name} failed: ${recorded.message ?? 'no reason given'}. To retry: ${hint()}`;
      return { kind: 'failed', detail };
    }
    // The new attempt is recorded first (G5); its Job gets another name.
    out.patch({
      attempts: { ...input.status.attempts, [BACKUP_PURPOSE]: attempt + 1 },
      consumedRetries: { ...input.status.consumedRetries, [retry.annotation]: retry.value },
    });
    if (live)
      out.act(
        { kind: 'deleteJob', name, reason: `retry of backup ${r.id} requested` },
        `delete failed Job ${name}`,
      );
    return waiting(`retrying backup ${r.id}`, 0);
  }
  if (!live) {
    // One backup at a time: they read the same databases and may write under the same prefix.
    const other = runningBackups(input)[0];
    if (other) return waiting(`backup ${r.id} waits for the backup Job ${other.name} to finish`);
    const verifying = verifyingBackup(input);
    if (verifying) return waiting(`backup ${r.id} waits for the verification of backup ${verifying}`);
    const include = input.spec.backup?.include ?? [...BACKUP_PARTS];
    const backup: BackupTarget = { id: r.id, include };
    const object = renderJob(input.render, {
      purpose: BACKUP_PURPOSE,
      state: r.state,
      image: r.image,
      attempt,
      inputs: { id: r.id },
      backup,
    });
    out.act(
      { kind: 'createJob', purpose: BACKUP_PURPOSE, object },
      `create Job ${name} (backup ${r.id}: ${include.join(', ')})`,
    );
    return waiting(`Job ${name} (backup ${r.id}) is starting`);
  }
  if (live.outcome === 'running') return waiting(`Job ${name} (backup ${r.id}) is running`);
  const failed = (why: string): BackupProgress => {
    record(input, out, {
      id: r.id,
      trigger: r.trigger,
      result: 'Failed',
      job: name,
      message: why.slice(0, 1024),
    });
    return {
      kind: 'failed',
      detail: `Job ${name} failed: ${why}. To retry: ${hint()}`,
    };
  };
  if (live.outcome === 'failed')
    return failed([live.reason, live.message].filter(Boolean).join(': ') || 'no reason given');
  const summary = parseSummary(r.id, live.terminationMessage);
  if (!summary.ok) return failed(`it succeeded but is not verified: ${summary.why}`);
  const done = completeRecord(r.id, r.trigger, name, summary.summary);
  record(input, out, done);
  return { kind: 'complete', record: done };
}

export const PRUNE_PURPOSE = 'backup-prune' as const;

/** The running retention Jobs (a verification waits for them). */
export const runningPrunes = (input: StepInput) =>
  input.world.jobs.filter((j) => j.purpose === PRUNE_PURPOSE && j.outcome === 'running');

/**
 * The retention run recorded after a scheduled backup and not finished (only with a retention:
 * without one the record stays open and nothing runs), by the backup it follows.
 */
export function pendingPrune(input: StepInput): string | undefined {
  const prune = input.status.backupSchedule?.prune;
  return input.spec.backup?.retention && prune && !prune.result ? prune.after : undefined;
}

/**
 * The backup a verification (steps/backup-verify.ts) is working on, recorded before its Job:
 * retention keeps it, and backups and restores wait for it, so none overlaps a verification.
 */
export const verifyingBackup = (input: StepInput): string | undefined =>
  input.status.backupVerification?.pending?.id;

/** The restore recorded in status while it is under way (neither complete nor failed). */
export const restoreUnderWay = (status: ObservabilityServiceStatus) =>
  status.restore && !['Complete', 'Failed'].includes(status.restore.phase) ? status.restore : undefined;

/** The running backup Jobs (a restore waits for them). */
export const runningBackups = (input: StepInput) =>
  input.world.jobs.filter((j) => j.purpose === BACKUP_PURPOSE && j.outcome === 'running');

/** The latest complete backup recorded, for the BackupComplete condition. */
export const latestComplete = (status: ObservabilityServiceStatus) =>
  status.backups?.find((b) => b.result === 'Complete');
