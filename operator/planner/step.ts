/**
 * A planner step (after CloudNativePG's sub-reconcilers and Cluster API's planner): a pure
 * function of the observed world that returns the conditions it owns, the child actions it wants,
 * the status fields it moves, and a verdict: go on, stop here (look again later), stall (the user
 * must act), hold (paused) or hibernated. `plan()` folds the steps in order and stops at the first that stops.
 */
import type { Spec } from '../api/effective.ts';
import type { ConditionType, ObservabilityService, ObservabilityServiceStatus } from '../api/v1alpha1.ts';
import type { RenderContext } from '../render/workloads.ts';
import { type ConditionValue, condition, type Facts } from './conditions.ts';
import type { Action, World } from './types.ts';

export type ChildAction = Exclude<Action, { kind: 'writeStatus' | 'event' | 'requeue' }>;

export interface StepInput {
  object: ObservabilityService;
  spec: Spec;
  world: World;
  render: RenderContext;
  /** The status as read at the start of the reconcile. */
  old: ObservabilityServiceStatus;
  /** The status with the earlier steps' changes of this reconcile applied. */
  status: ObservabilityServiceStatus;
  now: string;
  generation: number;
}

export type Verdict =
  | { kind: 'next' }
  | { kind: 'stop' }
  | { kind: 'stall'; reason: string; message: string }
  | { kind: 'hold' }
  /** Hibernated as the spec asks: nothing else runs, and that is the desired state. */
  | { kind: 'hibernated'; detail: string };

export interface StepResult {
  conditions: ConditionValue[];
  actions: ChildAction[];
  /** Status fields this step moves (an undefined value removes the field). */
  status: Partial<ObservabilityServiceStatus>;
  /** Human lines for status.plannedActions and status.blockedBy. */
  planned: string[];
  waiting: string[];
  requeueAfter?: number;
  /** Printer-column summary while this step is where the work is. */
  phase?: string;
  verdict: Verdict;
}

export interface Step {
  name: string;
  /** The condition types only this step writes. */
  owns: readonly ConditionType[];
  run(input: StepInput): StepResult;
}

/** The result a step builds while it runs; each step makes its own and returns it. */
export class StepOutput {
  readonly conditions: ConditionValue[] = [];
  readonly actions: ChildAction[] = [];
  readonly planned: string[] = [];
  readonly waiting: string[] = [];
  status: Partial<ObservabilityServiceStatus> = {};
  requeueAfter: number | undefined;
  phase: string | undefined;
  stall: { reason: string; message: string } | undefined;

  set(type: ConditionType, reason: string, facts?: Facts): void {
    const i = this.conditions.findIndex((c) => c.type === type);
    const c = condition(type, reason, facts);
    if (i >= 0) this.conditions[i] = c;
    else this.conditions.push(c);
  }

  act(action: ChildAction, description: string): void {
    this.actions.push(action);
    this.planned.push(description);
  }

  patch(p: Partial<ObservabilityServiceStatus>): void {
    this.status = { ...this.status, ...p };
  }

  /** Something outside the operator must happen first; look again after `seconds`. */
  wait(seconds: number, why: string): void {
    if (!this.waiting.includes(why)) this.waiting.push(why);
    this.requeue(seconds);
  }

  requeue(seconds: number): void {
    this.requeueAfter = Math.min(this.requeueAfter ?? seconds, Math.max(0, Math.round(seconds)));
  }

  /** Progress needs the user (kstatus Stalled); the first stall of the step wins. */
  stalled(reason: string, message: string): void {
    this.stall ??= { reason, message };
    if (!this.waiting.includes(message)) this.waiting.push(message);
  }

  /** Go on unless the step stalled. */
  next(): StepResult {
    return this.result(this.stall ? { kind: 'stall', ...this.stall } : { kind: 'next' });
  }

  /** Stop here unless the step stalled. */
  stop(): StepResult {
    return this.result(this.stall ? { kind: 'stall', ...this.stall } : { kind: 'stop' });
  }

  result(verdict: Verdict): StepResult {
    return {
      conditions: this.conditions,
      actions: this.actions,
      status: this.status,
      planned: this.planned,
      waiting: this.waiting,
      ...(this.requeueAfter !== undefined ? { requeueAfter: this.requeueAfter } : {}),
      ...(this.phase !== undefined ? { phase: this.phase } : {}),
      verdict,
    };
  }
}

/** The status after a step's changes (undefined removes a field). */
export function applyPatch(
  status: ObservabilityServiceStatus,
  patch: Partial<ObservabilityServiceStatus>,
): ObservabilityServiceStatus {
  const out: Record<string, unknown> = { ...status };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out as ObservabilityServiceStatus;
}
