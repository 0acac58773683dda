/** Whether a Deployment runs the desired template on every replica (G2's "rolled out"). */
import type { V1Deployment } from '@kubernetes/client-node';
import { configHashOf, specHashOf } from '../render/workloads.ts';
import type { ObservedDeployment } from './types.ts';

export interface RolloutState {
  done: boolean;
  /** Why not, for blockedBy. */
  detail: string;
}

export function rolloutState(
  name: string,
  observed: ObservedDeployment | undefined,
  desired: V1Deployment,
): RolloutState {
  const want = desired.spec?.replicas ?? 1;
  if (!observed) return { done: false, detail: `Deployment ${name} does not exist yet` };
  if (observed.specHash !== specHashOf(desired) || observed.configHash !== configHashOf(desired))
    return { done: false, detail: `Deployment ${name} does not have the desired settings yet` };
  if (observed.observedGeneration < observed.generation)
    return {
      done: false,
      detail: `Deployment ${name}: controller has not observed generation ${observed.generation}`,
    };
  const counts = [
    observed.replicas,
    observed.updatedReplicas,
    observed.readyReplicas,
    observed.availableReplicas,
  ];
  if (observed.specReplicas !== want || counts.some((c) => c !== want))
    return {
      done: false,
      detail: `Deployment ${name}: ${observed.updatedReplicas} updated, ${observed.readyReplicas} ready, ${observed.availableReplicas} available of ${want} (${observed.replicas} pods)`,
    };
  if (observed.stalePods > 0)
    return {
      done: false,
      detail: `Deployment ${name}: ${observed.stalePods} pod(s) of an earlier template still running or terminating`,
    };
  return { done: true, detail: `Deployment ${name} rolled out` };
}
