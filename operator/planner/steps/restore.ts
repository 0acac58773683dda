/**
 * A restore on request (annotation observatory.dev/restore-requested: "<backup id>", set by
 * `kubectl observatory restore`). An annotation rather than a spec field: a restore is a one-off
 * act, and a spec field left in Git would ask GitOps tools to re-apply a restore the data has
 * since moved past. The request is recorded first (G5); then web and worker scale to zero, the
 * restore Job runs, and the deployment returns to the release and write mode the backup was taken
 * in, which the spec must already ask for. While it runs nothing else moves. It owns Restored,
 * written once a restore was requested.
 */
import { restoreSummarySchema } from '../../../server/contract/backup.ts';
import { desiredState } from '../../api/effective.ts';
import { ANNOTATIONS, type MigrationState, type RestoreRecord } from '../../api/v1alpha1.ts';
import { settingsFromSpec } from '../../render/settings.ts';
import { committed } from '../../validation.ts';
import { pendingPrune, runningBackups, stateOfBackup, verifyingBackup } from '../backups.ts';
import { ensureJob } from '../jobs.ts';
import { passOf } from '../pass.ts';
import { type Step, type StepInput, StepOutput } from '../step.ts';
import { readSummary } from '../termination.ts';
import { applyDeployments } from '../workloads.ts';

/** What the spec must say for `state`. */
function specFor(state: MigrationState): string {
  return state === 'Release3'
    ? 'spec.release: "3" with spec.writeMode unset or Legacy'
    : `spec.release: "4" and spec.writeMode: ${state}`;
}

/**
 * The scheduled backup or retention run recorded and not yet read back: its Job may finish while
 * the restore stops the fold, and its TTL remove it unread (the same attempt would then run again).
 */
function scheduledWork(input: StepInput): string | undefined {
  const s = input.status.backupSchedule;
  if (s?.pending) return `the scheduled backup ${s.pending.id}`;
  const prune = pendingPrune(input);
  if (prune) return `the retention run after backup ${prune}`;
  return undefined;
}

function refuse(out: StepOutput, id: string, reason: string, detail: string) {
  out.set('Restored', 'RestoreRefused', { id, detail });
  out.stalled(reason, `restore of backup ${id}: ${detail}`);
  return out.stop();
}

/** Accepts a new request when the backup is known and complete and the spec asks for its state. */
function accept(input: StepInput, out: StepOutput, request: string) {
  const id = request.replace(/\.\d{1,6}$/, '');
  const backup = input.status.backups?.find((b) => b.id === id && b.result === 'Complete');
  const want = backup && stateOfBackup(backup);
  if (!backup?.release || !backup.writeMode || !want)
    return refuse(out, id, 'RestoreBackupUnknown', `no complete backup ${id} in status.backups`);
  if (committed(input.status) && want !== 'EventsOnly')
    return refuse(
      out,
      id,
      'RestoreModeMismatch',
      `it was taken in ${want}, and the deployment has cut over to EventsOnly, which is final`,
    );
  if (desiredState(input.spec) !== want)
    return refuse(
      out,
      id,
      'RestoreModeMismatch',
      `it was taken in ${want}, and the restore returns there: set ${specFor(want)} first`,
    );
  const { pass } = passOf(input);
  const busy = pass
    ? `the pass to ${pass.state} must finish first`
    : runningBackups(input).length > 0
      ? `backup Job ${runningBackups(input)[0]!.name} must finish first`
      : scheduledWork(input)
        ? `${scheduledWork(input)} must be recorded first`
        : verifyingBackup(input)
          ? `the verification of backup ${verifyingBackup(input)} must finish first`
          : undefined;
  if (busy) {
    out.set('Restored', 'RestoreScalingDown', { id, detail: `waiting: ${busy}` });
    out.wait(15, `restore of backup ${id}: ${busy}`);
    return out.next();
  }
  const restore: RestoreRecord = {
    request,
    backupId: id,
    phase: 'ScalingDown',
    since: input.now,
    release: backup.release,
    writeMode: backup.writeMode,
  };
  out.patch({ restore });
  out.set('Restored', 'RestoreScalingDown', { id, detail: 'request recorded' });
  out.phase = 'Restoring';
  out.planned.push(`record the restore of backup ${id}`);
  out.requeue(0);
  return out.stop();
}

/** Keeps web and worker at zero replicas; true once no Pod of either is left. */
function scaledToZero(input: StepInput, out: StepOutput, state: MigrationState, image: string): boolean {
  const spec = {
    ...input.spec,
    web: { ...input.spec.web, replicas: 0 },
    worker: { ...input.spec.worker, replicas: 0 },
  };
  const zero = { ...input, spec, render: { ...input.render, spec } };
  const applied = applyDeployments(zero, out, state, image);
  const left = Object.values(input.world.deployments).reduce((n, d) => n + (d.livePods ?? 0), 0);
  if (left > 0) out.wait(10, `${left} web and worker Pod(s) still running`);
  return applied && left === 0;
}

/** The replay's figures from the restore Job's summary, when it left one of this backup. */
function replayOf(input: StepInput, jobName: string, id: string): RestoreRecord['replay'] {
  const message = input.world.jobs.find((j) => j.name === jobName)?.terminationMessage;
  const read = readSummary(restoreSummarySchema, message);
  return read.ok && read.summary.id === id ? read.summary.replay : undefined;
}

export const restoreStep: Step = {
  name: 'restore',
  owns: ['Restored'],
  run(input) {
    const out = new StepOutput();
    const request = input.object.metadata.annotations?.[ANNOTATIONS.restoreRequested];
    const current = input.status.restore;
    if (request && request !== current?.request) return accept(input, out, request);
    if (!current) return out.next();
    const id = current.backupId;
    const want: MigrationState = current.release === '3' ? 'Release3' : current.writeMode;
    if (current.phase === 'Complete') {
      out.set('Restored', 'RestoreComplete', {
        id,
        at: current.finishedAt ?? current.since,
        release: current.release,
        writeMode: current.writeMode,
      });
      return out.next();
    }
    out.phase = 'Restoring';
    const image = input.status.deployedImage ?? input.spec.image;
    if (!scaledToZero(input, out, input.status.state ?? want, image)) {
      out.set('Restored', 'RestoreScalingDown', { id, detail: 'scaling web and worker to zero' });
      return out.stop();
    }
    const backup = input.status.backups?.find((b) => b.id === id);
    const job = ensureJob(input, out, {
      purpose: 'restore',
      state: want,
      image,
      inputs: { id, request: current.request },
      backup: { id, include: backup?.parts?.map((p) => p.part) ?? [] },
      label: `restore of backup ${id}`,
      failureReason: 'RestoreFailed',
    });
    switch (job.progress) {
      case 'waiting':
        if (current.phase !== 'Restoring') out.patch({ restore: { ...current, phase: 'Restoring' } });
        out.set('Restored', 'RestoreRunning', { id, detail: job.detail });
        return out.stop();
      case 'failed':
        if (current.phase !== 'Failed')
          out.patch({ restore: { ...current, phase: 'Failed', finishedAt: input.now, job: job.name } });
        out.set('Restored', 'RestoreFailed', { id, detail: job.detail });
        return out.stop();
      case 'succeeded': {
        const replay = replayOf(input, job.name, id);
        const finished = {
          ...current,
          phase: 'Complete' as const,
          finishedAt: input.now,
          job: job.name,
          ...(replay ? { replay } : {}),
        };
        // The databases are as the backup left them: so is the observed state. The rollout step
        // brings web and worker back in it; the worker's report re-reads the backfill.
        out.patch({
          restore: finished,
          state: want,
          settings: want === 'Release3' ? undefined : settingsFromSpec(want, input.spec),
          target: undefined,
          backfill: undefined,
          dualSince: want === 'Dual' ? input.now : undefined,
        });
        out.set('Restored', 'RestoreComplete', {
          id,
          at: input.now,
          release: current.release,
          writeMode: current.writeMode,
        });
        out.planned.push(`backup ${id} restored: return to ${want}`);
        out.requeue(0);
        return out.stop();
      }
    }
  },
};
