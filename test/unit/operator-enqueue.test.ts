/** Which watch events enqueue a reconcile (runtime/enqueue.ts): sequences of events per kind. */
import type {
  KubernetesObject,
  V1Deployment,
  V1Job,
  V1Pod,
  V1Secret,
  V1Service,
} from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ObservabilityService } from '../../operator/api/v1alpha1.ts';
import { ChangeFilter, fingerprints, type Verb } from '../../operator/runtime/enqueue.ts';
import { minimalService, minimalSpec } from '../fixtures/obsvc-spec.ts';

const labels = { 'app.kubernetes.io/instance': 'obs', 'app.kubernetes.io/component': 'web' };
const meta = (rv: number, extra: Record<string, unknown> = {}) => ({
  name: 'obs-web',
  namespace: 'ns',
  resourceVersion: String(rv),
  labels,
  ...extra,
});

/** Each step: the event, and whether it should enqueue (`expect` steps record an own write). */
type Step<T> = [Verb | 'own write', T, boolean | undefined];

function replay<T extends KubernetesObject>(
  filter: ChangeFilter<T>,
  steps: Step<T>[],
): (boolean | undefined)[] {
  return steps.map(([verb, obj]) => {
    if (verb === 'own write') {
      filter.expect(obj);
      return undefined;
    }
    return filter.admit(verb, obj);
  });
}

const deployment = (rv: number, d: { generation?: number; ready?: number; hash?: string; note?: string }) =>
  ({
    metadata: meta(rv, {
      generation: d.generation ?? 1,
      annotations: { 'observatory.dev/spec-hash': d.hash ?? 'a', ...(d.note ? { note: d.note } : {}) },
      managedFields: [{ manager: `m${rv}` }],
    }),
    spec: { replicas: 2 },
    status: {
      observedGeneration: 1,
      replicas: 2,
      readyReplicas: d.ready ?? 2,
      conditions: [{ type: 'Available', status: 'True', lastUpdateTime: new Date(rv * 1000) }],
    },
  }) as unknown as V1Deployment;

const service: ObservabilityService = minimalService(
  minimalSpec('Legacy'),
  { uid: 'u', generation: 3, resourceVersion: '10' },
  { state: 'Legacy', observedGeneration: 2 },
);
const object = (
  rv: number,
  m: Record<string, unknown> = {},
  status: ObservabilityService['status'] = service.status,
): ObservabilityService => ({
  ...service,
  metadata: { ...service.metadata, resourceVersion: String(rv), ...m },
  ...(status ? { status } : {}),
});

const pod = (rv: number, p: { ready?: boolean; ip?: string; restarts?: number; deleting?: boolean }) =>
  ({
    metadata: meta(rv, p.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    status: {
      phase: 'Running',
      ...(p.ip ? { podIP: p.ip } : {}),
      conditions: [{ type: 'Ready', status: p.ready ? 'True' : 'False' }],
      containerStatuses: [{ name: 'c', restartCount: p.restarts ?? 0 }],
    },
  }) as unknown as V1Pod;

const job = (rv: number, j: { active?: number; done?: boolean }) =>
  ({
    metadata: meta(rv, { annotations: { 'observatory.dev/purpose': 'schema' } }),
    status: {
      active: j.active ?? 1,
      ...(j.done ? { conditions: [{ type: 'Complete', status: 'True' }] } : {}),
    },
  }) as unknown as V1Job;

const svc = (rv: number, hash: string, ip: string) =>
  ({
    metadata: meta(rv, { annotations: { 'observatory.dev/spec-hash': hash } }),
    spec: { clusterIP: ip },
  }) as V1Service;

const secret = (rv: number, data: Record<string, string>, note = '') =>
  ({ metadata: meta(rv, { annotations: { note } }), data }) as V1Secret;

describe('owned objects enqueue on what the operator reads', () => {
  it.each<[string, Step<V1Deployment>[]]>([
    [
      'Deployment',
      [
        ['add', deployment(1, {}), true],
        ['update', deployment(2, {}), false], // heartbeat and managedFields only
        ['update', deployment(3, { note: 'x' }), false], // an annotation the operator does not read
        ['update', deployment(4, { ready: 1 }), true], // a replica not ready any more
        ['update', deployment(5, { ready: 1, generation: 2 }), true], // a new generation
        ['update', deployment(6, { ready: 1, generation: 2, hash: 'b' }), true], // another rendering
        ['delete', deployment(7, {}), true],
        ['add', deployment(8, {}), true],
      ],
    ],
  ])('%s', (_kind, steps) => {
    expect(replay(new ChangeFilter(fingerprints.deployment), steps)).toEqual(steps.map((s) => s[2]));
  });

  it.each<[string, Step<V1Pod>[]]>([
    [
      'worker Pod',
      [
        ['add', pod(1, {}), true],
        ['update', pod(2, { ip: '10.0.0.1' }), true], // an address to ask
        ['update', pod(3, { ip: '10.0.0.1', ready: true }), true], // Ready
        ['update', pod(4, { ip: '10.0.0.1', ready: true, restarts: 1 }), false], // restart count
        ['update', pod(5, { ip: '10.0.0.1', ready: true, restarts: 1, deleting: true }), true],
        ['delete', pod(6, {}), true],
      ],
    ],
  ])('%s', (_kind, steps) => {
    expect(replay(new ChangeFilter(fingerprints.pod), steps)).toEqual(steps.map((s) => s[2]));
  });

  it('Job: its outcome, not its counters', () => {
    const steps: Step<V1Job>[] = [
      ['add', job(1, { active: 0 }), true],
      ['update', job(2, { active: 1 }), false],
      ['update', job(3, { active: 0, done: true }), true],
    ];
    expect(replay(new ChangeFilter(fingerprints.job), steps)).toEqual(steps.map((s) => s[2]));
  });

  it('Service: its rendering, not what the cluster filled in', () => {
    const steps: Step<V1Service>[] = [
      ['add', svc(1, 'a', ''), true],
      ['update', svc(2, 'a', '10.96.0.7'), false],
      ['update', svc(3, 'b', '10.96.0.7'), true],
    ];
    expect(replay(new ChangeFilter(fingerprints.service), steps)).toEqual(steps.map((s) => s[2]));
  });

  it('watched Secret: its data, not its metadata', () => {
    const steps: Step<V1Secret>[] = [
      ['add', secret(1, { url: 'YQ==' }), true],
      ['update', secret(2, { url: 'YQ==' }, 'touched'), false],
      ['update', secret(3, { url: 'Yg==' }, 'touched'), true],
      ['update', secret(4, { url: 'Yg==', extra: 'Yw==' }, 'touched'), true],
    ];
    expect(replay(new ChangeFilter(fingerprints.source), steps)).toEqual(steps.map((s) => s[2]));
  });
});

describe('the ObservabilityService', () => {
  const written = object(11, {}, { state: 'Legacy', observedGeneration: 3 });
  it.each<[string, Step<ObservabilityService>[]]>([
    [
      'the echo of its own status write enqueues nothing; the next real change does',
      [
        ['add', object(10), true],
        ['own write', written, undefined],
        ['update', written, false],
        ['update', object(12, { generation: 4 }, written.status), true],
      ],
    ],
    [
      'an echo that arrives before the write returned enqueues once (harmless), not twice',
      [
        ['add', object(10), true],
        ['update', written, true],
        ['own write', written, undefined],
        ['update', written, false],
      ],
    ],
    [
      'a status written by someone else enqueues',
      [
        ['add', object(10), true],
        ['update', object(11, {}, { state: 'Dual' }), true],
      ],
    ],
    [
      'annotations (approvals, retries), labels and deletion enqueue; a bare resourceVersion does not',
      [
        ['add', object(10), true],
        ['update', object(11), false],
        ['update', object(12, { annotations: { 'observatory.dev/approve': 'x' } }), true],
        ['update', object(13, { labels: { team: 'a' } }), true],
        ['update', object(14, { labels: { team: 'a' }, deletionTimestamp: 'now' }), true],
        ['delete', object(15), true],
      ],
    ],
  ])('%s', (_name, steps) => {
    expect(replay(new ChangeFilter(fingerprints.object), steps)).toEqual(steps.map((s) => s[2]));
  });

  it('objects are told apart by namespace and name', () => {
    const f = new ChangeFilter(fingerprints.object);
    const other = object(10, { namespace: 'other' });
    expect([f.admit('add', object(10)), f.admit('add', other), f.admit('update', object(11))]).toEqual([
      true,
      true,
      false,
    ]);
  });
});
