/**
 * The historic backfill chain as Jobs: one step at a time, in order, after the Dual rollout
 * completed (Rule 3). The cursor (completedSteps) lives in status so a restart resumes it. A
 * retried step whose record says failed is first un-failed by `backfill retry --step n` (its own
 * Job), because `backfill run` refuses a failed step; then `backfill run --step n` runs again.
 */
import { backfillEnabled, enabledSteps } from '../api/effective.ts';
import type { MigrationState } from '../api/v1alpha1.ts';
import { backfillPurpose, backfillRetryPurpose, jobNameFor } from '../render/jobs.ts';
import type { PlanContext } from './context.ts';
import { attemptOf, ensureJob } from './jobs.ts';

export interface BackfillOutcome {
  enabled: boolean;
  complete: boolean;
}

function reportOf(ctx: PlanContext, step: number) {
  return ctx.world.backfill.known ? ctx.world.backfill.steps.find((s) => s.step === step) : undefined;
}

/** Moves the cursor over steps the world shows finished (the step's Job succeeded, or the worker says so). */
function advanceCursor(ctx: PlanContext, total: number): number {
  let cursor = ctx.old.backfill?.completedSteps ?? 0;
  while (cursor < total) {
    const step = cursor + 1;
    const purpose = backfillPurpose(step);
    const name = jobNameFor(ctx.render, { purpose, attempt: attemptOf(ctx, purpose) });
    const job = ctx.world.jobs.find((j) => j.name === name);
    if (job?.outcome !== 'succeeded' && reportOf(ctx, step)?.status !== 'finished') break;
    cursor = step;
    ctx.event('Normal', 'BackfillStepCompleted', `backfill step ${step} of ${total} finished`);
  }
  return cursor;
}

/**
 * `mayStart`: the Dual rollout is complete and nothing else is in flight; only then may a new
 * step Job be created. Progress already made is recorded regardless.
 */
export function reconcileBackfill(
  ctx: PlanContext,
  state: MigrationState,
  mayStart: boolean,
): BackfillOutcome {
  const enabled = state !== 'Release3' && state !== 'Legacy' && backfillEnabled(ctx.spec);
  if (!enabled) {
    ctx.condition(
      'BackfillComplete',
      'False',
      'BackfillNotRunning',
      backfillEnabled(ctx.spec)
        ? 'the backfill starts once the Dual rollout is complete'
        : 'spec.backfill.enabled is false',
    );
    return { enabled: false, complete: false };
  }
  const total = enabledSteps(ctx.spec).length;
  const cursor = advanceCursor(ctx, total);
  const progress = `${cursor}/${total}`;
  if (cursor >= total) {
    ctx.status.backfill = { completedSteps: cursor, totalSteps: total, progress };
    ctx.condition('BackfillComplete', 'True', 'AllStepsFinished', `all ${total} backfill steps finished`);
    return { enabled, complete: true };
  }
  const step = cursor + 1;
  const purpose = backfillPurpose(step);
  const attempt = attemptOf(ctx, purpose);
  const runName = jobNameFor(ctx.render, { purpose, attempt });
  ctx.status.backfill = { completedSteps: cursor, totalSteps: total, currentStep: step, progress };
  if (ctx.status.legacyTablesTruncated) {
    ctx.stalled(
      'BackfillSourceTruncated',
      'the legacy tables were truncated: the backfill has no source left; disable spec.backfill.enabled',
    );
    ctx.condition('BackfillComplete', 'False', 'BackfillSourceTruncated', 'the legacy tables were truncated');
    return { enabled, complete: false };
  }
  const chunks = reportOf(ctx, step);
  const detail =
    chunks && chunks.chunksTotal > 0 ? ` (${chunks.chunksDone}/${chunks.chunksTotal} chunks)` : '';
  ctx.condition(
    'BackfillComplete',
    'False',
    'BackfillRunning',
    `step ${step} of ${total}${detail}; ${progress} done`,
  );
  if (!mayStart && !ctx.world.jobs.some((j) => j.name === runName)) {
    ctx.wait(
      30,
      `backfill step ${step} waits until the Dual rollout is complete on every web and worker pod`,
    );
    return { enabled, complete: false };
  }
  const common = {
    state,
    image: ctx.spec.image,
    label: `backfill step ${step}`,
    failureReason: 'BackfillStepFailed',
  };
  if (attempt > 0 && !ctx.world.jobs.some((j) => j.name === runName)) {
    // A retry: un-fail the step first when its record says failed.
    const unfail = ensureUnfailed(ctx, step, state);
    if (unfail !== 'done') return { enabled, complete: false };
  }
  ctx.status.backfill.currentJob = runName;
  ensureJob(ctx, { ...common, purpose });
  return { enabled, complete: false };
}

function ensureUnfailed(ctx: PlanContext, step: number, state: MigrationState): 'done' | 'waiting' {
  const purpose = backfillRetryPurpose(step);
  const attemptKey = backfillPurpose(step);
  const name = jobNameFor(ctx.render, { purpose, attempt: attemptOf(ctx, attemptKey) });
  const exists = ctx.world.jobs.some((j) => j.name === name);
  if (!exists) {
    const report = reportOf(ctx, step);
    if (!ctx.world.backfill.known) {
      ctx.wait(
        30,
        `the worker backfill report is unavailable: cannot tell whether step ${step} must be un-failed before its retry`,
      );
      return 'waiting';
    }
    if (report?.status !== 'failed') return 'done';
  }
  ctx.status.backfill!.currentJob = name;
  const r = ensureJob(ctx, {
    purpose,
    attemptKey,
    state,
    image: ctx.spec.image,
    label: `un-fail backfill step ${step}`,
    failureReason: 'BackfillStepFailed',
  });
  return r === 'succeeded' ? 'done' : 'waiting';
}
