/**
 * Whether a status write records a decision. A few fields only report: every pass recomputes them
 * from the spec and the observed world, and no action of this pass or a later one depends on their
 * having been stored. Every other field (state, target and its progress, deployedImage, attempts,
 * consumed retries, the backfill cursor, probe streaks, ...) is something later actions rely on, so
 * a write that changes one must be stored before anything acts (the intent rule, G5).
 */
import type { ObservabilityServiceStatus } from '../api/v1alpha1.ts';
import { canonicalJson } from '../util/hash.ts';

export function recordsDecision(old: ObservabilityServiceStatus, next: ObservabilityServiceStatus): boolean {
  return canonicalJson(decided(old)) !== canonicalJson(decided(next));
}

function decided(status: ObservabilityServiceStatus): Partial<ObservabilityServiceStatus> {
  const { observedGeneration, phase, conditions, plannedActions, blockedBy, ...rest } = status;
  return rest;
}
