/**
 * The historic backfill chain as Jobs: one step at a time, in order, after the Dual rollout
 * completed (Rule 3). The cursor (completedSteps) lives in status so a restart resumes it. A
 * retried step whose record says failed is first un-failed by `backfill retry --step n` (its own
 * Job), because `backfill run` refuses a failed step; then `backfill run --step n` runs again.
 * It owns BackfillComplete.
 */
import { backfillEnabled, enabledSteps } from '../../api/effective.ts';
import type { MigrationState } from '../../api/v1alpha1.ts';
import { backfillPurpose, backfillRetryPurpose, jobNameFor } from '../../render/jobs.ts';
import { attemptOf, ensureJob, findJob, recordResult } from '../jobs.ts';
import { heldForWindow } from '../maintenance.ts';
import { heldForStore } from '../pressure.ts';
import { type Step, type StepInput, StepOutput } from '../step.ts';
import { deployedRolledOut } from '../workloads.ts';

/**
 * Each enabled step's chunks from the worker's report, or the last ones recorded while the worker
 * does not answer, so `kubectl observatory status` can draw a bar per step.
 */
function stepProgress(input: StepInput) {
  const b = input.world.backfill;
  if (!b.known) return input.status.backfill?.steps;
  const enabled = enabledSteps(input.spec);
  return b.steps
    .filter((s) => enabled.includes(s.step))
    .map(({ step, status, chunksDone, chunksTotal }) => ({ step, status, chunksDone, chunksTotal }));
}

function reportOf(input: StepInput, step: number) {
  const b = input.world.backfill;
  return b.known ? b.steps.find((s) => s.step === step) : undefined;
}

/**
 * Moves the cursor over steps the world shows finished (the step's Job succeeded, or the worker
 * says so), and records the result of every passed step's Job: the worker may report a step
 * finished while its Job's Pod is still exiting, and the Job completes after the cursor moved on.
 */
function advanceCursor(input: StepInput, out: StepOutput, total: number): number {
  let cursor = input.status.backfill?.completedSteps ?? 0;
  const jobOf = (step: number) => {
    const purpose = backfillPurpose(step);
    const name = jobNameFor(input.render, { purpose, attempt: attemptOf(input.status, purpose) });
    return { purpose, job: findJob(input, purpose, name) };
  };
  while (cursor < total) {
    const step = cursor + 1;
    if (jobOf(step).job?.outcome !== 'succeeded' && reportOf(input, step)?.status !== 'finished') break;
    cursor = step;
  }
  for (let step = 1; step <= cursor; step++) {
    const { purpose, job } = jobOf(step);
    if (job) recordResult(input, out, purpose, job);
  }
  return cursor;
}

export const backfillStep: Step = {
  name: 'backfill',
  owns: ['BackfillComplete'],
  run(input) {
    const out = new StepOutput();
    const state = input.status.state;
    if (!backfillEnabled(input.spec)) {
      out.set('BackfillComplete', 'BackfillDisabled');
      return out.next();
    }
    if (state !== 'Dual' && state !== 'EventsOnly') {
      out.set('BackfillComplete', 'BackfillNotStarted');
      return out.next();
    }
    const total = enabledSteps(input.spec).length;
    const cursor = advanceCursor(input, out, total);
    const progress = `${cursor}/${total}`;
    const steps = stepProgress(input);
    const perStep = steps ? { steps } : {};
    if (cursor >= total) {
      out.patch({ backfill: { completedSteps: cursor, totalSteps: total, progress, ...perStep } });
      out.set('BackfillComplete', 'AllStepsFinished', { total });
      return out.next();
    }
    out.phase = 'Backfilling';
    const step = cursor + 1;
    const backfill = { completedSteps: cursor, totalSteps: total, currentStep: step, progress, ...perStep };
    out.patch({ backfill });
    if (input.status.legacyTablesTruncated) {
      out.stalled(
        'BackfillSourceTruncated',
        'the legacy tables were truncated: the backfill has no source left; disable spec.backfill.enabled',
      );
      out.set('BackfillComplete', 'BackfillSourceTruncated', { step, total });
      return out.stop();
    }
    const chunks = reportOf(input, step);
    const detail =
      chunks && chunks.chunksTotal > 0 ? ` (${chunks.chunksDone}/${chunks.chunksTotal} chunks)` : '';
    const running = { step, total, chunks: detail, progress };
    const purpose = backfillPurpose(step);
    const attempt = attemptOf(input.status, purpose);
    const runName = jobNameFor(input.render, { purpose, attempt });
    const exists = findJob(input, purpose, runName) !== undefined;
    if (!exists && !deployedRolledOut(input)) {
      out.wait(
        30,
        `backfill step ${step} waits until the Dual rollout is complete on every web and worker pod`,
      );
      out.set('BackfillComplete', 'BackfillRunning', running);
      return out.next();
    }
    if (!exists) {
      const opensAt = heldForWindow(input, out, `backfill step ${step}`);
      if (opensAt) {
        out.set('BackfillComplete', 'BackfillAwaitingWindow', {
          step,
          total,
          progress,
          opensAt: opensAt.toISOString(),
        });
        return out.next();
      }
    }
    const pressure = heldForStore(input, out, step);
    if (pressure) {
      out.set('BackfillComplete', 'AnalyticsStorePressure', { step, total, progress, reason: pressure });
      if (!exists) return out.next();
    }
    if (attempt > 0 && !exists) {
      // A retry: un-fail the step first when its record says failed.
      const unfail = ensureUnfailed(input, out, step, state);
      if (unfail.done === false) {
        out.patch({ backfill: { ...backfill, ...(unfail.job ? { currentJob: unfail.job } : {}) } });
        if (out.stall)
          out.set('BackfillComplete', 'BackfillStepFailed', { step, total, job: unfail.job ?? runName });
        else out.set('BackfillComplete', 'BackfillRunning', running);
        return out.next();
      }
    }
    out.patch({ backfill: { ...backfill, currentJob: runName } });
    const job = ensureJob(input, out, {
      purpose,
      state,
      // The image that runs (a new spec.image is rolled out by a pass first, and may be refused).
      image: input.status.deployedImage ?? input.spec.image,
      label: `backfill step ${step}`,
      failureReason: 'BackfillStepFailed',
    });
    if (job.progress === 'failed') {
      out.set('BackfillComplete', 'BackfillStepFailed', { step, total, job: job.name });
      return out.stop();
    }
    if (!pressure) out.set('BackfillComplete', 'BackfillRunning', running);
    return out.next();
  },
};

function ensureUnfailed(
  input: StepInput,
  out: StepOutput,
  step: number,
  state: MigrationState,
): { done: boolean; job?: string } {
  const purpose = backfillRetryPurpose(step);
  const attemptKey = backfillPurpose(step);
  const name = jobNameFor(input.render, { purpose, attempt: attemptOf(input.status, attemptKey) });
  if (!findJob(input, purpose, name)) {
    if (!input.world.backfill.known) {
      out.wait(
        30,
        `the worker backfill report is unavailable: cannot tell whether step ${step} must be un-failed before its retry`,
      );
      return { done: false };
    }
    if (reportOf(input, step)?.status !== 'failed') return { done: true };
  }
  const job = ensureJob(input, out, {
    purpose,
    attemptKey,
    state,
    // The image that runs (a new spec.image is rolled out by a pass first, and may be refused).
    image: input.status.deployedImage ?? input.spec.image,
    label: `un-fail backfill step ${step}`,
    failureReason: 'BackfillStepFailed',
  });
  return { done: job.progress === 'succeeded', job: name };
}
