/**
 * What `kubectl observatory plan` shows: the planner's actions for the live object, each as one
 * line naming the object it touches, plus the status it would write. Pure.
 */
import { ENV } from '../../server/contract/env.ts';
import type { ModeSettings } from '../../server/contract/write-modes.ts';
import {
  type Action,
  desiredState,
  type ObservabilityService,
  type ObservationsNeeded,
  type Plan,
  type World,
  withDefaults,
} from '../index.ts';
import { nextState } from '../planner/states.ts';
import { modeSettingsFor } from '../render/settings.ts';
import { type Estimates, renderEstimates } from './estimates.ts';

export interface PlanView {
  name: string;
  namespace: string;
  generation: number;
  state: string | null;
  actions: string[];
  plannedActions: string[];
  blockedBy: string[];
  /** What the local run could not observe (the gates then wait, as the operator's would). */
  unobserved: string[];
  /** A change the spec asks that no Pod runs yet (absent: none waits). */
  pending?: PendingChange;
  /** Rows, disk and time of each backfill step still to run (absent: the worker did not report them). */
  estimates?: Estimates;
}

export interface PendingChange {
  from: string;
  to: string;
  /** `VARIABLE: now -> then` for each setting of web and worker the pass changes. */
  changes: string[];
  /** What approving (or the operator's next pass) does. */
  onApproval: string;
}

const kindOf: Record<string, string> = {
  applyDeployment: 'Deployment',
  applyService: 'Service',
  applyDisruptionBudget: 'PodDisruptionBudget',
  applyNetworkPolicy: 'NetworkPolicy',
};

export function describeAction(a: Action): string {
  switch (a.kind) {
    case 'applyDeployment':
    case 'applyService':
    case 'applyDisruptionBudget':
    case 'applyNetworkPolicy':
      return `apply ${kindOf[a.kind]} ${a.object.metadata?.name} (${a.role})`;
    case 'deleteDisruptionBudget':
      return `delete PodDisruptionBudget ${a.name} (${a.role})`;
    case 'deleteNetworkPolicy':
      return `delete NetworkPolicy ${a.name} (${a.role})`;
    case 'createJob':
      return `create Job ${a.object.metadata?.name} (${a.purpose})`;
    case 'deleteJob':
      return `delete Job ${a.name}: ${a.reason}`;
    case 'applyConfigMap':
      return `apply ConfigMap ${a.object.metadata?.name}`;
    case 'deleteConfigMap':
      return `delete ConfigMap ${a.name}`;
    case 'writeStatus':
      return `write status: state ${a.status.state ?? 'none'}, phase ${a.status.phase ?? '-'}`;
    case 'event':
      return `record ${a.type} Event ${a.reason}: ${a.message}`;
    case 'requeue':
      return `look again in ${a.afterSeconds}s`;
  }
}

/** What the operator would have observed that this run could not. */
function unobserved(world: World, need: ObservationsNeeded, unreadable: readonly string[]): string[] {
  const out: string[] = [];
  if (need.workerProbePath && (world.workerProbes ?? []).some((p) => p.result === 'unreachable'))
    out.push('a worker Pod did not answer the propagation probe');
  if (need.producersSince && !world.producers.known) out.push("the worker's producer report");
  if (need.backfill && !world.backfill.known) out.push("the worker's backfill report");
  if (need.ingestionBacklog && !world.ingestionBacklog?.known) out.push("the worker's ingestion backlog");
  if (unreadable.length > 0)
    out.push(
      `the ${unreadable.join(' and ')} labeled for rollouts (no access: the rollout hashes may differ)`,
    );
  return out;
}

/**
 * The state the spec asks that no pass has recorded yet, with the settings web and worker would
 * change to: until its pass is recorded (the cutover after approval) they run the recorded ones.
 */
export function pendingChange(o: ObservabilityService): PendingChange | undefined {
  const s = o.status ?? {};
  const state = s.state;
  if (!state) return undefined;
  const spec = withDefaults(o.spec);
  const to = nextState(state, desiredState(spec));
  if (to === state || s.target?.state === to) return undefined;
  const recorded = [s.settings, s.target?.settings].filter((r) => r !== undefined);
  const now = modeSettingsFor(state, spec, {}, recorded);
  const then = modeSettingsFor(to, spec);
  const changes = (Object.keys(ENV) as (keyof typeof ENV)[])
    .filter(
      (k): k is keyof ModeSettings =>
        k in now && now[k as keyof ModeSettings] !== then[k as keyof ModeSettings],
    )
    .map((k) => `${ENV[k]}: ${now[k]} -> ${then[k]}`);
  const manual = state === 'Dual' && to === 'EventsOnly' && spec.cutover.approval === 'Manual';
  const pass = `records the pass ${state} -> ${to}, runs its schema Job and rolls web and worker to the new settings`;
  return {
    from: state,
    to,
    changes,
    onApproval: manual
      ? `approving (kubectl observatory approve ${o.metadata.name}) lets the operator, once every cutover gate holds, commit to EventsOnly: it ${pass}`
      : `the operator ${pass} at its next reconcile`,
  };
}

export function planView(
  o: ObservabilityService,
  world: World,
  p: Plan,
  need: ObservationsNeeded,
  unreadable: readonly string[],
  estimates?: Estimates,
): PlanView {
  const pending = pendingChange(o);
  return {
    name: o.metadata.name,
    namespace: o.metadata.namespace,
    generation: o.metadata.generation,
    state: o.status?.state ?? null,
    actions: p.actions.map(describeAction),
    plannedActions: p.status.plannedActions ?? [],
    blockedBy: p.status.blockedBy ?? [],
    unobserved: unobserved(world, need, unreadable),
    ...(pending ? { pending } : {}),
    ...(estimates ? { estimates } : {}),
  };
}

export function renderPlan(v: PlanView): string {
  const lines = [
    `Plan for ObservabilityService ${v.namespace}/${v.name}, generation ${v.generation}, state ${v.state ?? 'none yet'} (computed locally; nothing was written)`,
  ];
  if (v.actions.length === 0) lines.push('No actions: the object is reconciled.');
  else lines.push('Actions, in order:', ...v.actions.map((a, i) => `  ${i + 1}. ${a}`));
  if (v.blockedBy.length > 0) lines.push('Blocked by:', ...v.blockedBy.map((b) => `  - ${b}`));
  if (v.pending) {
    const p = v.pending;
    lines.push(
      `Pending: ${p.from} -> ${p.to}, not rendered into any Pod yet (web and worker run the settings recorded for ${p.from})`,
      ...p.changes.map((c) => `  ${c}`),
      `  Then: ${p.onApproval}`,
    );
  }
  if (v.estimates) lines.push(...renderEstimates(v.estimates));
  if (v.unobserved.length > 0)
    lines.push(`Not observed (the plan waits for it, as the operator would): ${v.unobserved.join('; ')}`);
  return `${lines.join('\n')}\n`;
}
