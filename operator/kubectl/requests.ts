/**
 * The requests a user writes on the object as annotations: the cutover approval for the current
 * generation, the retry of a failed backfill step, a backup now, and a restore. Each is decided
 * here from the live object (pure); the annotation names and values are the operator's own.
 */
import { desiredState, enabledSteps } from '../api/effective.ts';
import { ANNOTATIONS, type ObservabilityService } from '../api/v1alpha1.ts';
import { stateOfBackup } from '../planner/backups.ts';
import { attemptOf, retryRequest } from '../planner/jobs.ts';
import { backfillPurpose } from '../render/jobs.ts';
import { cutoverInProgress } from '../validation.ts';

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

/** A backup now: the id names the moment (UTC, to the second), so a repeat a second later is another. */
export function backupRequest(o: ObservabilityService, now: Date): AnnotationRequest {
  if (!o.spec.backup)
    throw new Refused(
      `${o.metadata.name} has no spec.backup: set its destination before asking for a backup`,
    );
  const id = `manual-${now
    .toISOString()
    .replace(/\.\d+Z$/, '')
    .replace(/[-:]/g, '')
    .replace('T', '-')}`;
  return {
    annotation: ANNOTATIONS.backupRequested,
    value: id,
    summary: `asked for backup ${id} of ${o.metadata.namespace}/${o.metadata.name} (${ANNOTATIONS.backupRequested}=${id}); it shows in status.backups`,
  };
}

/** A restore of a complete backup, taken in the state the spec asks for; a repeat gets a new value. */
export function restoreRequest(o: ObservabilityService, id: string): AnnotationRequest {
  const backup = o.status?.backups?.find((b) => b.id === id);
  if (!backup) throw new Refused(`${o.metadata.name} has no backup ${id} in status.backups`);
  if (backup.result !== 'Complete')
    throw new Refused(
      `backup ${id} is not complete (${backup.message ?? backup.result}): it cannot be restored`,
    );
  const want = stateOfBackup(backup);
  if (want !== desiredState(o.spec))
    throw new Refused(
      `backup ${id} was taken in ${want}, and a restore returns there: set ${want === 'Release3' ? 'spec.release: "3"' : `spec.release: "4" and spec.writeMode: ${want}`} first`,
    );
  const last = o.status?.restore?.request;
  const n = last === id ? 2 : last?.startsWith(`${id}.`) ? Number(last.slice(id.length + 1)) + 1 : undefined;
  const value = n === undefined ? id : `${id}.${n}`;
  return {
    annotation: ANNOTATIONS.restoreRequested,
    value,
    summary: `asked for the restore of backup ${id} into ${o.metadata.namespace}/${o.metadata.name} (${ANNOTATIONS.restoreRequested}=${value}): web and worker scale to zero meanwhile`,
  };
}

export interface SpecRequest {
  spec: { hibernate: boolean };
  summary: string;
}

/** spec.hibernate as asked; hibernating is refused mid-cutover, as the operator would refuse it. */
export function hibernationRequest(o: ObservabilityService, hibernate: boolean): SpecRequest {
  const who = `${o.metadata.namespace}/${o.metadata.name}`;
  if (hibernate && cutoverInProgress(o.status))
    throw new Refused(
      `${o.metadata.name} is in the middle of the cutover to EventsOnly: hibernate once status.state is EventsOnly`,
    );
  if (!hibernate && !o.spec.hibernate && !o.status?.hibernation)
    throw new Refused(`${o.metadata.name} is not hibernated: there is nothing to wake`);
  return {
    spec: { hibernate },
    summary: hibernate
      ? `asked ${who} to hibernate: web and worker drain and scale to zero (kubectl observatory status shows the phase)`
      : `asked ${who} to wake: web and worker return to ${o.status?.state ?? 'the first deployment'}`,
  };
}
