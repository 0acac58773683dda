/** Which worker Pods the operator asks (observeWorld), over Pods in every phase of a rollout. */
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { observationsNeeded } from '../../operator/planner/observations.ts';
import {
  type Caches,
  observedDeployment,
  observeWorld,
  type WorkerReads,
} from '../../operator/runtime/observe.ts';
import { minimalService, minimalSpec } from '../fixtures/obsvc-spec.ts';

const service = minimalService(
  { ...minimalSpec('Dual'), upgrade: { backupConfirmed: true } },
  {},
  { state: 'Dual' },
);

function pod(
  name: string,
  opts: { ready?: boolean; ip?: boolean; deleting?: boolean; instance?: string },
): V1Pod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      labels: {
        'app.kubernetes.io/instance': opts.instance ?? 'obs',
        'app.kubernetes.io/component': 'worker',
      },
      ...(opts.deleting ? { deletionTimestamp: new Date() } : {}),
    },
    status: {
      phase: 'Running',
      ...(opts.ip === false ? {} : { podIP: '10.0.0.1' }),
      conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }],
    },
  };
}

const PODS = [
  pod('serving', {}),
  pod('starting', { ready: false }),
  pod('terminating', { deleting: true }),
  pod('unscheduled', { ready: false, ip: false }),
  pod('other-instance', { instance: 'someone-else' }),
];

async function observe(pods: V1Pod[], object = service) {
  const asked: string[] = [];
  const none = () => [];
  const caches: Caches = {
    deployments: none,
    services: none,
    jobs: none,
    pods: () => pods,
    disruptionBudgets: none,
    networkPolicies: none,
    secrets: none,
    configMaps: none,
  };
  const reads: WorkerReads = {
    probe: async (p) => {
      asked.push(`probe ${p.metadata?.name}`);
      return 'healthy';
    },
    producers: async (p) => {
      asked.push(`producers ${p.metadata?.name}`);
      return undefined;
    },
    backfill: async (p) => {
      asked.push(`backfill ${p.metadata?.name}`);
      return undefined;
    },
    ingestionBacklog: async (p) => {
      asked.push(`ingestion backlog ${p.metadata?.name}`);
      return undefined;
    },
    jobResults: async (p) => {
      asked.push(`job results ${p.metadata?.name}`);
      return undefined;
    },
  };
  const world = await observeWorld(object, caches, reads);
  return { world, asked };
}

describe('the worker Pods the operator asks', () => {
  it('probes only Ready, live Pods of this object: a starting Pod cannot answer for the others', async () => {
    const { world, asked } = await observe(PODS);
    expect(world.workerProbes).toEqual([{ pod: 'serving', result: 'healthy' }]);
    expect(asked).toEqual(['probe serving', 'backfill serving']);
  });

  it('with no Ready Pod nothing is asked, so the planner sees fewer answers than replicas', async () => {
    const { world, asked } = await observe(PODS.slice(1));
    expect(world.workerProbes).toEqual([]);
    expect(world.backfill).toEqual({ known: false });
    expect(asked).toEqual([]);
  });
});

describe("the Jobs' recorded results are read while a Job that records one may be looked up", () => {
  const pass = { state: 'Dual' as const, since: '2026-03-01T11:00:00.000Z', image: 'observatory:dev' };
  const cleanup = { ...minimalSpec('EventsOnly'), cleanup: { truncateLegacyTables: true } };
  it.each([
    {
      when: 'a pass before its preflight',
      spec: minimalSpec('Dual'),
      status: { state: 'Release3' as const, target: pass },
      read: true,
    },
    {
      when: 'a pass before its schema Job succeeded',
      spec: minimalSpec('Dual'),
      status: { state: 'Release3' as const, target: { ...pass, preflightPassed: true } },
      read: true,
    },
    {
      when: 'a pass whose schema is migrated',
      spec: minimalSpec('Dual'),
      status: { state: 'Release3' as const, target: { ...pass, schemaMigrated: true } },
      read: false,
    },
    {
      when: 'EventsOnly with the truncate ahead',
      spec: cleanup,
      status: { state: 'EventsOnly' as const },
      read: true,
    },
    {
      when: 'EventsOnly with the legacy tables truncated',
      spec: cleanup,
      status: { state: 'EventsOnly' as const, legacyTablesTruncated: true },
      read: false,
    },
    {
      when: 'EventsOnly without the truncate',
      spec: minimalSpec('EventsOnly'),
      status: { state: 'EventsOnly' as const },
      read: false,
    },
  ])('$when: $read', async ({ spec, status, read }) => {
    const object = minimalService(spec, {}, status);
    expect(observationsNeeded(object).jobResults).toBe(read);
    const { world, asked } = await observe(PODS, object);
    expect(asked.includes('job results serving')).toBe(read);
    // No answer: the planner falls back to the Jobs themselves.
    expect(world.jobResults).toEqual(read ? { known: false } : undefined);
  });
});

describe("a Deployment's pods of an earlier template (stalePods)", () => {
  const deployment: V1Deployment = {
    metadata: { name: 'obs-web', generation: 3 },
    spec: {
      replicas: 2,
      selector: {},
      template: { metadata: { annotations: { 'observatory.dev/config-hash': 'new' } } },
    },
    status: {
      observedGeneration: 3,
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
    },
  };
  const webPod = (name: string, hash: string, extra: { deleting?: boolean; phase?: string } = {}): V1Pod => ({
    metadata: {
      name,
      annotations: { 'observatory.dev/config-hash': hash },
      ...(extra.deleting ? { deletionTimestamp: new Date() } : {}),
    },
    status: { phase: extra.phase ?? 'Running' },
  });

  it.each([
    ['none: every pod runs the current template', [webPod('a', 'new'), webPod('b', 'new')], 0],
    ['an old pod still running', [webPod('a', 'new'), webPod('old', 'old')], 1],
    [
      'an old pod terminating (it may still answer through the Service)',
      [webPod('old', 'old', { deleting: true })],
      1,
    ],
    [
      'an evicted old pod (phase Failed: its object stays, it serves nothing)',
      [webPod('old', 'old', { phase: 'Failed' })],
      0,
    ],
    ['a completed old pod', [webPod('old', 'old', { phase: 'Succeeded' })], 0],
    ['a current pod terminating (a drain, not an old mode)', [webPod('a', 'new', { deleting: true })], 0],
  ])('%s', (_label, pods, stale) => {
    expect(observedDeployment(deployment, pods).stalePods).toBe(stale);
  });
});
