/**
 * Scheduled backups (spec.backup.schedule, after CloudNativePG's ScheduledBackup) and their
 * retention (spec.backup.retention): beside whatever else runs, never holding the fold. A
 * scheduled time is due once passed (the first counts from when the schedule was first read, as a
 * CronJob's); a due backup waits for a pass or a restore to finish and for a maintenance window,
 * is recorded first (G5) under an id derived from its time, then taken as any backup. After a
 * complete one, a prune Job (observatory backup-prune) applies the retention to the destination,
 * protecting what a restore or a pass still needs; the backups it deleted leave status.backups
 * and their ConfigMaps. It runs after the hibernate step, so hibernation pauses it. It owns
 * BackupScheduled, written while a schedule is set.
 */
import { backupPruneSummarySchema } from '../../../server/contract/backup.ts';
import { ANNOTATIONS, type BackupScheduleStatus, MAX_BACKUPS_RECORDED } from '../../api/v1alpha1.ts';
import { jobNameFor, renderJob } from '../../render/jobs.ts';
import { allowedAgeSeconds, latestDue, nextDue, scheduledBackupId } from '../backup-schedule.ts';
import {
  backupsOf,
  ensureBackup,
  PRUNE_PURPOSE,
  restoreUnderWay,
  runningBackups,
  verifyingBackup,
} from '../backups.ts';
import { heldForWindow } from '../maintenance.ts';
import { passOf } from '../pass.ts';
import { type Step, type StepInput, StepOutput } from '../step.ts';
import { readSummary } from '../termination.ts';

const POLL_SECONDS = 15;
/** Look again at the next time, but at least hourly (a spec change re-plans at once anyway). */
const MAX_RECHECK_SECONDS = 3600;

/**
 * The backups a restore, a pass or a verification in progress still needs: retention never deletes
 * them. A restore that ended (or a request it already took) needs nothing more.
 */
export function protectedBackups(input: StepInput): string[] {
  const s = input.status;
  const annotation = input.object.metadata.annotations?.[ANNOTATIONS.restoreRequested];
  const requested =
    annotation !== undefined && annotation !== s.restore?.request
      ? annotation.replace(/\.\d{1,6}$/, '')
      : undefined;
  const restoring = restoreUnderWay(s)?.backupId;
  return [
    ...new Set(
      [s.target?.backupId, restoring, requested, verifyingBackup(input)].filter((x) => x !== undefined),
    ),
  ];
}

/** Runs or reads the prune after backup `after`; returns the schedule status with its outcome. */
function prune(
  input: StepInput,
  out: StepOutput,
  s: BackupScheduleStatus,
  after: string,
): BackupScheduleStatus {
  const retention = input.spec.backup?.retention;
  if (!retention) return s;
  const name = jobNameFor(input.render, { purpose: PRUNE_PURPOSE, attempt: 0, inputs: { after } });
  const live = input.world.jobs.find((j) => j.name === name);
  if (!live) {
    const object = renderJob(input.render, {
      purpose: PRUNE_PURPOSE,
      state: input.status.state ?? 'Release3',
      image: input.status.deployedImage ?? input.spec.image,
      attempt: 0,
      inputs: { after },
      prune: {
        ...(retention.keepLast !== undefined ? { keepLast: retention.keepLast } : {}),
        ...(retention.maxAge !== undefined ? { maxAge: retention.maxAge } : {}),
        protect: protectedBackups(input),
      },
    });
    out.act(
      { kind: 'createJob', purpose: PRUNE_PURPOSE, object },
      `create Job ${name} (retention after ${after})`,
    );
    out.wait(POLL_SECONDS, `Job ${name} (retention after backup ${after}) is starting`);
    return s;
  }
  if (live.outcome === 'running') {
    out.wait(POLL_SECONDS, `Job ${name} (retention after backup ${after}) is running`);
    return s;
  }
  const read =
    live.outcome === 'succeeded' ? readSummary(backupPruneSummarySchema, live.terminationMessage) : undefined;
  const summary = read?.ok ? read.summary : undefined;
  if (!summary) {
    const why =
      live.outcome === 'failed'
        ? [live.reason, live.message].filter(Boolean).join(': ') || 'no reason given'
        : 'its summary does not parse';
    return { ...s, prune: { after, result: 'Failed', finishedAt: input.now, message: why.slice(0, 1024) } };
  }
  // The deleted backups cannot be restored any more: out of status.backups and their records gone.
  const deleted = new Set(summary.deleted);
  const backups = backupsOf(input, out);
  if (backups.some((b) => deleted.has(b.id)))
    out.patch({ backups: backups.filter((b) => !deleted.has(b.id)).slice(0, MAX_BACKUPS_RECORDED) });
  for (const id of summary.deleted)
    out.act(
      { kind: 'deleteConfigMap', name: `${input.object.metadata.name}-backup-${id}` },
      `delete the record of backup ${id} (expired)`,
    );
  return {
    ...s,
    kept: summary.kept,
    prune: { after, result: 'Succeeded', finishedAt: input.now, deleted: summary.deletedCount },
  };
}

function lastText(s: BackupScheduleStatus): string {
  return s.lastSuccessful ? `${s.lastSuccessful.id} at ${s.lastSuccessful.finishedAt}` : 'none yet';
}

export const scheduledBackupStep: Step = {
  name: 'scheduled backup',
  owns: ['BackupScheduled'],
  run(input) {
    const out = new StepOutput();
    // A scheduled backup is routine: its waits reach neither blockedBy nor Ready.
    const work = new StepOutput();
    const cron = input.spec.backup?.schedule;
    if (!cron) {
      if (input.status.backupSchedule) out.patch({ backupSchedule: undefined });
      return out.next();
    }
    const now = input.world.now;
    const windows = input.spec.maintenanceWindows;
    const due = latestDue(cron, now);
    // Validation refuses an expression that never fires first.
    if (!due) return out.next();
    let s: BackupScheduleStatus = input.status.backupSchedule ?? {
      since: input.now,
      lastScheduleTime: due.toISOString(),
    };
    const next = nextDue(cron, windows, now).toISOString();
    s = { ...s, nextScheduleTime: next, allowedAgeSeconds: allowedAgeSeconds(cron, windows, now) };
    const kept = () => (s.kept !== undefined ? `${s.kept} kept` : 'retention not run yet');
    let condition: { reason: string; facts: Record<string, string> } | undefined;

    if (s.pending) {
      const { id, scheduledAt } = s.pending;
      const progress = ensureBackup(input, work, {
        id,
        trigger: 'Scheduled',
        state: input.status.state ?? 'Release3',
        image: input.status.deployedImage ?? input.spec.image,
      });
      if (progress.kind === 'waiting')
        condition = { reason: 'ScheduledBackupRunning', facts: { id, detail: progress.detail } };
      else {
        const { pending: _, ...rest } = s;
        s = { ...rest, lastScheduleTime: scheduledAt };
        if (progress.kind === 'complete')
          s = {
            ...s,
            lastSuccessful: { id, finishedAt: progress.record.finishedAt ?? input.now },
            prune: { after: id },
          };
        else condition = { reason: 'ScheduledBackupFailed', facts: { id, detail: progress.detail, next } };
      }
    }
    if (!s.pending && s.prune && !s.prune.result) s = prune(input, work, s, s.prune.after);
    if (s.prune?.result === 'Failed' && !condition)
      condition = { reason: 'RetentionFailed', facts: { id: s.prune.after, detail: s.prune.message ?? '' } };

    const last = s.lastScheduleTime ? Date.parse(s.lastScheduleTime) : now.getTime();
    if (!s.pending && due.getTime() > last) {
      const at = due.toISOString();
      const { pass } = passOf(input);
      const busy = pass
        ? `the pass to ${pass.state} must finish first`
        : restoreUnderWay(input.status)
          ? 'the restore must finish first'
          : runningBackups(input).length > 0
            ? `the backup Job ${runningBackups(input)[0]!.name} must finish first`
            : undefined;
      if (busy) {
        work.wait(POLL_SECONDS, `the scheduled backup of ${at} waits: ${busy}`);
        condition = { reason: 'ScheduledBackupWaiting', facts: { at, detail: busy } };
      } else if (heldForWindow(input, work, `the scheduled backup of ${at}`))
        condition = {
          reason: 'ScheduledBackupWaiting',
          facts: { at, detail: 'outside the maintenance windows' },
        };
      else {
        s = { ...s, pending: { scheduledAt: at, id: scheduledBackupId(due) } };
        work.planned.push(`record the scheduled backup ${s.pending!.id}`);
        work.requeue(0);
        condition = { reason: 'ScheduledBackupRunning', facts: { id: s.pending!.id, detail: 'recorded' } };
      }
    }
    const latest = backupsOf(input, work).find((b) => b.trigger === 'Scheduled');
    if (!condition && latest?.result === 'Failed')
      condition = {
        reason: 'ScheduledBackupFailed',
        facts: { id: latest.id, detail: latest.message ?? 'no reason given', next },
      };
    out.set(
      'BackupScheduled',
      condition?.reason ?? 'ScheduleActive',
      condition?.facts ?? { next, last: lastText(s), kept: kept() },
    );
    out.actions.push(...work.actions);
    out.planned.push(...work.planned);
    out.patch({ ...work.status, backupSchedule: s });
    if (work.requeueAfter !== undefined) out.requeue(work.requeueAfter);
    const seconds = Math.ceil((Date.parse(next) - now.getTime()) / 1000);
    out.requeue(Math.max(1, Math.min(MAX_RECHECK_SECONDS, seconds)));
    return out.next();
  },
};
