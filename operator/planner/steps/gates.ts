/**
 * The gates of the cutover from Dual to EventsOnly (the point of commitment). It owns the gate
 * conditions and records the intent to cut over, and nothing else, when every gate holds. A gate
 * holds only on a definite answer (G4): while anything is Unknown the cutover waits.
 */

import { formatDuration, parseDuration } from '../../../server/contract/duration.ts';
import { backfillEnabled, desiredState, enabledSteps } from '../../api/effective.ts';
import { ANNOTATIONS } from '../../api/v1alpha1.ts';
import { windowAt } from '../../api/windows.ts';
import { settingsFromSpec } from '../../render/settings.ts';
import { canonicalJson, shortHash } from '../../util/hash.ts';
import { findCondition } from '../conditions.ts';
import { phaseOfPass } from '../pass.ts';
import { nextStreak, type ProbeStreak, propagationVerdict, roundOf } from '../propagation.ts';
import { type Step, type StepInput, StepOutput } from '../step.ts';
import type { IncompatibleProducer } from '../types.ts';
import { deployedRolledOut } from '../workloads.ts';

interface Gate {
  ok: boolean;
  message: string;
  /** When the gate may open by itself (seconds), for the requeue. */
  recheckSeconds?: number;
}

const PROBE_REASONS = [
  'WorkersHealthy',
  'ProbeFailuresBelowThreshold',
  'PropagationStuck',
  'ProbeUnanswered',
  'AwaitingProbe',
];

const GATE_TYPES = [
  'PropagationHealthy',
  'ProducersCompatible',
  'EvaluatorsCompatible',
  'CutoverApproved',
  'CutoverReady',
] as const;

/** Records when the spec (apart from approvals) last changed, which approvals must name. */
function approvalSpec(input: StepInput) {
  const { cutover, ...rest } = input.object.spec;
  const { approvedGeneration: _ignored, ...cutoverRest } = cutover ?? {};
  const specHash = shortHash({ ...rest, cutover: cutoverRest }, 16);
  const old = input.status.approval;
  return old?.specHash === specHash ? old : { specGeneration: input.generation, specHash };
}

function historicDataGate(input: StepInput): Gate {
  const total = enabledSteps(input.spec).length;
  if (backfillEnabled(input.spec) && (input.status.backfill?.completedSteps ?? 0) >= total)
    return { ok: true, message: 'the historic backfill finished' };
  const windowText = input.spec.cutover.retentionWindow;
  const window = windowText ? parseDuration(windowText) : undefined;
  const since = input.status.dualSince ? Date.parse(input.status.dualSince) : undefined;
  if (window !== undefined && since !== undefined) {
    const left = since + window - input.world.now.getTime();
    if (left <= 0) return { ok: true, message: `dual-written for cutover.retentionWindow (${windowText})` };
    const pending = backfillEnabled(input.spec) ? 'the backfill has not finished and ' : '';
    return {
      ok: false,
      message: `${pending}cutover.retentionWindow (${windowText}) is not yet dual-written: ${formatDuration(left)} left`,
      recheckSeconds: Math.min(300, left / 1000),
    };
  }
  if (backfillEnabled(input.spec)) return { ok: false, message: 'the historic backfill has not finished' };
  return {
    ok: false,
    message:
      'spec.backfill.enabled is false and spec.cutover.retentionWindow is not set: historic data would be missing',
  };
}

/**
 * Manual approval names a generation G with specGeneration <= G <= generation, where
 * specGeneration is when the spec (apart from approvals) last changed: approving through
 * spec.cutover.approvedGeneration itself bumps the generation, and must still count.
 */
function approved(input: StepInput, specGeneration: number): boolean {
  const annotation = input.object.metadata.annotations?.[ANNOTATIONS.approveCutover];
  const candidates = [
    input.spec.cutover.approvedGeneration,
    annotation === undefined ? undefined : Number(annotation),
  ];
  return candidates.some(
    (g) => g !== undefined && Number.isInteger(g) && g >= specGeneration && g <= input.generation,
  );
}

/**
 * Trace-level (Legacy) evaluators stop at the cutover (the spec's evaluator rule): while any is
 * enabled the cutover waits, unless an admin approved this generation by hand, which stops them
 * knowingly; Automatic approval does not, since nobody saw them.
 */
function evaluatorsGate(input: StepInput, approvedByHand: boolean, out: StepOutput): Gate {
  const report = input.world.producers;
  if (!report.known) {
    const last = findCondition(input.old.conditions, 'EvaluatorsCompatible')?.reason;
    if (!['NoLegacyEvaluators', 'LegacyEvaluatorsActive', 'LegacyEvaluatorsApproved'].includes(last ?? ''))
      out.set('EvaluatorsCompatible', 'EvaluatorsUnknown');
    return { ok: false, message: 'the worker producer report is unavailable', recheckSeconds: 60 };
  }
  const active = report.legacyEvaluators ?? [];
  if (active.length === 0) {
    out.set('EvaluatorsCompatible', 'NoLegacyEvaluators');
    return { ok: true, message: 'no trace-level evaluator is enabled' };
  }
  const facts = {
    count: active.length,
    names: active
      .slice(0, 5)
      .map((e) => `"${e.name}" (project ${e.projectId})`)
      .join(', '),
  };
  if (approvedByHand) {
    out.set('EvaluatorsCompatible', 'LegacyEvaluatorsApproved', { ...facts, generation: input.generation });
    return { ok: true, message: `${facts.count} trace-level evaluator(s) stop at the cutover, as approved` };
  }
  out.set('EvaluatorsCompatible', 'LegacyEvaluatorsActive', facts);
  return {
    ok: false,
    message: `${facts.count} trace-level evaluator(s) would stop at the cutover: ${facts.names}`,
    recheckSeconds: 300,
  };
}

/**
 * Seconds until the last refused producer leaves the quiet period (at most 5 minutes): with a
 * short period the gate opens then, not at the next 5-minute look.
 */
function quietAgainIn(refused: readonly IncompatibleProducer[], period: string, now: Date): number {
  const last = Math.max(...refused.map((p) => (p.lastSeen ? Date.parse(p.lastSeen) : Number.NaN)));
  const seconds = (last + (parseDuration(period) ?? Number.NaN) - now.getTime()) / 1000;
  return Number.isFinite(seconds) ? Math.max(1, Math.min(300, Math.ceil(seconds))) : 300;
}

/** The cutover starts only inside a maintenance window, when there are any. */
function windowGate(input: StepInput): Gate {
  const w = windowAt(input.spec.maintenanceWindows, input.world.now);
  if (w.open) return { ok: true, message: 'inside a maintenance window (or none is set)' };
  const seconds = Math.ceil((w.opensAt.getTime() - input.world.now.getTime()) / 1000);
  return {
    ok: false,
    message: `outside the maintenance windows (spec.maintenanceWindows): the next opens at ${w.opensAt.toISOString()}`,
    recheckSeconds: Math.max(1, Math.min(3600, seconds)),
  };
}

export const gatesStep: Step = {
  name: 'cutover gates',
  owns: GATE_TYPES,
  run(input) {
    const out = new StepOutput();
    const s = input.status;
    const approval = approvalSpec(input);
    if (canonicalJson(approval) !== canonicalJson(s.approval)) out.patch({ approval });
    if (s.state === 'EventsOnly' || s.target?.state === 'EventsOnly') {
      for (const type of GATE_TYPES) out.set(type, 'CutoverDone');
      if (s.probeStreak) out.patch({ probeStreak: undefined });
      return out.next();
    }
    if (s.state !== 'Dual') {
      for (const type of GATE_TYPES) out.set(type, 'NotInDual');
      if (s.probeStreak) out.patch({ probeStreak: undefined });
      return out.next();
    }

    // Propagation, with hysteresis; a reconcile that did not probe leaves it as it was.
    const round = roundOf(input.world.workerProbes, input.spec.worker.replicas);
    const threshold = input.spec.propagation.failureThreshold;
    const previous = findCondition(input.old.conditions, 'PropagationHealthy');
    if (round) {
      const streak: ProbeStreak = nextStreak(s.probeStreak ?? { stuck: 0, unanswered: 0 }, round);
      out.patch({ probeStreak: streak });
      const v = propagationVerdict(round, streak, threshold, previous?.status);
      out.set('PropagationHealthy', v.reason, v.facts);
    } else if (!previous || !PROBE_REASONS.includes(previous.reason))
      out.set('PropagationHealthy', 'AwaitingProbe', { detail: 'no worker pod was probed yet' });

    if (desiredState(input.spec) !== 'EventsOnly') {
      for (const type of GATE_TYPES.slice(1)) out.set(type, 'CutoverNotRequested');
      return out.next();
    }

    const propagation: Gate =
      round?.kind === 'healthy'
        ? { ok: true, message: `all ${round.pods} worker pods report propagation healthy` }
        : {
            ok: false,
            message: `the propagation probe has no healthy answer from every worker pod (${round ? (round.kind === 'stuck' ? `stuck: ${round.pods.join(', ')}` : round.detail) : 'not probed'})`,
            recheckSeconds: 30,
          };

    const period = input.spec.cutover.producerQuietPeriod;
    const report = input.world.producers;
    let producers: Gate;
    if (!report.known) {
      producers = { ok: false, message: 'the worker producer report is unavailable', recheckSeconds: 60 };
      // No new answer: the condition keeps the last one it had.
      const last = findCondition(input.old.conditions, 'ProducersCompatible')?.reason;
      if (
        last !== 'NoIncompatibleProducers' &&
        last !== 'IncompatibleProducersSeen' &&
        last !== 'ProducersLosePropagation'
      )
        out.set('ProducersCompatible', 'ProducersUnknown');
    } else {
      const names = (list: typeof report.producers) =>
        list
          .slice(0, 5)
          .map((p) => `${p.sdkName} ${p.sdkVersion} (${p.path})`)
          .join(', ');
      const refused = report.producers.filter((p) => p.consequence === 'refused');
      const losing = report.producers.filter((p) => p.consequence === 'loses-propagation');
      if (refused.length > 0) {
        const facts = { count: refused.length, period, names: names(refused) };
        out.set('ProducersCompatible', 'IncompatibleProducersSeen', facts);
        producers = {
          ok: false,
          message: `${facts.count} producer(s) EventsOnly would refuse were seen in the last ${period}`,
          recheckSeconds: quietAgainIn(refused, period, input.world.now),
        };
      } else if (losing.length > 0) {
        // Accepted after the cutover: worth saying, not worth blocking on.
        out.set('ProducersCompatible', 'ProducersLosePropagation', {
          count: losing.length,
          period,
          names: names(losing),
        });
        producers = {
          ok: true,
          message: `no producer EventsOnly would refuse was seen in the last ${period}`,
        };
      } else {
        out.set('ProducersCompatible', 'NoIncompatibleProducers', { period });
        producers = { ok: true, message: `no incompatible producer seen in the last ${period}` };
      }
    }

    const evaluators = evaluatorsGate(input, approved(input, approval.specGeneration), out);

    let approvalGate: Gate;
    if (input.spec.cutover.approval === 'Automatic') {
      out.set('CutoverApproved', 'AutomaticApproval');
      approvalGate = { ok: true, message: 'automatic approval' };
    } else if (approved(input, approval.specGeneration)) {
      out.set('CutoverApproved', 'Approved', { generation: input.generation });
      approvalGate = { ok: true, message: `approved for generation ${input.generation}` };
    } else {
      const name = input.object.metadata.name;
      const g = input.generation;
      out.set('CutoverApproved', 'AwaitingApproval', {
        command: `kubectl annotate obsvc/${name} ${ANNOTATIONS.approveCutover}=${g} --overwrite (or set spec.cutover.approvedGeneration: ${g})`,
      });
      approvalGate = { ok: false, message: 'the cutover is not approved yet', recheckSeconds: 300 };
    }

    const rollout: Gate = deployedRolledOut(input)
      ? { ok: true, message: 'Dual is rolled out on every pod' }
      : { ok: false, message: 'the Dual rollout is not complete' };
    const gates = [
      rollout,
      historicDataGate(input),
      propagation,
      producers,
      evaluators,
      approvalGate,
      windowGate(input),
    ];
    // Two gates read the same report: its absence is said once.
    const closed = gates.filter((g, i) => !g.ok && gates.findIndex((o) => o.message === g.message) === i);
    if (closed.length > 0) {
      out.set('CutoverReady', 'GatesClosed', { closed: closed.map((g) => g.message).join('; ') });
      for (const g of closed) out.wait(g.recheckSeconds ?? 60, `cutover: ${g.message}`);
      out.phase = 'AwaitingCutover';
      return out.next();
    }
    out.set('CutoverReady', 'AllGatesHold');
    // The approved settings: only from here on do web, worker and Jobs run with them.
    out.patch({
      target: {
        state: 'EventsOnly',
        since: input.now,
        image: input.spec.image,
        settings: settingsFromSpec('EventsOnly', input.spec),
      },
    });
    out.phase = phaseOfPass('Dual', 'EventsOnly');
    out.planned.push(`record the intent to move Dual -> EventsOnly (${input.spec.image})`);
    out.requeue(0);
    return out.stop();
  },
};
