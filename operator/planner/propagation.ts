/**
 * Probe hysteresis for PropagationHealthy, as the kubelet does with failureThreshold: one healthy
 * round makes it True; it turns False only after `threshold` consecutive rounds with a stuck
 * answer, and Unknown only after `threshold` consecutive rounds without a definite answer from
 * every worker pod. Below the threshold it keeps what it said. The counts live in status, so an
 * operator restart does not reset them.
 */
import type { ConditionStatus, Facts } from './conditions.ts';
import type { WorkerProbe } from './types.ts';

export interface ProbeStreak {
  /**
   * Consecutive rounds in which a worker answered stuck. Rounds without answers do not break it;
   * a round in which every pod asked answered healthy does, even if fewer pods than replicas were
   * Ready to ask (the stuck pod recovered; the missing pods count as unanswered).
   */
  stuck: number;
  /** Consecutive rounds without a definite answer from every worker pod. */
  unanswered: number;
}

export type ProbeRound =
  | { kind: 'healthy'; pods: number }
  | { kind: 'stuck'; pods: string[] }
  | { kind: 'unanswered'; detail: string; allAskedHealthy?: boolean };

/** One reconcile's probe answers, summed up (undefined: the workers were not probed). */
export function roundOf(probes: WorkerProbe[] | undefined, replicas: number): ProbeRound | undefined {
  if (!probes) return undefined;
  const stuck = probes.filter((p) => p.result === 'stuck').map((p) => p.pod);
  if (stuck.length > 0) return { kind: 'stuck', pods: stuck };
  const unreachable = probes.filter((p) => p.result === 'unreachable').map((p) => p.pod);
  if (unreachable.length > 0) return { kind: 'unanswered', detail: `unreachable: ${unreachable.join(', ')}` };
  if (probes.length < replicas)
    return {
      kind: 'unanswered',
      detail: `${probes.length} of ${replicas} worker pods are Ready and answered`,
      allAskedHealthy: probes.length > 0,
    };
  return { kind: 'healthy', pods: probes.length };
}

export function nextStreak(prev: ProbeStreak, round: ProbeRound): ProbeStreak {
  switch (round.kind) {
    case 'healthy':
      return { stuck: 0, unanswered: 0 };
    case 'stuck':
      return { stuck: prev.stuck + 1, unanswered: 0 };
    case 'unanswered':
      return { stuck: round.allAskedHealthy ? 0 : prev.stuck, unanswered: prev.unanswered + 1 };
  }
}

export interface PropagationVerdict {
  reason: string;
  facts: Facts;
}

/** The PropagationHealthy reason after `round`, given the streak after it and the previous status. */
export function propagationVerdict(
  round: ProbeRound,
  streak: ProbeStreak,
  threshold: number,
  previous: ConditionStatus | undefined,
): PropagationVerdict {
  if (round.kind === 'healthy') return { reason: 'WorkersHealthy', facts: { pods: round.pods } };
  const detail = round.kind === 'stuck' ? `stuck: ${round.pods.join(', ')}` : round.detail;
  if (streak.stuck >= threshold)
    return {
      reason: 'PropagationStuck',
      facts: {
        count: streak.stuck,
        threshold,
        pods: round.kind === 'stuck' ? round.pods.join(', ') : detail,
      },
    };
  if (streak.unanswered >= threshold)
    return { reason: 'ProbeUnanswered', facts: { count: streak.unanswered, threshold, detail } };
  if (previous === 'True')
    return {
      reason: 'ProbeFailuresBelowThreshold',
      facts: { detail, count: Math.max(streak.stuck, streak.unanswered), threshold },
    };
  return { reason: 'AwaitingProbe', facts: { detail } };
}
