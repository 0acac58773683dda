/**
 * One Job per step attempt (G6): the name is a hash of the attempt inputs, the outcome comes from
 * the Job's terminal condition, and a failed attempt is retried only on the user's request
 * (a retry annotation with a value not acted on before), which raises the attempt number.
 */
import { ANNOTATIONS } from '../api/v1alpha1.ts';
import { type JobPurpose, type JobRequest, jobNameFor, renderJob } from '../render/jobs.ts';
import type { PlanContext } from './context.ts';

export type JobProgress = 'succeeded' | 'waiting' | 'failed';

const JOB_POLL_SECONDS = 15;

export interface EnsureJob extends Omit<JobRequest, 'attempt'> {
  /** Human name for messages, e.g. "backfill step 2". */
  label: string;
  /** Stalled reason when the Job failed, e.g. BackfillStepFailed. */
  failureReason: string;
  /** The attempt counter this Job follows (default: its purpose). */
  attemptKey?: JobPurpose;
}

export const attemptOf = (ctx: PlanContext, key: string): number => ctx.status.attempts?.[key] ?? 0;

/** The retry annotation (and the value it expects) that retries a purpose. */
function retryAnnotation(purpose: JobPurpose): { annotation: string; base: string } {
  const step = /^backfill-(?:retry-)?(\d)$/.exec(purpose);
  if (step) return { annotation: ANNOTATIONS.retryBackfill, base: step[1]! };
  return { annotation: ANNOTATIONS.retryJob, base: purpose };
}

/** A retry request names the purpose ("3" or "3.2"; "migrate" or "migrate.2") and is new. */
function pendingRetry(
  ctx: PlanContext,
  purpose: JobPurpose,
): { annotation: string; value: string } | undefined {
  const { annotation, base } = retryAnnotation(purpose);
  const value = ctx.object.metadata.annotations?.[annotation];
  if (value === undefined || value === ctx.status.consumedRetries?.[annotation]) return undefined;
  if (value !== base && !new RegExp(`^${base}\\.\\d{1,6}$`).test(value)) return undefined;
  return { annotation, value };
}

/** The exact command that retries, for the Stalled message (the documented retry). */
export function retryHint(ctx: PlanContext, purpose: JobPurpose, attempt: number): string {
  const { annotation, base } = retryAnnotation(purpose);
  // Any value not acted on before is a new request; suggest one that cannot collide.
  const value = ctx.status.consumedRetries?.[annotation] === undefined ? base : `${base}.${attempt + 1}`;
  return `kubectl annotate obsvc/${ctx.name} ${annotation}=${value} --overwrite`;
}

export function ensureJob(ctx: PlanContext, r: EnsureJob): JobProgress {
  const key = r.attemptKey ?? r.purpose;
  const attempt = attemptOf(ctx, key);
  const name = jobNameFor(ctx.render, { purpose: r.purpose, attempt, inputs: r.inputs });
  const jobs = ctx.world.jobs;
  const mine = jobs.find((j) => j.name === name);
  if (mine?.outcome === 'succeeded') return 'succeeded';
  if (mine?.outcome === 'running') {
    ctx.wait(JOB_POLL_SECONDS, `Job ${name} (${r.label}) is running`);
    return 'waiting';
  }
  if (mine?.outcome === 'failed') {
    const retry = pendingRetry(ctx, r.purpose);
    if (retry) {
      // Record the new attempt first (G5), then remove the failed one; the next pass creates it.
      ctx.status.attempts = { ...ctx.status.attempts, [key]: attempt + 1 };
      ctx.status.consumedRetries = { ...ctx.status.consumedRetries, [retry.annotation]: retry.value };
      ctx.act(
        { kind: 'deleteJob', name, reason: `retry of ${r.label} requested` },
        `delete failed Job ${name}`,
      );
      ctx.event(
        'Normal',
        'RetryRequested',
        `retrying ${r.label} (attempt ${attempt + 1}) after Job ${name} failed`,
      );
      ctx.wait(0, `retrying ${r.label}`);
      return 'waiting';
    }
    const why = [mine.reason, mine.message].filter(Boolean).join(': ') || 'no reason given';
    ctx.stalled(
      r.failureReason,
      `Job ${name} (${r.label}) failed: ${why}. To retry: ${retryHint(ctx, r.purpose, attempt)}`,
    );
    return 'failed';
  }
  const active = jobs.find((j) => j.purpose === r.purpose && j.name !== name && j.outcome === 'running');
  if (active) {
    ctx.wait(JOB_POLL_SECONDS, `waiting for the earlier Job ${active.name} (${r.label}) to finish`);
    return 'waiting';
  }
  for (const stale of jobs.filter(
    (j) => j.purpose === r.purpose && j.name !== name && j.outcome === 'failed',
  ))
    ctx.act(
      { kind: 'deleteJob', name: stale.name, reason: 'superseded by a new attempt' },
      `delete Job ${stale.name}`,
    );
  const object = renderJob(ctx.render, { ...r, attempt });
  ctx.act({ kind: 'createJob', purpose: r.purpose, object }, `create Job ${name} (${r.label})`);
  ctx.event('Normal', 'JobCreated', `created Job ${name} (${r.label})`);
  ctx.wait(JOB_POLL_SECONDS, `Job ${name} (${r.label}) is starting`);
  return 'waiting';
}

export { jobNameFor };
