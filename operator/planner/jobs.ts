/**
 * One Job per step attempt (G6): the name is a hash of the attempt inputs, the outcome comes from
 * the Job's terminal condition, and a failed attempt is retried only on the user's request
 * (a retry annotation with a value not acted on before), which raises the attempt number.
 */

import { annotateCommand } from '../../server/contract/retries.ts';
import type { JobResult, ObservabilityServiceStatus } from '../api/v1alpha1.ts';
import { ANNOTATIONS } from '../api/v1alpha1.ts';
import { type JobPurpose, type JobRequest, jobNameFor, renderJob } from '../render/jobs.ts';
import type { StepInput, StepOutput } from './step.ts';
import type { ObservedJob } from './types.ts';

export type JobProgress = 'succeeded' | 'waiting' | 'failed';

export interface JobOutcome {
  progress: JobProgress;
  /** The Job of this attempt. */
  name: string;
  /** What the step waits for, while waiting. */
  detail: string;
  /** The Job's own reason and message, once it failed. */
  why?: string;
  /** The termination message of the succeeded Job, while the Job is still there to read it. */
  terminationMessage?: string;
}

const JOB_POLL_SECONDS = 15;

export interface EnsureJob extends Omit<JobRequest, 'attempt'> {
  /** Human name for messages, e.g. "backfill step 2". */
  label: string;
  /** Stalled reason when the Job failed, e.g. BackfillStepFailed. */
  failureReason: string;
  /** The attempt counter this Job follows (default: its purpose). */
  attemptKey?: JobPurpose;
  /** False when the step answers a failure itself (an upgrade rolls back) instead of stalling. */
  failureStalls?: boolean;
}

export const attemptOf = (status: ObservabilityServiceStatus, key: string): number =>
  status.attempts?.[key] ?? 0;

/** The retry annotation (and the value it expects) that retries a purpose. */
function retryAnnotation(purpose: JobPurpose): { annotation: string; base: string } {
  const step = /^backfill-(?:retry-)?(\d)$/.exec(purpose);
  if (step) return { annotation: ANNOTATIONS.retryBackfill, base: step[1]! };
  return { annotation: ANNOTATIONS.retryJob, base: purpose };
}

/** A retry request names the purpose ("3" or "3.2"; "migrate" or "migrate.2") and is new. */
export function pendingRetry(
  input: StepInput,
  purpose: JobPurpose,
): { annotation: string; value: string } | undefined {
  const { annotation, base } = retryAnnotation(purpose);
  const value = input.object.metadata.annotations?.[annotation];
  if (value === undefined || value === input.status.consumedRetries?.[annotation]) return undefined;
  if (value !== base && !new RegExp(`^${base}\\.\\d{1,6}$`).test(value)) return undefined;
  return { annotation, value };
}

/**
 * The retry annotation and a value for it that the operator has not acted on before (any such
 * value is a new request; this one cannot collide with an earlier one).
 */
export function retryRequest(
  status: ObservabilityServiceStatus,
  purpose: JobPurpose,
  attempt: number,
): { annotation: string; value: string } {
  const { annotation, base } = retryAnnotation(purpose);
  const value = status.consumedRetries?.[annotation] === undefined ? base : `${base}.${attempt + 1}`;
  return { annotation, value };
}

/** The exact command that retries, for the Stalled message (the documented retry). */
export function retryHint(input: StepInput, purpose: JobPurpose, attempt: number): string {
  const { annotation, value } = retryRequest(input.status, purpose, attempt);
  return annotateCommand(input.object.metadata.name, annotation, value);
}

/** Reason of a Job whose outcome comes from the result its command recorded. */
const RECORDED_FAILURE = 'CommandFailed';

/**
 * The Job of one attempt as the world shows it or, once its TTL removed it, as status.jobs
 * recorded it: a finished Job's result outlives the Job. A success its command recorded (the
 * worker's report) wins over both: the work was done, even if the Pod was killed before it exited,
 * or the Job went before the operator saw it complete. A recorded failure stands in only for a Job
 * seen nowhere else: a running Job may be Kubernetes' retry of it.
 */
export function findJob(input: StepInput, purpose: JobPurpose, name: string): ObservedJob | undefined {
  const results = input.world.jobResults;
  const recorded = results?.known ? results.results.find((r) => r.job === name) : undefined;
  const live = input.world.jobs.find((j) => j.name === name);
  // The Job's termination message (a preflight's schema report) is kept when it can still be read.
  if (recorded?.result === 'succeeded')
    return {
      name,
      purpose,
      outcome: 'succeeded',
      ...(live?.terminationMessage ? { terminationMessage: live.terminationMessage } : {}),
    };
  if (live) return live;
  const r = input.status.jobs?.find((j) => j.purpose === purpose && j.name === name);
  if (r)
    return {
      name,
      purpose,
      outcome: r.result === 'Succeeded' ? 'succeeded' : 'failed',
      ...(r.reason ? { reason: r.reason } : {}),
      ...(r.message ? { message: r.message } : {}),
    };
  if (recorded)
    return { name, purpose, outcome: 'failed', reason: RECORDED_FAILURE, message: recorded.detail };
  return undefined;
}

/** Records a finished Job's result in status.jobs (one entry per purpose, the latest attempt). */
export function recordResult(input: StepInput, out: StepOutput, purpose: JobPurpose, job: ObservedJob): void {
  if (job.outcome === 'running') return;
  const jobs = out.status.jobs ?? input.status.jobs ?? [];
  if (jobs.some((j) => j.purpose === purpose && j.name === job.name)) return;
  const entry: JobResult = {
    purpose,
    name: job.name,
    result: job.outcome === 'succeeded' ? 'Succeeded' : 'Failed',
    observedAt: input.now,
    ...(job.reason ? { reason: job.reason.slice(0, 256) } : {}),
    ...(job.message ? { message: job.message.slice(0, 1024) } : {}),
  };
  out.patch({ jobs: [...jobs.filter((j) => j.purpose !== purpose), entry] });
}

/** Creates, watches or reports the Job of the current attempt; waits and stalls go into `out`. */
export function ensureJob(input: StepInput, out: StepOutput, r: EnsureJob): JobOutcome {
  const key = r.attemptKey ?? r.purpose;
  const attempt = attemptOf(input.status, key);
  const name = jobNameFor(input.render, { purpose: r.purpose, attempt, inputs: r.inputs });
  const jobs = input.world.jobs;
  const mine = findJob(input, r.purpose, name);
  if (mine) recordResult(input, out, r.purpose, mine);
  const waiting = (seconds: number, detail: string): JobOutcome => {
    out.wait(seconds, detail);
    return { progress: 'waiting', name, detail };
  };
  if (mine?.outcome === 'succeeded')
    return {
      progress: 'succeeded',
      name,
      detail: `Job ${name} succeeded`,
      ...(mine.terminationMessage ? { terminationMessage: mine.terminationMessage } : {}),
    };
  if (mine?.outcome === 'running') return waiting(JOB_POLL_SECONDS, `Job ${name} (${r.label}) is running`);
  if (mine?.outcome === 'failed') {
    const retry = pendingRetry(input, r.purpose);
    if (retry) {
      // Record the new attempt first (G5), then remove the failed one; the next pass creates it.
      out.patch({
        attempts: { ...input.status.attempts, [key]: attempt + 1 },
        consumedRetries: { ...input.status.consumedRetries, [retry.annotation]: retry.value },
      });
      if (jobs.some((j) => j.name === name))
        out.act(
          { kind: 'deleteJob', name, reason: `retry of ${r.label} requested` },
          `delete failed Job ${name}`,
        );
      return waiting(0, `retrying ${r.label}`);
    }
    const why = [mine.reason, mine.message].filter(Boolean).join(': ') || 'no reason given';
    if (r.failureStalls === false)
      return { progress: 'failed', name, detail: `Job ${name} (${r.label}) failed: ${why}`, why };
    const message = `Job ${name} (${r.label}) failed: ${why}. To retry: ${retryHint(input, r.purpose, attempt)}`;
    out.stalled(r.failureReason, message);
    return { progress: 'failed', name, detail: message, why };
  }
  const active = jobs.find((j) => j.purpose === r.purpose && j.name !== name && j.outcome === 'running');
  if (active)
    return waiting(JOB_POLL_SECONDS, `waiting for the earlier Job ${active.name} (${r.label}) to finish`);
  for (const stale of jobs.filter(
    (j) => j.purpose === r.purpose && j.name !== name && j.outcome === 'failed',
  ))
    out.act(
      { kind: 'deleteJob', name: stale.name, reason: 'superseded by a new attempt' },
      `delete Job ${stale.name}`,
    );
  const object = renderJob(input.render, { ...r, attempt });
  out.act({ kind: 'createJob', purpose: r.purpose, object }, `create Job ${name} (${r.label})`);
  return waiting(JOB_POLL_SECONDS, `Job ${name} (${r.label}) is starting`);
}

export { jobNameFor };
