/** Which actions of a pass go out together (runtime/batches.ts). */
import { describe, expect, it } from 'vitest';
import type { Action } from '../../operator/index.ts';
import { batches } from '../../operator/runtime/batches.ts';

const obj = { metadata: { name: 'x' } };
const A: Record<string, Action> = {
  status: { kind: 'writeStatus', status: {} },
  event: { kind: 'event', type: 'Normal', reason: 'R', message: 'm' },
  web: { kind: 'applyDeployment', role: 'web', object: obj },
  worker: { kind: 'applyDeployment', role: 'worker', object: obj },
  svc: { kind: 'applyService', role: 'web', object: obj },
  pdb: { kind: 'applyDisruptionBudget', role: 'web', object: obj },
  nopdb: { kind: 'deleteDisruptionBudget', role: 'web', name: 'x-web' },
  netpol: { kind: 'applyNetworkPolicy', role: 'web', object: obj },
  nonetpol: { kind: 'deleteNetworkPolicy', role: 'worker', name: 'x-worker' },
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
    [
      'NetworkPolicies go out with the other workload writes',
      ['status', 'svc', 'pdb', 'netpol', 'nonetpol', 'web'],
      [['status'], ['svc', 'pdb', 'netpol', 'nonetpol', 'web']],
    ],
    ['a Job splits workload writes', ['web', 'job', 'worker'], [['web'], ['job'], ['worker']]],
    ['two status writes never merge', ['status', 'status'], [['status'], ['status']]],
  ])('%s', (_name, input, want) => {
    const name = (a: Action) => Object.entries(A).find(([, v]) => v === a)![0];
    expect(batches(input.map((n) => A[n]!)).map((b) => b.map(name))).toEqual(want);
  });
});
