/**
 * The pass in progress, read from status: a pass moves the deployment to status.target (state +
 * image). Every pass step reads it from the same status, so they agree on what is in progress.
 */
import { desiredState } from '../api/effective.ts';
import type { MigrationState, ObservabilityServiceStatus } from '../api/v1alpha1.ts';
import { committed } from '../validation.ts';
import { isRelease4, nextState } from './states.ts';
import type { StepInput } from './step.ts';

export type Target = NonNullable<ObservabilityServiceStatus['target']>;

export interface PassView {
  /** The observed state (Release3 before the first pass). */
  state: MigrationState;
  /** The next state on the way to the desired one. */
  want: MigrationState;
  /** The pass in progress, if any. */
  pass?: Target;
  /** A new pass is needed (another state or image), none in progress. */
  needsPass: boolean;
}

/**
 * An image upgrade within release 4: the pass keeps a running release 4 state and changes its
 * image, so the new image's migrations run under their own gates (preflight, backup, rollback).
 */
export function isImageUpgrade(status: ObservabilityServiceStatus, pass: Target): boolean {
  const { state, deployedImage } = status;
  return (
    state !== undefined &&
    isRelease4(state) &&
    pass.state === state &&
    deployedImage !== undefined &&
    pass.image !== deployedImage
  );
}

export function passOf(input: StepInput): PassView {
  const s = input.status;
  const state: MigrationState = s.state ?? 'Release3';
  const desired = desiredState(input.spec);
  // One change at a time: within release 4 a new image is rolled out in the running state first,
  // so a failed migration has one previous image and schema to return to.
  const upgrade =
    s.state !== undefined &&
    isRelease4(state) &&
    isRelease4(desired) &&
    s.deployedImage !== undefined &&
    input.spec.image !== s.deployedImage;
  const want = committed(s) ? 'EventsOnly' : upgrade ? state : nextState(state, desired);
  const target = s.target;
  let pass = target && !(target.state === state && target.image === s.deployedImage) ? target : undefined;
  // A pass that is not committed (the cutover; an image pass in EventsOnly commits nothing new)
  // and has not touched the schema gives way to a new request.
  if (
    pass &&
    (pass.state !== want || pass.image !== input.spec.image) &&
    (pass.state !== 'EventsOnly' || state === 'EventsOnly') &&
    !pass.schemaStarted
  )
    pass = undefined;
  const needsPass = !pass && (want !== state || input.spec.image !== s.deployedImage);
  return { state, want, ...(pass ? { pass } : {}), needsPass };
}

/** Printer-column phase of the pass `pass` from the recorded status. */
export function passPhase(status: ObservabilityServiceStatus, pass: Target): string {
  if (isImageUpgrade(status, pass)) return pass.rollingBack ? 'RollingBackUpgrade' : 'Upgrading';
  return phaseOfPass(status.state ?? 'Release3', pass.state);
}

/** Printer-column phase of a pass. */
export function phaseOfPass(from: MigrationState, to: MigrationState): string {
  if (to === 'EventsOnly' && from !== 'EventsOnly') return 'CuttingOver';
  if (to === 'Release3' && from !== 'Release3') return 'RollingBack';
  return from === to ? 'RollingOut' : `MovingTo${to}`;
}
