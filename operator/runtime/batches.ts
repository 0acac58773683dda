/**
 * The order a pass's actions run in: the planner's order, except that a run of consecutive
 * workload writes (Deployments, Services, PodDisruptionBudgets, NetworkPolicies, all rendered from
 * one state) and
 * Events goes out at once. A status write (the intent rule: status before what it announces), Job
 * actions (a stale Job is deleted before its successor is created) and requeues stay barriers.
 * Each write is a round trip to the API server; a replicas change used to wait for the status,
 * then the PodDisruptionBudget, then the Deployment, one after the other.
 */
import type { Action } from '../index.ts';

const TOGETHER = new Set<Action['kind']>([
  'applyDeployment',
  'applyService',
  'applyDisruptionBudget',
  'deleteDisruptionBudget',
  'applyNetworkPolicy',
  'deleteNetworkPolicy',
  'event',
]);

export function batches(actions: readonly Action[]): Action[][] {
  const out: Action[][] = [];
  for (const action of actions) {
    const last = out.at(-1);
    if (last && TOGETHER.has(action.kind) && TOGETHER.has(last[0]!.kind)) last.push(action);
    else out.push([action]);
  }
  return out;
}
