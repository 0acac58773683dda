/** metav1.Condition bookkeeping: lastTransitionTime moves only when the status changes. */
import type { Condition, ConditionType } from '../api/v1alpha1.ts';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface ConditionValue {
  status: ConditionStatus;
  reason: string;
  message: string;
}

export function setCondition(
  list: Condition[],
  previous: readonly Condition[] | undefined,
  type: ConditionType,
  v: ConditionValue,
  generation: number,
  now: string,
): void {
  const old = previous?.find((c) => c.type === type);
  const next: Condition = {
    type,
    status: v.status,
    reason: v.reason,
    message: v.message.slice(0, 32768),
    observedGeneration: generation,
    lastTransitionTime: old && old.status === v.status ? old.lastTransitionTime : now,
  };
  const i = list.findIndex((c) => c.type === type);
  if (i >= 0) list[i] = next;
  else list.push(next);
}

export const findCondition = (list: readonly Condition[] | undefined, type: ConditionType) =>
  list?.find((c) => c.type === type);
