/**
 * The order a pass's actions run in: the planner's order, except that a run of consecutive
 * workload writes (Deployments, Services, PodDisruptionBudgets, all rendered from one state) and
 * Events goes out at once. A status write that records a decision (planner/decisions.ts) stays a
 * barrier, since what follows acts on it (the intent rule: status before what it announces); one
 * that only reports (a new generation observed, conditions, phase, planned and blocking lines)
 * goes out with the workload writes right after it. Job actions (a stale Job is deleted before its
 * successor is created) and requeues stay barriers. Each write is a round trip to the API server:
 * a replicas change used to wait for the status, then the Deployment.
 */
import type { Action, ObservabilityServiceStatus } from '../index.ts';
import { recordsDecision } from '../planner/decisions.ts';

const WORKLOADS = new Set<Action['kind']>([
  'applyDeployment',
  'applyService',
  'applyDisruptionBudget',
  'deleteDisruptionBudget',
]);
const TOGETHER = new Set<Action['kind']>([...WORKLOADS, 'event']);
const NOTHING = new Set<Action['kind']>();

/** `recorded`: the status the pass read, which its status write replaces. */
export function batches(actions: readonly Action[], recorded: ObservabilityServiceStatus = {}): Action[][] {
  const out: Action[][] = [];
  // What may join the last batch. After a status that only reports, workload writes; an Event
  // announces what the status records, so it waits until the status is stored.
  let joins = NOTHING;
  for (const action of actions) {
    const last = out.at(-1);
    if (last && joins.has(action.kind)) last.push(action);
    else {
      out.push([action]);
      if (TOGETHER.has(action.kind)) joins = TOGETHER;
      else if (action.kind === 'writeStatus' && !recordsDecision(recorded, action.status)) joins = WORKLOADS;
      else joins = NOTHING;
    }
  }
  return out;
}
