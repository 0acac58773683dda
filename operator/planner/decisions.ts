/**
 * Whether a status write records a decision, which must be stored before anything acts on it (the
 * intent rule, G5). Some fields only report: every pass recomputes them from the spec and the
 * observed world (observedGeneration, conditions, phase, the planned and blocking lines), and no
 * action depends on their having been stored. `approval` (the generation at which the spec last
 * changed, which a cutover approval must name) is recomputed from the spec whenever the spec differs
 * from what it recorded, so a lost write changes nothing, and only the gates read it. Every other
 * field (state, target and its progress, deployedImage, attempts, consumed retries, the backfill
 * cursor, probe streaks, ...) is something later actions rely on.
 */
import type { ObservabilityServiceStatus } from '../api/v1alpha1.ts';
import { canonicalJson } from '../util/hash.ts';

export function recordsDecision(old: ObservabilityServiceStatus, next: ObservabilityServiceStatus): boolean {
  return canonicalJson(decided(old)) !== canonicalJson(decided(next));
}

function decided(status: ObservabilityServiceStatus): Partial<ObservabilityServiceStatus> {
  const { observedGeneration, phase, conditions, plannedActions, blockedBy, approval, ...rest } = status;
  return rest;
}
