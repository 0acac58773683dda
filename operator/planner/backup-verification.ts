/**
 * spec.backup.verify, pure: when a verification of the latest complete backup is due (a cron time
 * passed, or N complete backups recorded since the last one), what keeps it from starting (a
 * restore, a backup or a prune in progress: it must never overlap them), and how its Job's
 * summary (server/contract/backup.ts) becomes status and the BackupVerified condition. `now` is
 * an input, never the clock.
 */
import { type BackupVerifySummary, backupVerifySummarySchema } from '../../server/contract/backup.ts';
import type { BackupRecord, BackupSpec, BackupVerificationStatus } from '../api/v1alpha1.ts';
import { latestDue } from './backup-schedule.ts';
import { readSummary, type Summary } from './termination.ts';

export type VerifySpec = NonNullable<BackupSpec['verify']>;
export type VerificationRecord = NonNullable<BackupVerificationStatus['last']>;

const finishedOf = (b: BackupRecord) => (b.result === 'Complete' ? b.finishedAt : undefined);

/** Complete backups finished after `countedUntil`, and the newest such finish time. */
export function countNewBackups(
  backups: readonly BackupRecord[],
  countedUntil: string | undefined,
): { added: number; countedUntil: string | undefined } {
  const after = countedUntil ? Date.parse(countedUntil) : Number.NEGATIVE_INFINITY;
  const fresh = backups.map(finishedOf).filter((t): t is string => t !== undefined && Date.parse(t) > after);
  const newest = fresh.reduce<string | undefined>(
    (a, t) => (a === undefined || Date.parse(t) > Date.parse(a) ? t : a),
    countedUntil,
  );
  return { added: fresh.length, countedUntil: newest };
}

/** The state a verification starts from when spec.backup.verify is first read: nothing due yet. */
export function initialVerification(
  v: VerifySpec,
  backups: readonly BackupRecord[],
  now: Date,
): BackupVerificationStatus {
  const due = v.schedule ? latestDue(v.schedule, now) : undefined;
  const { countedUntil } = countNewBackups(backups, undefined);
  return {
    since: now.toISOString(),
    ...(due ? { lastScheduleTime: due.toISOString() } : {}),
    ...(countedUntil ? { countedUntil } : {}),
    backupsSince: 0,
  };
}

export type VerifyTrigger = { reason: 'Scheduled'; at: string } | { reason: 'AfterBackups'; backups: number };

/** Why a verification is due now, if it is: a scheduled time passed, or enough backups were taken. */
export function verificationDue(
  v: VerifySpec,
  s: BackupVerificationStatus,
  now: Date,
): VerifyTrigger | undefined {
  const due = v.schedule ? latestDue(v.schedule, now) : undefined;
  const last = Date.parse(s.lastScheduleTime ?? s.since);
  if (due && due.getTime() > last) return { reason: 'Scheduled', at: due.toISOString() };
  const every = v.afterEveryBackups;
  if (every !== undefined && (s.backupsSince ?? 0) >= every)
    return { reason: 'AfterBackups', backups: s.backupsSince ?? 0 };
  return undefined;
}

/** What the deployment is doing that a verification must not overlap. */
export interface VerifyBusy {
  restoring: boolean;
  /** A pass in progress, whose backup may start at any reconcile. */
  passTo?: string | undefined;
  /** A scheduled or requested backup recorded, its Job perhaps not created yet. */
  backupPending?: string | undefined;
  /** The retention run after a scheduled backup, recorded and not finished. */
  prunePending?: string | undefined;
  /** Backup and prune Jobs running, by name. */
  runningJobs: readonly string[];
}

/** Why a verification cannot be recorded now, if it cannot. */
export function verificationBlocker(b: VerifyBusy): string | undefined {
  if (b.restoring) return 'the restore must finish first';
  if (b.passTo) return `the pass to ${b.passTo} (and its backup) must finish first`;
  if (b.backupPending) return `backup ${b.backupPending} must finish first`;
  if (b.prunePending) return `the retention run after backup ${b.prunePending} must finish first`;
  if (b.runningJobs[0]) return `Job ${b.runningJobs[0]} must finish first`;
  return undefined;
}

/** The Job's summary, when it is a verdict on backup `id`; otherwise why not. */
export function parseVerifySummary(id: string, message: string | undefined): Summary<BackupVerifySummary> {
  const read = readSummary(backupVerifySummarySchema, message);
  if (read.ok && read.summary.id !== id)
    return { ok: false, why: `the summary is of backup ${read.summary.id}` };
  return read;
}

/** The verdict as status records it. */
export function verdictRecord(s: BackupVerifySummary, at: string): VerificationRecord {
  const first = s.first
    ? `${s.first.part}${s.first.table ? ` table ${s.first.table}` : ''}: ${s.first.detail}${
        s.differences > 1 ? ` (and ${s.differences - 1} more differences)` : ''
      }`
    : undefined;
  return {
    id: s.id,
    result: s.result,
    finishedAt: at,
    tables: s.tables,
    ...(s.rows.analytics !== undefined ? { analyticsRows: s.rows.analytics } : {}),
    ...(s.rows.relational !== undefined ? { relationalRows: s.rows.relational } : {}),
    ...(first ? { message: first.slice(0, 1024) } : {}),
  };
}

const rowsText = (r: VerificationRecord) =>
  [
    r.analyticsRows !== undefined ? `${r.analyticsRows} analytics rows` : undefined,
    r.relationalRows !== undefined ? `${r.relationalRows} relational rows` : undefined,
  ]
    .filter(Boolean)
    .join(', ') || 'no rows';

/** The BackupVerified condition a finished verification gives. */
export function verdictCondition(r: VerificationRecord): {
  reason: 'Verified' | 'RowsNotRecorded' | 'VerificationFailed';
  facts: Record<string, string | number>;
} {
  const base = { id: r.id, at: r.finishedAt };
  if (r.result === 'Verified')
    return { reason: 'Verified', facts: { ...base, tables: r.tables ?? 0, rows: rowsText(r) } };
  if (r.result === 'RowsNotRecorded')
    return { reason: 'RowsNotRecorded', facts: { ...base, rows: rowsText(r) } };
  return { reason: 'VerificationFailed', facts: { ...base, detail: r.message ?? 'no reason given' } };
}
