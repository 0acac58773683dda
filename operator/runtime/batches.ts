/**
 * The order a pass's actions run in: the planner's order, except that a run of consecutive
 * workload writes (Deployments, Services, PodDisruptionBudgets, all rendered from one state) and
 * Events goes out at once. A status write that records a decision (planner/decisions.ts) stays a
 * barrier, since what follows acts on it (the intent rule: status before what it announces); one
 * that only reports (observedGeneration, conditions, phase, planned and blocking lines) goes out
 * with the workload writes after it. Job actions (a stale Job is deleted before its successor is
 * created) and requeues stay barriers. Each write is a round trip to the API server: a replicas
 * change used to wait for the status, then the Deployment.
 */
import type { Action, ObservabilityServiceStatus } from '../index.ts';
import { recordsDecision } from '../planner/decisions.ts';

const TOGETHER = new Set<Action['kind']>([
  'applyDeployment',
  'applyService',
  'applyDisruptionBudget',
  'deleteDisruptionBudget',
  'event',
]);

/** `recorded`: the status the pass read, which its status write replaces. */
export function batches(actions: readonly Action[], recorded: ObservabilityServiceStatus = {}): Action[][] {
  const out: Action[][] = [];
  // Whether the last batch takes the workload writes that follow.
  let open = false;
  for (const action of actions) {
    const last = out.at(-1);
    if (last && open && TOGETHER.has(action.kind)) last.push(action);
    else {
      out.push([action]);
      open =
        TOGETHER.has(action.kind) ||
        (action.kind === 'writeStatus' && !recordsDecision(recorded, action.status));
    }
  }
  return out;
}
