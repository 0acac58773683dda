/**
 * plan(object, world) -> (actions, status): the whole decision of one reconcile, pure.
 *
 * The steps run in order, each a pure function of the observed world returning its own
 * conditions, actions, status changes and verdict; the fold stops at the first step that does
 * not say "go on". A pass moves the deployment to status.target: the intent is recorded first
 * (G5), then preflight (release 3 -> 4 only), the backup before an irreversible step (release
 * 3 -> 4, the cutover), the schema Job and the rollout; status.state
 * advances only at the end of a fully successful pass (G2). Between passes the backfill chain,
 * the cutover gates and the cleanup run; a requested backup runs beside them, a requested restore
 * instead of them. The kstatus conditions summarise how the fold ended.
 */
import { type Spec, withDefaults } from '../api/effective.ts';
import type { ConditionType, ObservabilityServiceStatus } from '../api/v1alpha1.ts';
import { canonicalJson } from '../util/hash.ts';
import { type ConditionValue, writeConditions } from './conditions.ts';
import { transitionEvents } from './events.ts';
import { AUTOSCALE_SYNC_SECONDS, scaleWorkers } from './scaling.ts';
import { applyPatch, type ChildAction, type Step, type StepInput, type Verdict } from './step.ts';
import { backfillStep } from './steps/backfill.ts';
import { backupStep } from './steps/backup.ts';
import { backupVerifyStep } from './steps/backup-verify.ts';
import { cleanupStep } from './steps/cleanup.ts';
import { gatesStep } from './steps/gates.ts';
import { hibernateStep } from './steps/hibernate.ts';
import { intentStep } from './steps/intent.ts';
import { pauseStep } from './steps/pause.ts';
import { preflightStep } from './steps/preflight.ts';
import { requestedBackupStep } from './steps/requested-backup.ts';
import { restoreStep } from './steps/restore.ts';
import { rolloutStep } from './steps/rollout.ts';
import { scheduledBackupStep } from './steps/scheduled-backup.ts';
import { schemaStep } from './steps/schema.ts';
import { validateStep } from './steps/validate.ts';
import { type FoldOutcome, phaseOf, summaryConditions } from './summary.ts';
import type { Action, Plan, PlanInput } from './types.ts';

/** A StepInput before the fold, for what is decided ahead of it. */
function inputOf(
  object: PlanInput['object'],
  spec: Spec,
  world: PlanInput['world'],
  status: ObservabilityServiceStatus,
): StepInput {
  return {
    object,
    spec,
    world,
    render: { meta: object.metadata, spec },
    old: status,
    status,
    now: world.now.toISOString(),
    generation: object.metadata.generation,
  };
}

export const STEPS: readonly Step[] = [
  pauseStep,
  validateStep,
  requestedBackupStep,
  restoreStep,
  hibernateStep,
  scheduledBackupStep,
  backupVerifyStep,
  intentStep,
  preflightStep,
  backupStep,
  schemaStep,
  rolloutStep,
  backfillStep,
  gatesStep,
  cleanupStep,
];

/** The summary conditions, owned by the fold itself. */
export const SUMMARY_TYPES: readonly ConditionType[] = ['Ready', 'Reconciling', 'Stalled'];

const MAX_LIST = 16;

export function plan(input: PlanInput): Plan {
  const { object, world } = input;
  const old = object.status ?? {};
  const declared = withDefaults(object.spec);
  const scaling = scaleWorkers(inputOf(object, declared, world, old));
  const spec = scaling.spec;
  const base: Omit<StepInput, 'status'> = {
    object,
    spec,
    world,
    render: {
      meta: object.metadata,
      spec,
      ...(world.sources ? { sources: world.sources } : {}),
      recorded: [old.settings, old.target?.settings].filter((r) => r !== undefined),
    },
    old,
    now: world.now.toISOString(),
    generation: object.metadata.generation,
  };

  let status: ObservabilityServiceStatus = applyPatch(structuredClone(old), {
    autoscaling: scaling.autoscaling,
  });
  // Autoscaling reads the backlog on HPA's period, whatever else the fold waits for.
  let requeue: number | undefined = scaling.autoscaling ? AUTOSCALE_SYNC_SECONDS : undefined;
  let verdict: Verdict = { kind: 'next' };
  const domain: ConditionValue[] = [];
  const children: ChildAction[] = [];
  const planned: string[] = [];
  const waiting: string[] = [];
  let phase = 'Reconciling';
  for (const step of STEPS) {
    const r = step.run({ ...base, status });
    for (const c of r.conditions)
      if (!step.owns.includes(c.type))
        throw new Error(`step ${step.name} wrote ${c.type}, which it does not own`);
    domain.push(...r.conditions);
    children.push(...r.actions);
    planned.push(...r.planned);
    waiting.push(...r.waiting);
    if (r.requeueAfter !== undefined) requeue = Math.min(requeue ?? r.requeueAfter, r.requeueAfter);
    if (r.phase) phase = r.phase;
    status = applyPatch(status, r.status);
    if (r.verdict.kind !== 'next') {
      verdict = r.verdict;
      break;
    }
  }

  const outcome: FoldOutcome = { verdict, waiting, planned, state: status.state, phase };
  const next: ObservabilityServiceStatus = {
    ...status,
    observedGeneration: base.generation,
    phase: phaseOf(outcome),
    conditions: writeConditions(
      old.conditions,
      [...summaryConditions(outcome), ...domain],
      base.generation,
      base.now,
    ),
    plannedActions: planned.slice(0, MAX_LIST).map((s) => s.slice(0, 512)),
    blockedBy: waiting.slice(0, MAX_LIST).map((s) => s.slice(0, 1024)),
  };

  const actions: Action[] = [];
  if (canonicalJson(next) !== canonicalJson(old)) {
    actions.push({ kind: 'writeStatus', status: next });
    actions.push(...transitionEvents(old, next, spec.cutover.approval === 'Manual'));
  }
  actions.push(...children);
  if (requeue !== undefined && verdict.kind !== 'hold')
    actions.push({ kind: 'requeue', afterSeconds: requeue });
  return { actions, status: next };
}
