/**
 * Backup verification (spec.backup.verify; CloudNativePG has no counterpart: its backups are
 * proven only by a restore someone runs). When due, the latest complete backup is recorded as under
 * verification first (G5), then a Job (observatory backup-verify) restores it into scratch
 * databases and compares it with its manifest. It never overlaps a restore, a backup or a prune:
 * it is recorded only when none is recorded or running, and once it is recorded they wait for it
 * (backups.ts, restore.ts) while retention keeps its backup (scheduled-backup.ts). Its Job waits
 * only for Jobs still running, so a backup or restore recorded meanwhile cannot hold it forever.
 * It runs after the hibernate step, so hibernation pauses it. It owns BackupVerified, written
 * while spec.backup.verify is set.
 */
import { ANNOTATIONS, type BackupVerificationStatus } from '../../api/v1alpha1.ts';
import { jobNameFor, renderJob } from '../../render/jobs.ts';
import { nextDue } from '../backup-schedule.ts';
import {
  countNewBackups,
  initialVerification,
  parseVerifySummary,
  verdictCondition,
  verdictRecord,
  verificationBlocker,
  verificationDue,
} from '../backup-verification.ts';
import {
  backupsOf,
  latestComplete,
  pendingPrune,
  restoreUnderWay,
  runningBackups,
  runningPrunes,
} from '../backups.ts';
import { passOf } from '../pass.ts';
import { type Step, type StepInput, StepOutput } from '../step.ts';

export const VERIFY_PURPOSE = 'backup-verify' as const;
const POLL_SECONDS = 15;
/** Look again at the next time, but at least hourly (a spec change re-plans at once anyway). */
const MAX_RECHECK_SECONDS = 3600;

type Condition = { reason: string; facts: Record<string, string | number> };

/** Creates or reads the Job of the pending verification; returns the status with its verdict. */
function runPending(
  input: StepInput,
  out: StepOutput,
  s: BackupVerificationStatus,
): { s: BackupVerificationStatus; condition?: Condition } {
  const { id, since } = s.pending!;
  const name = jobNameFor(input.render, { purpose: VERIFY_PURPOSE, attempt: 0, inputs: { id, since } });
  const live = input.world.jobs.find((j) => j.name === name);
  if (!live) {
    const running = input.world.jobs.filter(
      (j) => ['backup', 'restore', 'backup-prune'].includes(j.purpose) && j.outcome === 'running',
    );
    const busy = running[0] ? `Job ${running[0].name} must finish first` : undefined;
    if (busy) {
      out.wait(POLL_SECONDS, `the verification of backup ${id} waits: ${busy}`);
      return { s, condition: { reason: 'VerificationWaiting', facts: { id, detail: busy } } };
    }
    const object = renderJob(input.render, {
      purpose: VERIFY_PURPOSE,
      state: input.status.state ?? 'Release3',
      image: input.status.deployedImage ?? input.spec.image,
      attempt: 0,
      inputs: { id, since },
      backup: { id, include: [] },
    });
    out.act(
      { kind: 'createJob', purpose: VERIFY_PURPOSE, object },
      `create Job ${name} (verify backup ${id})`,
    );
    out.wait(POLL_SECONDS, `Job ${name} (verify backup ${id}) is starting`);
    return {
      s,
      condition: { reason: 'VerificationRunning', facts: { id, detail: `Job ${name} is starting` } },
    };
  }
  if (live.outcome === 'running') {
    out.wait(POLL_SECONDS, `Job ${name} (verify backup ${id}) is running`);
    return {
      s,
      condition: { reason: 'VerificationRunning', facts: { id, detail: `Job ${name} is running` } },
    };
  }
  const parsed =
    live.outcome === 'succeeded'
      ? parseVerifySummary(id, live.terminationMessage)
      : {
          ok: false as const,
          why: [live.reason, live.message].filter(Boolean).join(': ') || 'no reason given',
        };
  const last = parsed.ok
    ? verdictRecord(parsed.summary, input.now)
    : {
        id,
        result: 'Failed' as const,
        finishedAt: input.now,
        message: `Job ${name}: ${parsed.why}`.slice(0, 1024),
      };
  const { pending: _, ...rest } = s;
  return { s: { ...rest, last } };
}

export const backupVerifyStep: Step = {
  name: 'backup verification',
  owns: ['BackupVerified'],
  run(input) {
    const out = new StepOutput();
    // Routine work: its waits reach neither blockedBy nor Ready.
    const work = new StepOutput();
    const verify = input.spec.backup?.verify;
    if (!verify) {
      if (input.status.backupVerification) out.patch({ backupVerification: undefined });
      return out.next();
    }
    const now = input.world.now;
    const backups = backupsOf(input, work);
    let s = input.status.backupVerification ?? initialVerification(verify, backups, now);
    const counted = countNewBackups(backups, s.countedUntil);
    s = {
      ...s,
      backupsSince: (s.backupsSince ?? 0) + counted.added,
      ...(counted.countedUntil ? { countedUntil: counted.countedUntil } : {}),
    };
    let condition: Condition | undefined;
    if (s.pending) ({ s, condition } = runPending(input, work, s));

    const due = s.pending ? undefined : verificationDue(verify, s, now);
    if (due) {
      const target = latestComplete(input.status);
      const { pass } = passOf(input);
      const requested = input.object.metadata.annotations?.[ANNOTATIONS.backupRequested];
      const blocker = verificationBlocker({
        restoring: restoreUnderWay(input.status) !== undefined,
        passTo: pass?.state,
        backupPending:
          input.status.backupSchedule?.pending?.id ??
          (requested && input.status.consumedRetries?.[ANNOTATIONS.backupRequested] !== requested
            ? requested
            : undefined),
        prunePending: pendingPrune(input),
        runningJobs: [...runningBackups(input), ...runningPrunes(input)].map((j) => j.name),
      });
      const consumed: BackupVerificationStatus = {
        ...s,
        ...(due.reason === 'Scheduled' ? { lastScheduleTime: due.at } : {}),
        backupsSince: 0,
      };
      if (!target) {
        // Nothing to verify yet: this time passes; the next complete backup counts towards the next.
        s = consumed;
        condition = { reason: 'NotVerifiedYet', facts: { detail: 'no complete backup recorded yet' } };
      } else if (blocker) {
        work.wait(POLL_SECONDS, `the verification of backup ${target.id} waits: ${blocker}`);
        condition = { reason: 'VerificationWaiting', facts: { id: target.id, detail: blocker } };
      } else {
        s = { ...consumed, pending: { id: target.id, since: input.now } };
        work.planned.push(`record the verification of backup ${target.id}`);
        work.requeue(0);
        condition = { reason: 'VerificationRunning', facts: { id: target.id, detail: 'recorded' } };
      }
    }
    // The latest verdict stands while the next verification waits or runs.
    const verdict = s.last ? verdictCondition(s.last) : undefined;
    const shown = verdict ?? condition ?? { reason: 'NotVerifiedYet', facts: { detail: 'none due yet' } };
    out.set('BackupVerified', shown.reason, shown.facts);
    out.actions.push(...work.actions);
    out.planned.push(...work.planned);
    out.patch({ ...work.status, backupVerification: s });
    if (work.requeueAfter !== undefined) out.requeue(work.requeueAfter);
    if (verify.schedule) {
      const seconds = Math.ceil((nextDue(verify.schedule, undefined, now).getTime() - now.getTime()) / 1000);
      out.requeue(Math.max(1, Math.min(MAX_RECHECK_SECONDS, seconds)));
    }
    return out.next();
  },
};
