/** Keeps the web and worker Deployments and Services as rendered for one state and image. */
import type { MigrationState } from '../api/v1alpha1.ts';
import { renderDisruptionBudget } from '../render/disruption.ts';
import { deploymentName, disruptionBudgetName, networkPolicyName, type Role } from '../render/names.ts';
import { renderNetworkPolicy } from '../render/network-policy.ts';
import { renderDeployment, renderService, specHashOf } from '../render/workloads.ts';
import { rolloutState } from './rollout.ts';
import { type StepInput, StepOutput } from './step.ts';

const ROLES: readonly Role[] = ['web', 'worker'];

export function applyServices(input: StepInput, out: StepOutput): void {
  for (const role of ROLES) {
    const desired = renderService(input.render, role);
    if (input.world.services[role]?.specHash !== specHashOf(desired))
      out.act({ kind: 'applyService', role, object: desired }, `apply Service ${desired.metadata!.name}`);
  }
}

/** Keeps each role's PodDisruptionBudget as rendered, and removes one the spec turned off. */
export function applyDisruptionBudgets(input: StepInput, out: StepOutput): void {
  for (const role of ROLES) {
    const desired = renderDisruptionBudget(input.render, role);
    const observed = input.world.disruptionBudgets?.[role];
    const name = disruptionBudgetName(input.object.metadata.name, role);
    if (desired && observed?.specHash !== specHashOf(desired))
      out.act({ kind: 'applyDisruptionBudget', role, object: desired }, `apply PodDisruptionBudget ${name}`);
    if (!desired && observed)
      out.act({ kind: 'deleteDisruptionBudget', role, name }, `delete PodDisruptionBudget ${name}`);
  }
}

/** Keeps each role's NetworkPolicy as rendered, and removes one the spec turned off. */
export function applyNetworkPolicies(input: StepInput, out: StepOutput): void {
  for (const role of ROLES) {
    const desired = renderNetworkPolicy(input.render, role);
    const observed = input.world.networkPolicies?.[role];
    const name = networkPolicyName(input.object.metadata.name, role);
    if (desired && observed?.specHash !== specHashOf(desired))
      out.act({ kind: 'applyNetworkPolicy', role, object: desired }, `apply NetworkPolicy ${name}`);
    if (!desired && observed)
      out.act({ kind: 'deleteNetworkPolicy', role, name }, `delete NetworkPolicy ${name}`);
  }
}

/**
 * Applies what differs and reports whether both Deployments run the rendering of `state` with
 * `image` on every replica (observed generation caught up, all replicas updated, ready, available).
 */
export function applyDeployments(
  input: StepInput,
  out: StepOutput,
  state: MigrationState,
  image: string,
): boolean {
  const render = { ...input.render, spec: { ...input.spec, image } };
  let done = true;
  for (const role of ROLES) {
    const desired = renderDeployment(render, role, state);
    const observed = input.world.deployments[role];
    const name = deploymentName(input.object.metadata.name, role);
    if (observed?.specHash !== specHashOf(desired))
      out.act({ kind: 'applyDeployment', role, object: desired }, `apply Deployment ${name} (${state})`);
    const r = rolloutState(name, observed, desired);
    if (!r.done) {
      done = false;
      out.wait(10, r.detail);
    }
  }
  return done;
}

/** Whether the deployed state runs on every replica (the fact later steps gate on). */
export function deployedRolledOut(input: StepInput): boolean {
  const { state, deployedImage } = input.status;
  return (
    state !== undefined &&
    deployedImage !== undefined &&
    applyDeployments(input, new StepOutput(), state, deployedImage)
  );
}
