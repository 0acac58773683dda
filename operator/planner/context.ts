/**
 * The working state of one planning pass: the status being built, the child actions, what is
 * planned and what blocks. Every rule module writes into it; `summarize` turns it into a Plan.
 */
import { type Spec, withDefaults } from '../api/effective.ts';
import type {
  Condition,
  ConditionType,
  ObservabilityService,
  ObservabilityServiceStatus,
} from '../api/v1alpha1.ts';
import type { RenderContext } from '../render/workloads.ts';
import type { ConditionStatus } from './conditions.ts';
import type { Action, World } from './types.ts';

export type ChildAction = Exclude<Action, { kind: 'writeStatus' | 'event' | 'requeue' }>;
export type EventAction = Extract<Action, { kind: 'event' }>;

export interface Stall {
  reason: string;
  message: string;
}

export class PlanContext {
  readonly object: ObservabilityService;
  readonly spec: Spec;
  readonly world: World;
  readonly render: RenderContext;
  readonly old: ObservabilityServiceStatus;
  /** The status being built, starting as a copy of the old one. */
  readonly status: ObservabilityServiceStatus;
  readonly now: string;
  readonly generation: number;
  readonly children: ChildAction[] = [];
  readonly events: EventAction[] = [];
  readonly planned: string[] = [];
  readonly blocked: string[] = [];
  readonly domain = new Map<ConditionType, { status: ConditionStatus; reason: string; message: string }>();
  requeueSeconds: number | undefined;
  stall: Stall | undefined;
  /** Short summary for printer columns. */
  phase = 'Reconciling';
  /** Observed state equals the desired one and everything is rolled out and done. */
  ready = false;

  constructor(object: ObservabilityService, world: World) {
    this.object = object;
    this.world = world;
    this.spec = withDefaults(object.spec);
    this.render = { meta: object.metadata, spec: this.spec };
    this.old = object.status ?? {};
    this.status = structuredClone(this.old);
    this.now = world.now.toISOString();
    this.generation = object.metadata.generation;
  }

  get name(): string {
    return this.object.metadata.name;
  }

  act(action: ChildAction, description: string): void {
    this.children.push(action);
    this.planned.push(description);
  }

  /** Drops the child actions planned so far (the plan that records an intent does nothing else). */
  discardActions(): void {
    this.children.length = 0;
    this.planned.length = 0;
    this.blocked.length = 0;
    this.requeueSeconds = undefined;
  }

  event(type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.events.push({ kind: 'event', type, reason, message });
  }

  /** Something outside the operator must happen first; look again after `seconds`. */
  wait(seconds: number, why: string): void {
    if (!this.blocked.includes(why)) this.blocked.push(why);
    this.requeueAfter(seconds);
  }

  requeueAfter(seconds: number): void {
    this.requeueSeconds = Math.min(this.requeueSeconds ?? seconds, Math.max(0, Math.round(seconds)));
  }

  /** Progress needs the user (kstatus Stalled); the first stall wins. */
  stalled(reason: string, message: string): void {
    this.stall ??= { reason, message };
    if (!this.blocked.includes(message)) this.blocked.push(message);
  }

  condition(type: ConditionType, status: ConditionStatus, reason: string, message: string): void {
    this.domain.set(type, { status, reason, message });
  }

  oldCondition(type: ConditionType): Condition | undefined {
    return this.old.conditions?.find((c) => c.type === type);
  }
}
