/**
 * Where the autoscaler meets the fold: the worker count it decides becomes spec.worker.replicas
 * for every rendering of this reconcile, recorded in status.autoscaling (written before any child
 * is applied). A pass in progress, a restore or a hibernation (which hold web and worker at zero)
 * and spec.paused
 * need the count fixed: the decision then keeps the recorded one.
 */
import { type Spec, workerAutoscaling } from '../api/effective.ts';
import { ANNOTATIONS, type AutoscalingStatus } from '../api/v1alpha1.ts';
import { decideWorkers } from './autoscale.ts';
import { passOf } from './pass.ts';
import type { StepInput } from './step.ts';

/** HPA's sync period: the backlog is read this often while the autoscaler is on. */
export const AUTOSCALE_SYNC_SECONDS = 15;

function heldFor(input: StepInput): string | undefined {
  if (input.spec.paused) return 'spec.paused is true';
  if (input.spec.hibernate || input.status.hibernation)
    return 'hibernation holds web and worker at zero and keeps the count for the wake';
  const request = input.object.metadata.annotations?.[ANNOTATIONS.restoreRequested];
  const restore = input.status.restore;
  if ((request && request !== restore?.request) || (restore && restore.phase !== 'Complete'))
    return 'a restore holds web and worker at zero';
  const { pass } = passOf(input);
  return pass ? `the pass to ${pass.state} rolls out on a fixed count` : undefined;
}

export interface WorkerScaling {
  spec: Spec;
  /** The decision to record; undefined when the autoscaler is off. */
  autoscaling: AutoscalingStatus | undefined;
}

export function scaleWorkers(input: StepInput): WorkerScaling {
  const policy = workerAutoscaling(input.spec);
  if (!policy) return { spec: input.spec, autoscaling: undefined };
  const autoscaling = decideWorkers({
    policy,
    recorded: input.status.autoscaling,
    startReplicas: input.spec.worker.replicas,
    worker: input.world.deployments.worker,
    backlog: input.world.ingestionBacklog ?? { known: false },
    held: heldFor(input),
    now: input.world.now,
  });
  const spec = { ...input.spec, worker: { ...input.spec.worker, replicas: autoscaling.desiredReplicas } };
  return { spec, autoscaling };
}
