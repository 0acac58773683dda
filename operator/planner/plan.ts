/**
 * plan(object, world) -> (actions, status): the whole decision of one reconcile, pure.
 *
 * A "pass" moves the deployment to status.target (state + image): record the intent first (G5),
 * then preflight (release 3 -> 4 only), then the schema Job (migrate up, or the rollback to 37),
 * then roll both Deployments out; only at the end of a fully successful pass does status.state
 * advance (G2). Between passes the Deployments are kept as rendered from status (G1), and in
 * Dual/EventsOnly the backfill chain and the cleanup run. The cutover to EventsOnly is a pass
 * whose intent is recorded only when every gate holds, and once recorded it is never taken back.
 */
import { RELEASE_3_SCHEMA_VERSION } from '../../server/contract/schema-versions.ts';
import { desiredState } from '../api/effective.ts';
import type { MigrationState } from '../api/v1alpha1.ts';
import { committed, validate } from '../validation.ts';
import { reconcileBackfill } from './backfill.ts';
import { PlanContext } from './context.ts';
import { approvalGate, type Gate, historicDataGate, producersGate, propagationGate } from './gates.ts';
import { ensureJob } from './jobs.ts';
import { isRelease4, nextState } from './states.ts';
import { summarize, trackApprovalSpec } from './summary.ts';
import type { Plan, PlanInput } from './types.ts';
import { applyDeployments, applyServices } from './workloads.ts';

export function plan(input: PlanInput): Plan {
  const ctx = new PlanContext(input.object, input.world);
  trackApprovalSpec(ctx);
  if (ctx.spec.paused) {
    ctx.phase = 'Paused';
    ctx.blocked.push('spec.paused is true: no changes are made');
    return summarize(ctx);
  }
  const violations = validate({ meta: ctx.object.metadata, spec: ctx.object.spec, status: ctx.old });
  if (violations.length > 0) {
    ctx.phase = 'InvalidSpec';
    ctx.stalled(violations[0]!.reason, violations.map((v) => `${v.field}: ${v.message}`).join('; '));
    for (const v of violations.slice(1)) ctx.blocked.push(`${v.field}: ${v.message}`);
    return summarize(ctx);
  }
  reconcile(ctx);
  return summarize(ctx);
}

function reconcile(ctx: PlanContext): void {
  const state: MigrationState = ctx.old.state ?? 'Release3';
  const desired = desiredState(ctx.spec);
  const want = committed(ctx.old) ? 'EventsOnly' : nextState(state, desired);
  const deployedImage = ctx.old.deployedImage;
  const target = ctx.old.target;

  let pass = target && !(target.state === state && target.image === deployedImage) ? target : undefined;
  if (pass && (pass.state !== want || pass.image !== ctx.spec.image)) {
    if (pass.state === 'EventsOnly' || pass.schemaStarted) {
      // Committed, or the schema already changing: finish this pass first; a new image gets its own pass.
      if (pass.state !== want) ctx.blocked.push(`the pass to ${pass.state} must finish first`);
    } else pass = undefined;
  }
  if (pass) {
    runPass(ctx, pass, state);
    return;
  }

  // No pass in progress: keep the workloads as the status says, run the in-state work.
  const image = deployedImage ?? ctx.spec.image;
  applyServices(ctx);
  const rolledOut = deployedImage !== undefined && applyDeployments(ctx, state, image);
  const backfill = reconcileBackfill(ctx, state, rolledOut);
  const cleanupDone = reconcileCleanup(ctx, state, image, backfill.enabled && !backfill.complete);
  const gates =
    state === 'Dual' && want === 'EventsOnly' ? cutoverGates(ctx, backfill.complete, rolledOut) : undefined;
  if (!gates) describeCutover(ctx, state);

  const needsPass = want !== state || ctx.spec.image !== deployedImage;
  if (needsPass) {
    if (preconditionsHold(ctx, state, want, gates)) {
      recordIntent(ctx, state, want);
      return;
    }
    ctx.phase = want === 'EventsOnly' ? 'AwaitingCutover' : 'Blocked';
    return;
  }
  const backfillPending = backfill.enabled && !backfill.complete;
  ctx.ready = rolledOut && !backfillPending && cleanupDone;
  ctx.phase = ctx.ready ? state : backfillPending ? 'Backfilling' : rolledOut ? 'CleaningUp' : 'RollingOut';
}

/** Whether a new pass from `from` to `to` may start now; says why not otherwise. */
function preconditionsHold(
  ctx: PlanContext,
  from: MigrationState,
  to: MigrationState,
  gates?: Gate[],
): boolean {
  if (isRelease4(to) && !isRelease4(from) && !ctx.spec.upgrade?.backupConfirmed) {
    ctx.stalled(
      'BackupNotConfirmed',
      'spec.upgrade.backupConfirmed: back up the relational and analytics databases, then set it to true to move release "3" to "4"',
    );
    return false;
  }
  if (to === 'EventsOnly' && from === 'Dual') return gates?.every((g) => g.ok) ?? false;
  if (to === 'Release3' && isRelease4(from)) {
    const running = ctx.world.jobs.find((j) => j.purpose.startsWith('backfill-') && j.outcome === 'running');
    if (running) {
      ctx.wait(
        15,
        `the rollback waits for the backfill Job ${running.name} to stop (it writes the tables the rollback drops)`,
      );
      return false;
    }
  }
  return true;
}

/** Intent first (G5): this plan only writes status; the next one acts on it. */
function recordIntent(ctx: PlanContext, from: MigrationState, to: MigrationState): void {
  ctx.discardActions();
  ctx.status.target = { state: to, since: ctx.now, image: ctx.spec.image };
  ctx.phase = phaseOfPass(from, to);
  ctx.planned.push(`record the intent to move ${from} -> ${to} (${ctx.spec.image})`);
  const what = from === to ? `roll out ${ctx.spec.image} in ${to}` : `move from ${from} to ${to}`;
  ctx.event(
    'Normal',
    to === 'EventsOnly' && from !== to ? 'CutoverStarted' : 'TargetRecorded',
    `recorded the intent to ${what}`,
  );
  ctx.requeueAfter(0);
}

function phaseOfPass(from: MigrationState, to: MigrationState): string {
  if (to === 'EventsOnly' && from !== 'EventsOnly') return 'CuttingOver';
  if (to === 'Release3' && from !== 'Release3') return 'RollingBack';
  return from === to ? 'RollingOut' : `MovingTo${to}`;
}

function runPass(
  ctx: PlanContext,
  pass: NonNullable<PlanContext['old']['target']>,
  from: MigrationState,
): void {
  const to = pass.state;
  const t = ctx.status.target!;
  ctx.phase = phaseOfPass(from, to);
  applyServices(ctx);
  // Keep observing a backfill Job that is still running, without starting new steps.
  if (from === 'Dual' || from === 'EventsOnly') reconcileBackfill(ctx, from, false);
  describeCutover(ctx, from);

  const jobInputs = { pass: pass.since };
  if (!isRelease4(from) && isRelease4(to) && !pass.preflightPassed) {
    const r = ensureJob(ctx, {
      purpose: 'preflight',
      state: to,
      image: pass.image,
      inputs: jobInputs,
      label: 'preflight checks',
      failureReason: 'PreflightFailed',
    });
    ctx.condition(
      'PreflightPassed',
      r === 'succeeded' ? 'True' : 'False',
      r === 'failed' ? 'PreflightFailed' : r === 'succeeded' ? 'PreflightSucceeded' : 'PreflightRunning',
      r === 'failed'
        ? 'the preflight Job failed'
        : r === 'succeeded'
          ? 'observatory preflight passed'
          : 'observatory preflight is running',
    );
    if (r !== 'succeeded') return;
    t.preflightPassed = true;
    ctx.event('Normal', 'PreflightPassed', 'observatory preflight passed');
  }

  if (!pass.schemaMigrated) {
    const rollback = to === 'Release3' && isRelease4(from);
    // From here the schema changes: the pass must finish before any other may start.
    t.schemaStarted = true;
    const r = rollback
      ? ensureJob(ctx, {
          purpose: 'rollback',
          state: from,
          // The migration files of the deployed version 4 image rewind the schema.
          image: ctx.old.deployedImage ?? pass.image,
          inputs: jobInputs,
          label: `rollback of the analytics schema to version ${RELEASE_3_SCHEMA_VERSION}`,
          failureReason: 'RollbackFailed',
        })
      : ensureJob(ctx, {
          purpose: 'migrate',
          state: to,
          image: pass.image,
          inputs: jobInputs,
          label: 'schema migrations',
          failureReason: 'MigrationFailed',
        });
    ctx.condition(
      'SchemaMigrated',
      r === 'succeeded' ? 'True' : 'False',
      r === 'failed' ? 'SchemaJobFailed' : r === 'succeeded' ? 'SchemaUpToDate' : 'SchemaJobRunning',
      rollback
        ? `rewinding the analytics schema to version ${RELEASE_3_SCHEMA_VERSION}`
        : 'applying the schema migrations',
    );
    if (r !== 'succeeded') return;
    t.schemaMigrated = true;
    ctx.event(
      'Normal',
      'SchemaMigrated',
      rollback
        ? `analytics schema rewound to version ${RELEASE_3_SCHEMA_VERSION}`
        : 'schema migrations applied',
    );
  }

  if (!applyDeployments(ctx, to, pass.image)) return;

  // The pass is complete: only now does the observed state advance (G2).
  ctx.status.state = to;
  ctx.status.deployedImage = pass.image;
  if (to === 'Dual' && from !== 'Dual') ctx.status.dualSince = ctx.now;
  if (to === 'Release3' || to === 'Legacy') delete ctx.status.dualSince;
  if (to === 'Release3' && from !== 'Release3') {
    // Version 3 leaves the version 4 backfill dormant; a later upgrade re-reads its progress.
    delete ctx.status.backfill;
  }
  ctx.event(
    'Normal',
    from === to ? 'RolledOut' : 'StateAdvanced',
    from === to ? `${to}: rolled out ${pass.image}` : `moved from ${from} to ${to}`,
  );
  ctx.planned.push(`state ${from} -> ${to} recorded`);
  ctx.requeueAfter(0);
}

function reconcileCleanup(
  ctx: PlanContext,
  state: MigrationState,
  image: string,
  backfillPending: boolean,
): boolean {
  if (!ctx.spec.cleanup?.truncateLegacyTables || ctx.status.legacyTablesTruncated) return true;
  if (state !== 'EventsOnly') return true;
  if (backfillPending) {
    ctx.wait(60, 'the cleanup waits for the backfill, which reads the legacy tables');
    return false;
  }
  const r = ensureJob(ctx, {
    purpose: 'cleanup',
    state: 'EventsOnly',
    image,
    label: 'truncate the legacy tables',
    failureReason: 'CleanupFailed',
  });
  if (r !== 'succeeded') return false;
  ctx.status.legacyTablesTruncated = true;
  ctx.event('Normal', 'LegacyTablesTruncated', 'truncated the analytics tables traces and observations');
  return true;
}

/** Evaluates the cutover gates; each becomes a condition, every closed one a blocking reason. */
function cutoverGates(ctx: PlanContext, backfillDone: boolean, rolledOut: boolean): Gate[] {
  const rollout: Gate = rolledOut
    ? { ok: true, reason: 'RolledOut', message: 'Dual is rolled out on every pod' }
    : { ok: false, reason: 'RolloutInProgress', message: 'the Dual rollout is not complete' };
  const history = historicDataGate(ctx, backfillDone);
  const propagation = propagationGate(ctx);
  const producers = producersGate(ctx);
  const approval = approvalGate(ctx);
  const asCondition = (g: Gate) => [g.ok ? 'True' : 'False', g.reason, g.message] as const;
  ctx.condition('PropagationHealthy', ...asCondition(propagation));
  ctx.condition('ProducersCompatible', ...asCondition(producers));
  ctx.condition('CutoverApproved', ...asCondition(approval));
  const gates = [rollout, history, propagation, producers, approval];
  const closed = gates.filter((g) => !g.ok);
  if (closed.length === 0) ctx.condition('CutoverReady', 'True', 'AllGatesHold', 'every cutover gate holds');
  else ctx.condition('CutoverReady', 'False', closed[0]!.reason, closed.map((g) => g.message).join('; '));
  for (const g of closed) {
    ctx.blocked.push(`cutover: ${g.message}`);
    if (g.recheckSeconds !== undefined) ctx.requeueAfter(g.recheckSeconds);
  }
  if (approval.ok === false) ctx.requeueAfter(300);
  return gates;
}

/** Cutover conditions outside the gate evaluation. */
function describeCutover(ctx: PlanContext, state: MigrationState): void {
  const gateTypes = ['PropagationHealthy', 'ProducersCompatible', 'CutoverApproved', 'CutoverReady'] as const;
  if (state === 'EventsOnly' || ctx.status.target?.state === 'EventsOnly') {
    for (const type of gateTypes)
      ctx.condition(type, 'True', 'CutoverDone', 'the cutover to EventsOnly is recorded; it is final');
    return;
  }
  if (state !== 'Dual') {
    for (const type of gateTypes)
      ctx.condition(type, 'Unknown', 'NotInDual', 'evaluated while the state is Dual');
    return;
  }
  const p = propagationGate(ctx);
  ctx.condition(
    'PropagationHealthy',
    p.ok ? 'True' : ctx.world.workerProbes ? 'False' : 'Unknown',
    p.reason,
    p.message,
  );
  for (const type of gateTypes.slice(1))
    ctx.condition(type, 'Unknown', 'CutoverNotRequested', 'spec.writeMode is not EventsOnly');
}
