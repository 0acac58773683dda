/** Which actions of a pass go out together (runtime/batches.ts). */
import { describe, expect, it } from 'vitest';
import type { Action, ObservabilityServiceStatus } from '../../operator/index.ts';
import { recordsDecision } from '../../operator/planner/decisions.ts';
import { batches } from '../../operator/runtime/batches.ts';

const obj = { metadata: { name: 'x' } };
/** The status the pass read: a steady Dual deployment. */
const RECORDED = {
  state: 'Dual',
  deployedImage: 'observatory:4',
  observedGeneration: 3,
  phase: 'Ready',
} as const;
const A: Record<string, Action> = {
  // A new pass: the intent is recorded before anything acts on it.
  status: {
    kind: 'writeStatus',
    status: { ...RECORDED, target: { state: 'EventsOnly', since: 't', image: 'i' } },
  },
  // A new generation observed (a replicas change): nothing recorded that later actions act on.
  report: { kind: 'writeStatus', status: { ...RECORDED, observedGeneration: 4, phase: 'RollingOut' } },
  event: { kind: 'event', type: 'Normal', reason: 'R', message: 'm' },
  web: { kind: 'applyDeployment', role: 'web', object: obj },
  worker: { kind: 'applyDeployment', role: 'worker', object: obj },
  svc: { kind: 'applyService', role: 'web', object: obj },
  pdb: { kind: 'applyDisruptionBudget', role: 'web', object: obj },
  nopdb: { kind: 'deleteDisruptionBudget', role: 'web', name: 'x-web' },
  job: { kind: 'createJob', purpose: 'migrate', object: obj },
  deljob: { kind: 'deleteJob', name: 'x-migrate-1', reason: 'superseded' },
  requeue: { kind: 'requeue', afterSeconds: 10 },
} as Record<string, Action>;

describe('batches', () => {
  it.each<[string, string[], string[][]]>([
    ['nothing to do', [], []],
    [
      'a replicas change: status first, then the budget and the Deployment together',
      ['status', 'pdb', 'web', 'requeue'],
      [['status'], ['pdb', 'web'], ['requeue']],
    ],
    [
      'a transition: its Events go out with the workloads, after the status',
      ['status', 'event', 'event', 'svc', 'nopdb', 'web', 'worker'],
      [['status'], ['event', 'event', 'svc', 'nopdb', 'web', 'worker']],
    ],
    [
      'Jobs stay one at a time and in order (delete the stale one, then create)',
      ['status', 'deljob', 'job', 'web'],
      [['status'], ['deljob'], ['job'], ['web']],
    ],
    ['a Job splits workload writes', ['web', 'job', 'worker'], [['web'], ['job'], ['worker']]],
    ['two status writes never merge', ['status', 'status'], [['status'], ['status']]],
    [
      'a status that only reports goes out with the budget and the Deployment',
      ['report', 'pdb', 'web', 'requeue'],
      [['report', 'pdb', 'web'], ['requeue']],
    ],
    [
      'a reporting status and its Events go out with the workloads',
      ['report', 'event', 'svc', 'nopdb', 'web', 'worker'],
      [['report', 'event', 'svc', 'nopdb', 'web', 'worker']],
    ],
    [
      'Jobs stay barriers after a reporting status',
      ['report', 'deljob', 'job', 'web'],
      [['report'], ['deljob'], ['job'], ['web']],
    ],
    ['a reporting status never merges with another', ['report', 'report'], [['report'], ['report']]],
    ['a status after workload writes starts its own batch', ['web', 'report'], [['web'], ['report']]],
  ])('%s', (_name, input, want) => {
    const name = (a: Action) => Object.entries(A).find(([, v]) => v === a)![0];
    expect(
      batches(
        input.map((n) => A[n]!),
        RECORDED,
      ).map((b) => b.map(name)),
    ).toEqual(want);
  });
});

describe('recordsDecision', () => {
  const target = { state: 'Dual', since: '2026-01-01T00:00:00Z', image: 'observatory:4' } as const;
  const ready = {
    type: 'Ready',
    status: 'True',
    reason: 'R',
    message: 'm',
    lastTransitionTime: 't',
  } as const;
  it.each<[string, ObservabilityServiceStatus, ObservabilityServiceStatus, boolean]>([
    ['nothing changes', RECORDED, RECORDED, false],
    ['a new generation observed', RECORDED, { ...RECORDED, observedGeneration: 4 }, false],
    [
      'conditions, phase and the report lines',
      RECORDED,
      {
        ...RECORDED,
        phase: 'RollingOut',
        conditions: [ready],
        plannedActions: ['apply Deployment x-web'],
        blockedBy: ['x-web: 1/2 updated'],
      },
      false,
    ],
    [
      'the first status of a new object reports only',
      {},
      { observedGeneration: 1, phase: 'Reconciling' },
      false,
    ],
    ['the intent of a new pass', RECORDED, { ...RECORDED, target }, true],
    [
      'progress of the pass',
      { ...RECORDED, target },
      { ...RECORDED, target: { ...target, schemaStarted: true } },
      true,
    ],
    ['the state advances', { ...RECORDED, target }, { ...RECORDED, state: 'EventsOnly' }, true],
    ['a new Job attempt', RECORDED, { ...RECORDED, attempts: { migrate: 1 } }, true],
    ['a retry annotation consumed', RECORDED, { ...RECORDED, consumedRetries: { a: '1' } }, true],
    [
      'the backfill cursor',
      RECORDED,
      { ...RECORDED, backfill: { completedSteps: 1, totalSteps: 4, progress: '1/4' } },
      true,
    ],
    ['a probe streak', RECORDED, { ...RECORDED, probeStreak: { stuck: 1, unanswered: 0 } }, true],
    [
      'a probe streak cleared',
      { ...RECORDED, probeStreak: { stuck: 1, unanswered: 0 } },
      { ...RECORDED, probeStreak: undefined },
      true,
    ],
    [
      'key order does not matter',
      { deployedImage: 'i', state: 'Dual' },
      { state: 'Dual', deployedImage: 'i' },
      false,
    ],
  ])('%s', (_name, old, next, want) => {
    expect(recordsDecision(old, next)).toBe(want);
  });
});
