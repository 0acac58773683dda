/**
 * Every status an ObservabilityService was given, in order, and what a cluster admin watching
 * its conditions would have seen: the transitions (for golden narratives) and the flicker checks
 * shared by the simulated sequence tests and the e2e walk on a real cluster.
 */
import type { Condition, ConditionType, ObservabilityServiceStatus } from '../api/v1alpha1.ts';
import { checkCondition } from '../planner/conditions.ts';

export interface StatusRecord {
  status: ObservabilityServiceStatus;
  /** The object's annotations when the status was written (approvals and retries are user input). */
  annotations?: Record<string, string>;
  /**
   * A fingerprint of the flaky observations behind this status (probe answers, report outages),
   * when the recorder knows them; undefined means "the world did not say", treated as unchanged.
   */
  world?: string;
}

type Level = Pick<Condition, 'status' | 'reason' | 'message'>;

export interface Transition {
  /** Index of the record that made the change. */
  at: number;
  type: string;
  from?: Level;
  to: Level;
}

const levelOf = (c: Condition): Level => ({ status: c.status, reason: c.reason, message: c.message });
const same = (a: Level | undefined, b: Level) =>
  a?.status === b.status && a.reason === b.reason && a.message === b.message;

/** Condition changes (status, reason or message) from one record to the next. */
export function transitions(records: readonly StatusRecord[]): Transition[] {
  const out: Transition[] = [];
  const last = new Map<string, Level>();
  records.forEach((r, at) => {
    for (const c of r.status.conditions ?? []) {
      const to = levelOf(c);
      const from = last.get(c.type);
      if (!same(from, to)) out.push({ at, type: c.type, ...(from ? { from } : {}), to });
      last.set(c.type, to);
    }
  });
  return out;
}

/**
 * The migration step a status was computed in: the state and recorded intent it started from
 * (the previous status), the generation it saw and the user's annotations. A condition may move
 * when any of these change; within one step it may move only when the world changed.
 */
function stepKey(previous: StatusRecord | undefined, r: StatusRecord): string {
  const p = previous?.status;
  const t = p?.target;
  return JSON.stringify([
    p?.state,
    t?.state,
    t?.since,
    t?.image,
    r.status.observedGeneration,
    Object.entries(r.annotations ?? {}).sort(),
  ]);
}

const clip = (s: string, n = 140) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const show = (l: Level) => `${l.status} ${l.reason}${l.message ? `: ${clip(l.message)}` : ''}`;

/** One line per condition change, headed by the state and intent, for golden files. */
export function narrative(records: readonly StatusRecord[]): string[] {
  const out: string[] = [];
  let heading = '';
  for (const t of transitions(records)) {
    const s = records[t.at]!.status;
    const h = `[${s.state ?? '-'} -> ${s.target?.state ?? '-'}]`;
    if (h !== heading) {
      out.push(h);
      heading = h;
    }
    out.push(`  #${t.at} ${t.type}: ${t.from ? `${show(t.from)} -> ` : ''}${show(t.to)}`);
  }
  return out;
}

/** Gate-like conditions: once the current step has passed one (True), it must not fall back to Unknown. */
const GATES: readonly ConditionType[] = [
  'PreflightPassed',
  'SchemaMigrated',
  'BackfillComplete',
  'PropagationHealthy',
  'ProducersCompatible',
  'CutoverApproved',
  'CutoverReady',
];

/**
 * What an admin must never see: (1) a condition's status going A -> B -> A within one migration
 * step while the world stayed the same, (2) a reason/message pair its owner's table does not
 * produce, (3) a gate the current step already passed turning Unknown without a change in the world.
 * "The world stayed the same" holds over every record in between, not only at both ends: the
 * planner keeps streaks (probe failures), so worlds that differed in between may rightly move it.
 */
export function findFlicker(records: readonly StatusRecord[]): string[] {
  const problems: string[] = [];
  interface Seen {
    status: string;
    key: string;
    at: number;
  }
  const history = new Map<string, Seen[]>();
  const passed = new Map<string, { key: string; at: number }>();
  // lastWorldChange[at]: the latest record index <= at whose world differs from the one before it.
  const lastWorldChange: number[] = [];
  records.forEach((r, at) => {
    const changed = at > 0 && records[at - 1]!.world !== r.world;
    lastWorldChange.push(changed || at === 0 ? at : lastWorldChange[at - 1]!);
  });
  const worldSameSince = (from: number, at: number) => lastWorldChange[at]! <= from;
  records.forEach((r, at) => {
    const key = stepKey(records[at - 1], r);
    for (const c of r.status.conditions ?? []) {
      const wrong = checkCondition(c);
      if (wrong) problems.push(`#${at} ${c.type}=${c.status} ${c.reason}: ${wrong}`);
      const seen = history.get(c.type) ?? [];
      const last = seen[seen.length - 1];
      if (last?.status !== c.status) {
        const before = seen[seen.length - 2];
        // A -> B -> A: the two changes happened in the same step, with the same world throughout.
        if (
          before &&
          before.status === c.status &&
          before.key === key &&
          last!.key === key &&
          worldSameSince(before.at, at)
        )
          problems.push(
            `#${at} ${c.type} flickered ${c.status} -> ${last!.status} (#${last!.at}) -> ${c.status} within one step`,
          );
        seen.push({ status: c.status, key, at });
        history.set(c.type, seen);
      }
      if (!GATES.includes(c.type as ConditionType)) continue;
      const p = passed.get(c.type);
      // Passed when it became True: staying True (e.g. below a probe threshold) does not move it.
      if (c.status === 'True') {
        if (last?.status !== 'True' || p?.key !== key) passed.set(c.type, { key, at });
      } else if (p && p.key !== key) passed.delete(c.type);
      else if (c.status === 'Unknown' && p && worldSameSince(p.at, at))
        problems.push(`#${at} ${c.type} went Unknown (${c.reason}) after the step had passed it`);
    }
  });
  return problems;
}
