/**
 * kstatus's summary conditions, derived in one place from how the fold of the steps ended
 * (Flux's reconcile-result mapping): a stall is Stalled=True with the stalling step's reason and
 * message; a fold that ran to the end with nothing to wait for is Ready=True; anything else is
 * Reconciling=True. Paused is neither (no work is being done, none is stuck).
 */
import { type ConditionValue, condition } from './conditions.ts';
import type { Verdict } from './step.ts';

export interface FoldOutcome {
  /** The verdict of the step that stopped the fold, or `next` when every step went on. */
  verdict: Verdict;
  waiting: readonly string[];
  planned: readonly string[];
  state: string | undefined;
  phase: string;
}

export function summaryConditions(o: FoldOutcome): ConditionValue[] {
  const v = o.verdict;
  if (v.kind === 'hold')
    return [
      condition('Ready', 'Paused'),
      condition('Reconciling', 'NotReconciling'),
      condition('Stalled', 'NotStalled'),
    ];
  if (v.kind === 'hibernated')
    return [
      condition('Ready', 'Hibernated', { detail: v.detail }),
      condition('Reconciling', 'NotReconciling'),
      condition('Stalled', 'NotStalled'),
    ];
  if (v.kind === 'stall')
    return [
      condition('Ready', 'Stalled', { detail: v.message }),
      condition('Reconciling', 'NotReconciling'),
      condition('Stalled', v.reason, { detail: v.message }),
    ];
  if (v.kind === 'next' && o.waiting.length === 0)
    return [
      condition('Ready', 'Reconciled', { state: o.state ?? 'none' }),
      condition('Reconciling', 'NotReconciling'),
      condition('Stalled', 'NotStalled'),
    ];
  return [
    condition('Ready', 'Progressing', { detail: o.waiting[0] ?? o.planned[0] ?? o.phase }),
    condition('Reconciling', 'Progressing', { detail: o.planned[0] ?? o.waiting[0] ?? o.phase }),
    condition('Stalled', 'NotStalled'),
  ];
}

/** status.phase, for printer columns. */
export function phaseOf(o: FoldOutcome): string {
  if (o.verdict.kind === 'stall') return 'Stalled';
  if (o.verdict.kind === 'hibernated') return 'Hibernated';
  if (o.verdict.kind === 'next' && o.waiting.length === 0) return 'Ready';
  return o.phase;
}
