/**
 * The worker autoscaler's decision, pure: from the ingestion log's backlog (the age of its oldest
 * undrained write), the decision recorded last time and the worker Deployment as observed, the
 * worker count and the status that explains it. Like an HPA on one metric: up about in proportion
 * to how far the age is over the target (at most doubling, and only once the last scale's Pods are
 * ready and had one target's time to catch up), down only after a stabilization window in which
 * every observation asked for fewer, to the most any of them asked for; always within
 * [minReplicas, maxReplicas]. Missing data and steps that need a fixed count keep the count.
 */
import type { AutoscalingSpec, AutoscalingStatus } from '../api/v1alpha1.ts';
import type { IngestionBacklogReport, ObservedDeployment } from './types.ts';

export interface AutoscaleInput {
  policy: Required<AutoscalingSpec>;
  /** The last decision (status.autoscaling); absent on the first. */
  recorded: AutoscalingStatus | undefined;
  /** Where the autoscaler starts without a record: spec.worker.replicas. */
  startReplicas: number;
  worker: ObservedDeployment | undefined;
  backlog: IngestionBacklogReport;
  /** Why the count must not move now (a pass or a restore in progress, paused), if it must not. */
  held: string | undefined;
  now: Date;
}

const SECOND = 1000;

export function decideWorkers(i: AutoscaleInput): AutoscalingStatus {
  const { minReplicas: min, maxReplicas: max, targetBacklogAgeSeconds: target } = i.policy;
  const clamp = (n: number) => Math.min(max, Math.max(min, n));
  const current = clamp(i.recorded?.desiredReplicas ?? i.startReplicas);
  const now = i.now.toISOString();
  const age = i.backlog.known ? Math.round(i.backlog.oldestPendingAgeSeconds) : undefined;
  const lastAge = age ?? i.recorded?.lastBacklogAgeSeconds;
  // A recorded count clamped into changed bounds is a scale as well.
  const clamped = i.recorded !== undefined && current !== i.recorded.desiredReplicas;
  const lastScaleTime = clamped ? now : i.recorded?.lastScaleTime;
  const keep = (reason: AutoscalingStatus['reason'], message: string): AutoscalingStatus => ({
    currentReplicas: i.worker?.replicas ?? 0,
    desiredReplicas: current,
    ...(lastAge !== undefined ? { lastBacklogAgeSeconds: lastAge } : {}),
    ...(lastScaleTime ? { lastScaleTime } : {}),
    reason,
    message,
  });
  const scale = (to: number, reason: 'ScaledUp' | 'ScaledDown', message: string): AutoscalingStatus => ({
    ...keep(reason, message),
    desiredReplicas: to,
    lastScaleTime: now,
  });

  if (i.held !== undefined) return keep('Held', `${current} worker(s) held: ${i.held}`);
  if (age === undefined)
    return keep('BacklogUnknown', `${current} worker(s) kept: no worker answered with the ingestion backlog`);

  if (age > target) {
    const over = `the oldest undrained write is ${age}s old, over the target ${target}s`;
    if (current >= max) return keep('AtMaxReplicas', `${over}; already at maxReplicas ${max}`);
    const ready = i.worker?.specReplicas === current ? i.worker.readyReplicas : 0;
    const since = i.recorded?.lastScaleTime
      ? i.now.getTime() - Date.parse(i.recorded.lastScaleTime)
      : Infinity;
    if (ready < current)
      return keep(
        'ScaleUpPending',
        `${over}; ${ready} of ${current} worker(s) ready: the next scale up waits for them`,
      );
    if (since < target * SECOND)
      return keep(
        'ScaleUpPending',
        `${over}; the last scale was ${Math.round(since / SECOND)}s ago: the workers get ${target}s to catch up first`,
      );
    const to = clamp(Math.min(2 * current, Math.max(current + 1, Math.ceil((current * age) / target))));
    return scale(to, 'ScaledUp', `${over}: ${current} -> ${to} worker(s)`);
  }

  // Drained: the oldest write at most half the target old. Between half and the full target the count stays.
  const wanted = clamp(Math.ceil((current * age) / target));
  if (age * 2 > target || wanted >= current)
    return keep(
      'BacklogWithinTarget',
      `the oldest undrained write is ${age}s old, within the target ${target}s: ${current} worker(s)`,
    );
  const windowStart = i.recorded?.scaleDownSince ?? now;
  const asked = i.recorded?.scaleDownSince ? Math.max(wanted, i.recorded.scaleDownTo ?? wanted) : wanted;
  const to = Math.min(current - 1, clamp(asked));
  const elapsed = (i.now.getTime() - Date.parse(windowStart)) / SECOND;
  const window = i.policy.scaleDownStabilizationSeconds;
  if (elapsed >= window)
    return scale(
      to,
      'ScaledDown',
      `the backlog stayed drained for ${window}s (oldest write ${age}s old): ${current} -> ${to} worker(s)`,
    );
  return {
    ...keep(
      'StabilizingScaleDown',
      `the backlog is drained (oldest write ${age}s old): ${current} -> ${to} worker(s) once it stays so for ${window}s (since ${windowStart})`,
    ),
    scaleDownSince: windowStart,
    scaleDownTo: to,
  };
}
