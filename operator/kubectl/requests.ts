/**
 * The two requests a user writes on the object as annotations: the cutover approval for the
 * current generation, and the retry of a failed backfill step. Each is decided here from the live
 * object (pure); the annotation names and retry values are the operator's own.
 */
import { enabledSteps } from '../api/effective.ts';
import { ANNOTATIONS, type ObservabilityService } from '../api/v1alpha1.ts';
import { attemptOf, retryRequest } from '../planner/jobs.ts';
import { backfillPurpose } from '../render/jobs.ts';

export interface AnnotationRequest {
  annotation: string;
  value: string;
  /** What was asked, for the confirmation line. */
  summary: string;
}

/** A request the object's state does not allow: exit code 1 with this message. */
export class Refused extends Error {
  override name = 'Refused';
}

export function approvalRequest(o: ObservabilityService): AnnotationRequest {
  if (o.status?.state === 'EventsOnly')
    throw new Refused(
      `${o.metadata.name} already made the cutover to EventsOnly: there is nothing to approve`,
    );
  const generation = String(o.metadata.generation);
  return {
    annotation: ANNOTATIONS.approveCutover,
    value: generation,
    summary: `approved the cutover of ${o.metadata.namespace}/${o.metadata.name} for generation ${generation}`,
  };
}

/** The worker recorded the step failed, or the operator stalled on its Job. */
function failedBy(o: ObservabilityService, step: number): boolean {
  const b = o.status?.backfill;
  if (b?.steps?.some((s) => s.step === step && s.status === 'failed')) return true;
  const complete = o.status?.conditions?.find((c) => c.type === 'BackfillComplete');
  return b?.currentStep === step && complete?.reason === 'BackfillStepFailed';
}

function stepState(o: ObservabilityService, step: number): string {
  const b = o.status?.backfill;
  const recorded = b?.steps?.find((s) => s.step === step)?.status;
  if (recorded) return recorded;
  if (!b) return 'not started';
  if (step <= b.completedSteps) return 'finished';
  return step === b.currentStep ? 'running' : 'pending';
}

export function retryBackfillRequest(o: ObservabilityService, step: number): AnnotationRequest {
  const steps = enabledSteps(o.spec);
  if (!steps.includes(step))
    throw new Refused(`backfill step ${step} is unknown: ${o.metadata.name} runs steps ${steps.join(', ')}`);
  if (!failedBy(o, step))
    throw new Refused(
      `backfill step ${step} has not failed (${stepState(o, step)}): there is nothing to retry`,
    );
  const purpose = backfillPurpose(step);
  const status = o.status ?? {};
  const { annotation, value } = retryRequest(status, purpose, attemptOf(status, purpose));
  return {
    annotation,
    value,
    summary: `asked for a retry of backfill step ${step} of ${o.metadata.namespace}/${o.metadata.name} (${annotation}=${value})`,
  };
}

/**
 * Why a backfill Job has no Pod to read: not started yet, or finished and removed with its Pods by
 * spec.jobs.ttlSecondsAfterFinished, whose result status.jobs still holds.
 */
export function noPodReason(o: ObservabilityService, job: string): string {
  const r = o.status?.jobs?.find((j) => j.name === job);
  if (!r) return `Job ${job} has no Pod yet`;
  const why = r.result === 'Failed' ? `: ${[r.reason, r.message].filter(Boolean).join(': ')}` : '';
  return `Job ${job} ${r.result === 'Succeeded' ? 'succeeded' : 'failed'}${why} (seen ${r.observedAt}); it and its Pod logs were removed after spec.jobs.ttlSecondsAfterFinished`;
}
