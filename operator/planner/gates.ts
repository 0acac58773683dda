/**
 * The gates of the cutover from Dual to EventsOnly (the point of commitment). Each one is its
 * own condition with the reason it blocks; all must hold before the intent is recorded.
 * Unknown counts as not holding (G4): an unreachable worker is a failing worker.
 */

import { formatDuration, parseDuration } from '../../server/contract/duration.ts';
import { backfillEnabled } from '../api/effective.ts';
import { ANNOTATIONS } from '../api/v1alpha1.ts';
import type { PlanContext } from './context.ts';

export interface Gate {
  ok: boolean;
  reason: string;
  message: string;
  /** When the gate may open by itself (seconds), for the requeue. */
  recheckSeconds?: number;
}

export function historicDataGate(ctx: PlanContext, backfillDone: boolean): Gate {
  if (backfillEnabled(ctx.spec) && backfillDone)
    return { ok: true, reason: 'BackfillComplete', message: 'the historic backfill finished' };
  const windowText = ctx.spec.cutover.retentionWindow;
  const window = windowText ? parseDuration(windowText) : undefined;
  const since = ctx.status.dualSince ? Date.parse(ctx.status.dualSince) : undefined;
  if (window !== undefined && since !== undefined) {
    const left = since + window - ctx.world.now.getTime();
    if (left <= 0)
      return {
        ok: true,
        reason: 'RetentionWindowDualWritten',
        message: `dual-written for cutover.retentionWindow (${windowText})`,
      };
    const pending = backfillEnabled(ctx.spec) ? 'the backfill has not finished and ' : '';
    return {
      ok: false,
      reason: 'HistoricDataIncomplete',
      message: `${pending}cutover.retentionWindow (${windowText}) is not yet dual-written: ${formatDuration(left)} left`,
      recheckSeconds: Math.min(300, left / 1000),
    };
  }
  if (backfillEnabled(ctx.spec))
    return { ok: false, reason: 'HistoricDataIncomplete', message: 'the historic backfill has not finished' };
  return {
    ok: false,
    reason: 'HistoricDataIncomplete',
    message:
      'spec.backfill.enabled is false and spec.cutover.retentionWindow is not set: historic data would be missing',
  };
}

export function propagationGate(ctx: PlanContext): Gate {
  const probes = ctx.world.workerProbes;
  const want = ctx.spec.worker.replicas;
  if (!probes || probes.length === 0)
    return {
      ok: false,
      reason: 'ProbeUnavailable',
      message: 'no worker pod was probed yet',
      recheckSeconds: 30,
    };
  const failing = probes.filter((p) => p.result !== 'healthy');
  if (failing.length > 0)
    return {
      ok: false,
      reason: failing.some((p) => p.result === 'stuck') ? 'PropagationStuck' : 'WorkerUnreachable',
      message: `worker pods failing /api/health?failIfEventPropagationStuck=true: ${failing.map((p) => `${p.pod} (${p.result})`).join(', ')}`,
      recheckSeconds: 30,
    };
  if (probes.length < want)
    return {
      ok: false,
      reason: 'ProbeUnavailable',
      message: `only ${probes.length} of ${want} worker pods answered the propagation probe`,
      recheckSeconds: 30,
    };
  return {
    ok: true,
    reason: 'PropagationHealthy',
    message: `all ${probes.length} worker pods report propagation healthy`,
  };
}

export function producersGate(ctx: PlanContext): Gate {
  const report = ctx.world.producers;
  const period = ctx.spec.cutover.producerQuietPeriod;
  if (!report.known)
    return {
      ok: false,
      reason: 'ProducersUnknown',
      message: 'the worker producer report is unavailable',
      recheckSeconds: 60,
    };
  const names = (list: typeof report.producers) =>
    list
      .slice(0, 5)
      .map((p) => `${p.sdkName} ${p.sdkVersion} (${p.path})`)
      .join(', ');
  const refused = report.producers.filter((p) => p.consequence === 'refused');
  const changed = report.producers.filter((p) => p.consequence === 'loses-propagation');
  if (refused.length > 0) {
    return {
      ok: false,
      reason: 'IncompatibleProducersSeen',
      message: `${refused.length} producer(s) EventsOnly would refuse were seen in the last ${period}: ${names(refused)}`,
      recheckSeconds: 300,
    };
  }
  if (changed.length > 0) {
    // Accepted after the cutover: worth saying, not worth blocking on.
    return {
      ok: true,
      reason: 'ProducersLosePropagation',
      message: `no producer EventsOnly would refuse was seen in the last ${period}; ${changed.length} OTLP producer(s) without client-side propagation will lose server-side propagation of trace attributes: ${names(changed)}`,
    };
  }
  return {
    ok: true,
    reason: 'NoIncompatibleProducers',
    message: `no incompatible producer seen in the last ${period}`,
  };
}

/**
 * Manual approval names a generation G with specGeneration <= G <= generation, where
 * specGeneration is when the spec (apart from approvals) last changed: approving through
 * spec.cutover.approvedGeneration itself bumps the generation, and must still count.
 */
export function approvalGate(ctx: PlanContext): Gate {
  if (ctx.spec.cutover.approval === 'Automatic')
    return { ok: true, reason: 'AutomaticApproval', message: 'spec.cutover.approval is Automatic' };
  const from = ctx.status.approval?.specGeneration ?? ctx.generation;
  const annotation = ctx.object.metadata.annotations?.[ANNOTATIONS.approveCutover];
  const candidates = [
    ctx.spec.cutover.approvedGeneration,
    annotation === undefined ? undefined : Number(annotation),
  ];
  if (candidates.some((g) => g !== undefined && Number.isInteger(g) && g >= from && g <= ctx.generation))
    return { ok: true, reason: 'Approved', message: `cutover approved for generation ${ctx.generation}` };
  return {
    ok: false,
    reason: 'AwaitingApproval',
    message: `approve the cutover with: kubectl annotate obsvc/${ctx.name} ${ANNOTATIONS.approveCutover}=${ctx.generation} --overwrite (or set spec.cutover.approvedGeneration: ${ctx.generation})`,
  };
}
