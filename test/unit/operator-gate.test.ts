/**
 * The leadership gate: a pass runs only while the process leads with every cache synced, a queue
 * drops what arrives before that, and a pass that loses the gate writes nothing more.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ObservabilityService } from '../../operator/api/v1alpha1.ts';
import { type ControllerDeps, reconcile } from '../../operator/runtime/controller.ts';
import { type Blocked, type CacheState, reconcileBlocked } from '../../operator/runtime/gate.ts';
import type { Kube } from '../../operator/runtime/kube.ts';
import { operatorMetrics } from '../../operator/runtime/serve.ts';
import { WorkQueue } from '../../operator/runtime/workqueue.ts';
import { minimalService, minimalSpec } from '../fixtures/obsvc-spec.ts';

const synced = (name: string, s = true): CacheState => ({ name, synced: s });

describe('reconcileBlocked', () => {
  it.each<[string, boolean, CacheState[], Blocked | undefined]>([
    ['a follower, caches synced', false, [synced('pods')], { kind: 'notLeader' }],
    ['a follower, caches not synced', false, [synced('pods', false)], { kind: 'notLeader' }],
    [
      'the leader before its caches listed',
      true,
      [synced('objects', false), synced('pods', false)],
      { kind: 'cachesNotSynced', caches: ['objects', 'pods'] },
    ],
    [
      'the leader with one informer restarting after a watch error',
      true,
      [synced('objects'), synced('deployments', false), synced('pods')],
      { kind: 'cachesNotSynced', caches: ['deployments'] },
    ],
    ['the leader with every cache synced', true, [synced('objects'), synced('pods')], undefined],
    ['the leader with no caches', true, [], undefined],
  ])('%s', (_, leading, caches, expected) => {
    expect(reconcileBlocked(leading, caches)).toEqual(expected);
  });
});

describe('a closed work queue', () => {
  it('drops every key until opened, then runs what is added', async () => {
    const seen: string[] = [];
    const q = new WorkQueue(
      async (k) => {
        seen.push(k);
        return undefined;
      },
      { closed: true },
    );
    q.add('early');
    q.addAfter('later', 1);
    await new Promise((r) => setTimeout(r, 20));
    await q.idle();
    expect(seen).toEqual([]);
    expect(q.length).toBe(0);
    q.open();
    q.add('a');
    await q.idle();
    expect(seen).toEqual(['a']);
    await q.stop();
  });
});

/** A release 3 object whose first pass recorded its intent: the next writes status, then a child. */
const object: ObservabilityService = minimalService(
  { release: '3', image: 'observatory:dev', datastores: minimalSpec(undefined).datastores },
  { uid: 'u', generation: 1, resourceVersion: '7' },
  { target: { state: 'Release3', since: '2026-11-26T12:00:00.000Z', image: 'observatory:dev' } },
);

/** A reconciler over empty caches whose writes are recorded, and a gate the test moves. */
function harness(gate: (writes: number) => Blocked | undefined) {
  const writes: string[] = [];
  const record = async <T extends KubernetesObject>(what: string, obj: T): Promise<T> => {
    writes.push(`${what} ${obj.kind}/${obj.metadata?.name}`);
    return obj;
  };
  const kube = {
    apply: (o: KubernetesObject) => record('apply', o),
    delete: (o: KubernetesObject) => record('delete', o),
    replaceStatus: (o: KubernetesObject) => record('status', o),
    event: async () => {
      writes.push('event');
    },
  } as unknown as Kube;
  const metrics = operatorMetrics();
  const deps: ControllerDeps = {
    kube,
    objects: () => object,
    caches: {
      deployments: () => [],
      services: () => [],
      jobs: () => [],
      pods: () => [],
      disruptionBudgets: () => [],
      networkPolicies: () => [],
      secrets: () => [],
      configMaps: () => [],
    },
    reads: {
      probe: async () => 'unreachable',
      producers: async () => undefined,
      backfill: async () => undefined,
      ingestionBacklog: async () => undefined,
      jobResults: async () => undefined,
    },
    metrics,
    log: () => {},
    blocked: () => gate(writes.length),
  };
  const passes = async () =>
    (await metrics.registry.getSingleMetricAsString('observatory_operator_reconcile_duration_seconds'))
      .split('\n')
      .filter((l) => l.startsWith('observatory_operator_reconcile_duration_seconds_count'))
      .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
  return { deps, writes, passes };
}

describe('reconcile behind the gate', () => {
  it('an open gate: the pass writes status first, then a child', async () => {
    const h = harness(() => undefined);
    await reconcile('ns/obs', h.deps);
    expect(h.writes[0]).toBe('status ObservabilityService/obs');
    expect(h.writes.slice(1).some((w) => w.startsWith('apply '))).toBe(true);
    expect(await h.passes()).toBe(1);
  });

  it('not leading: nothing is reconciled or counted (a late renewal may still restore it)', async () => {
    const h = harness(() => ({ kind: 'notLeader' }));
    expect(await reconcile('ns/obs', h.deps)).toEqual({ requeueAfterMs: 1_000 });
    expect(h.writes).toEqual([]);
    expect(await h.passes()).toBe(0);
  });

  it('unsynced caches: nothing is concluded or written, the key is looked at again shortly', async () => {
    const h = harness(() => ({ kind: 'cachesNotSynced', caches: ['deployments'] }));
    expect(await reconcile('ns/obs', h.deps)).toEqual({ requeueAfterMs: 500 });
    expect(h.writes).toEqual([]);
  });

  it('losing the Lease mid-pass: nothing is written after the loss', async () => {
    // The gate closes once the first write (the status) is done.
    const h = harness((writes) => (writes >= 1 ? { kind: 'notLeader' } : undefined));
    expect(await reconcile('ns/obs', h.deps)).toEqual({ requeueAfterMs: 1_000 });
    expect(h.writes).toEqual(['status ObservabilityService/obs']);
  });
});
