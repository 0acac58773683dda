/** Keeps the web and worker Deployments and Services as rendered for one state and image. */
import type { MigrationState } from '../api/v1alpha1.ts';
import { deploymentName, type Role } from '../render/names.ts';
import { renderDeployment, renderService, specHashOf } from '../render/workloads.ts';
import type { PlanContext } from './context.ts';
import { rolloutState } from './rollout.ts';

const ROLES: readonly Role[] = ['web', 'worker'];

export function applyServices(ctx: PlanContext): void {
  for (const role of ROLES) {
    const desired = renderService(ctx.render, role);
    if (ctx.world.services[role]?.specHash !== specHashOf(desired))
      ctx.act({ kind: 'applyService', role, object: desired }, `apply Service ${desired.metadata!.name}`);
  }
}

/**
 * Applies what differs and reports whether both Deployments run the rendering of `state` with
 * `image` on every replica (observed generation caught up, all replicas updated, ready, available).
 */
export function applyDeployments(ctx: PlanContext, state: MigrationState, image: string): boolean {
  const render = { ...ctx.render, spec: { ...ctx.spec, image } };
  let done = true;
  for (const role of ROLES) {
    const desired = renderDeployment(render, role, state);
    const observed = ctx.world.deployments[role];
    const name = deploymentName(ctx.name, role);
    if (observed?.specHash !== specHashOf(desired))
      ctx.act({ kind: 'applyDeployment', role, object: desired }, `apply Deployment ${name} (${state})`);
    const r = rolloutState(name, observed, desired);
    if (!r.done) {
      done = false;
      ctx.wait(10, r.detail);
    }
  }
  return done;
}
