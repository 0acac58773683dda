/**
 * An alert rule's state machine: from the value one evaluation measured, the rule's thresholds and
 * the previous state, the new state and whether to notify (a transition, or a reminder while the
 * rule stays out of `ok` past its re-notification interval). Pure: no I/O.
 */
import { COMPARE, type Comparison } from '../../kernel/comparisons.ts';

export const ALERT_STATES = ['ok', 'warning', 'alerting', 'no_data'] as const;
export type AlertState = (typeof ALERT_STATES)[number];
export const OPERATORS = ['>', '>=', '<', '<='] as const satisfies Comparison[];
export type Operator = (typeof OPERATORS)[number];
/** What a window without data counts as. */
export const NO_DATA_MODES = ['ok', 'no_data', 'alerting'] as const;
export type NoDataMode = (typeof NO_DATA_MODES)[number];

export interface StateInput {
  /** The measured value; null when the window held no data (or the aggregate is undefined). */
  value: number | null;
  operator: Operator;
  warningThreshold: number | null;
  alertThreshold: number;
  noDataMode: NoDataMode;
  /** Null before the first evaluation. */
  previous: AlertState | null;
  /** Epoch ms of the last notification sent for this rule, or null. */
  lastNotifiedAt: number | null;
  /** Null: no reminders. */
  renotifyMs: number | null;
  now: number;
}

/** `transition`: the state changed; `reminder`: it did not, and the re-notification interval passed. */
export type NotifyKind = 'transition' | 'reminder';

export interface StateOutput {
  state: AlertState;
  changed: boolean;
  notify: NotifyKind | null;
}

export const breaches = (value: number, operator: Operator, threshold: number): boolean =>
  COMPARE[operator](value, threshold);

export function stateOf(
  i: Pick<StateInput, 'value' | 'operator' | 'warningThreshold' | 'alertThreshold' | 'noDataMode'>,
): AlertState {
  if (i.value === null || Number.isNaN(i.value)) return i.noDataMode;
  if (breaches(i.value, i.operator, i.alertThreshold)) return 'alerting';
  if (i.warningThreshold !== null && breaches(i.value, i.operator, i.warningThreshold)) return 'warning';
  return 'ok';
}

export function nextState(i: StateInput): StateOutput {
  const state = stateOf(i);
  const changed = state !== i.previous;
  // The first evaluation notifies only when it finds the rule out of `ok`.
  if (changed) return { state, changed, notify: i.previous === null && state === 'ok' ? null : 'transition' };
  if (
    state !== 'ok' &&
    i.renotifyMs !== null &&
    (i.lastNotifiedAt === null || i.now - i.lastNotifiedAt >= i.renotifyMs)
  )
    return { state, changed, notify: 'reminder' };
  return { state, changed, notify: null };
}
