/**
 * Turns a planning pass into the Plan: kstatus conditions (Ready, Reconciling, Stalled) from the
 * outcome, domain conditions, plannedActions/blockedBy, Events for condition transitions, and a
 * status write only when something changed.
 */
import type { Condition, ConditionType, ObservabilityServiceStatus } from '../api/v1alpha1.ts';
import { canonicalJson, shortHash } from '../util/hash.ts';
import { setCondition } from './conditions.ts';
import type { PlanContext } from './context.ts';
import type { Action, Plan } from './types.ts';

const MAX_LIST = 16;

/** Records when the spec (apart from approvals) last changed, which approvals must name. */
export function trackApprovalSpec(ctx: PlanContext): void {
  const { cutover, ...rest } = ctx.object.spec;
  const { approvedGeneration: _ignored, ...cutoverRest } = cutover ?? {};
  const specHash = shortHash({ ...rest, cutover: cutoverRest }, 16);
  if (ctx.status.approval?.specHash !== specHash)
    ctx.status.approval = { specGeneration: ctx.generation, specHash };
}

const DOMAIN: readonly ConditionType[] = [
  'PreflightPassed',
  'SchemaMigrated',
  'BackfillComplete',
  'PropagationHealthy',
  'ProducersCompatible',
  'CutoverApproved',
  'CutoverReady',
];

function fillDomainDefaults(ctx: PlanContext): void {
  const state = ctx.status.state;
  const passing =
    ctx.status.target &&
    !(ctx.status.target.state === state && ctx.status.target.image === ctx.status.deployedImage);
  if (!ctx.domain.has('PreflightPassed')) {
    if (state && state !== 'Release3')
      ctx.condition('PreflightPassed', 'True', 'Release4Running', 'the deployment runs release 4');
    else ctx.condition('PreflightPassed', 'Unknown', 'NotRequired', 'runs before moving release "3" to "4"');
  }
  if (!ctx.domain.has('SchemaMigrated') && state && !passing)
    ctx.condition(
      'SchemaMigrated',
      'True',
      'SchemaUpToDate',
      `the schema of the last pass (${state}) is in place`,
    );
}

function stallEvent(before: Condition | undefined, after: Condition): boolean {
  return (
    after.status === 'True' &&
    (before?.status !== 'True' || before.reason !== after.reason || before.message !== after.message)
  );
}

export function summarize(ctx: PlanContext): Plan {
  const gen = ctx.generation;
  const paused = ctx.spec.paused;
  const conditions: Condition[] = structuredClone(ctx.old.conditions ?? []);
  const set = (type: ConditionType, status: 'True' | 'False' | 'Unknown', reason: string, message: string) =>
    setCondition(conditions, ctx.old.conditions, type, { status, reason, message }, gen, ctx.now);

  // Paused and invalid passes keep the domain conditions as last computed (with their generation).
  if (!paused && ctx.phase !== 'InvalidSpec') {
    fillDomainDefaults(ctx);
    for (const type of DOMAIN) {
      const v = ctx.domain.get(type);
      if (v) set(type, v.status, v.reason, v.message);
    }
  }
  set(
    'Paused',
    paused ? 'True' : 'False',
    paused ? 'SpecPaused' : 'NotPaused',
    paused ? 'spec.paused is true' : '',
  );
  if (ctx.stall) set('Stalled', 'True', ctx.stall.reason, ctx.stall.message);
  else set('Stalled', 'False', 'NotStalled', '');
  const ready = ctx.ready && !ctx.stall && !paused;
  set(
    'Ready',
    ready ? 'True' : 'False',
    ready ? 'Reconciled' : paused ? 'Paused' : ctx.stall ? ctx.stall.reason : ctx.phase,
    ready ? `state ${ctx.status.state} reached and rolled out` : (ctx.blocked[0] ?? ctx.planned[0] ?? ''),
  );
  const reconciling = !ready && !ctx.stall && !paused;
  set(
    'Reconciling',
    reconciling ? 'True' : 'False',
    reconciling ? ctx.phase : 'NotReconciling',
    reconciling ? (ctx.planned[0] ?? ctx.blocked[0] ?? '') : '',
  );

  const status: ObservabilityServiceStatus = {
    ...ctx.status,
    observedGeneration: gen,
    phase: ctx.stall ? 'Stalled' : ready ? 'Ready' : ctx.phase,
    conditions,
    plannedActions: ctx.planned.slice(0, MAX_LIST).map((s) => s.slice(0, 512)),
    blockedBy: ctx.blocked.slice(0, MAX_LIST).map((s) => s.slice(0, 1024)),
  };

  const actions: Action[] = [];
  if (canonicalJson(status) !== canonicalJson(ctx.old)) actions.push({ kind: 'writeStatus', status });
  actions.push(...ctx.children, ...ctx.events);
  const find = (list: readonly Condition[] | undefined, t: ConditionType) => list?.find((c) => c.type === t);
  const stalled = find(conditions, 'Stalled')!;
  if (stallEvent(find(ctx.old.conditions, 'Stalled'), stalled))
    actions.push({ kind: 'event', type: 'Warning', reason: stalled.reason, message: stalled.message });
  const wasReady = find(ctx.old.conditions, 'Ready')?.status === 'True';
  if (ready && !wasReady)
    actions.push({
      kind: 'event',
      type: 'Normal',
      reason: 'Ready',
      message: `state ${status.state} reached and rolled out`,
    });
  const wasPaused = find(ctx.old.conditions, 'Paused')?.status === 'True';
  if (paused !== wasPaused)
    actions.push({
      kind: 'event',
      type: 'Normal',
      reason: paused ? 'Paused' : 'Resumed',
      message: paused ? 'spec.paused is true: no changes are made' : 'reconciliation resumed',
    });
  if (ctx.requeueSeconds !== undefined && !paused)
    actions.push({ kind: 'requeue', afterSeconds: ctx.requeueSeconds });
  return { actions, status };
}
