/**
 * What the informer caches keep (operator/runtime/cache-trim.ts): per kind, the parts dropped, and
 * the judge that matters: everything the operator reads of the objects (observeWorld, the change
 * filters' fingerprints) is the same whether the caches hold the objects as sent or trimmed.
 */
import type {
  KubernetesObject,
  V1ConfigMap,
  V1Deployment,
  V1Job,
  V1ManagedFieldsEntry,
  V1NetworkPolicy,
  V1Pod,
  V1PodDisruptionBudget,
  V1Secret,
  V1Service,
} from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { cacheTrims } from '../../operator/runtime/cache-trim.ts';
import { fingerprints } from '../../operator/runtime/enqueue.ts';
import { type Caches, observeWorld, type WorkerReads } from '../../operator/runtime/observe.ts';
import { minimalService, minimalSpec } from '../fixtures/obsvc-spec.ts';

const managedFields: V1ManagedFieldsEntry[] = [
  {
    manager: 'observatory-operator',
    operation: 'Apply',
    apiVersion: 'apps/v1',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app.kubernetes.io/instance': {} } }, 'f:spec': {} },
  },
  { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status', fieldsType: 'FieldsV1' },
];
const meta = (name: string, role: string, annotations: Record<string, string> = {}) => ({
  name,
  namespace: 'ns',
  uid: `uid-${name}`,
  resourceVersion: '42',
  generation: 3,
  labels: {
    'app.kubernetes.io/instance': 'obs',
    'app.kubernetes.io/component': role,
    'app.kubernetes.io/managed-by': 'observatory-operator',
  },
  annotations,
  managedFields,
});
const podSpec = {
  containers: [
    {
      name: 'worker',
      image: 'observatory:dev',
      args: ['worker'],
      env: [{ name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'db', key: 'url' } } }],
      ports: [{ containerPort: 3030 }],
    },
  ],
};

const service0 = minimalService(minimalSpec('Dual'), { annotations: { a: 'b' } }, { state: 'Dual' });
// The operator's type of the object's metadata leaves managedFields out: the API server still sends it.
const object = { ...service0, metadata: { ...service0.metadata, managedFields } } as typeof service0;
const deployment: V1Deployment = {
  metadata: meta('obs-worker', 'worker', { 'observatory.dev/spec-hash': 's1' }),
  spec: {
    replicas: 2,
    selector: { matchLabels: { 'app.kubernetes.io/instance': 'obs' } },
    template: { metadata: { annotations: { 'observatory.dev/config-hash': 'c1' } }, spec: podSpec },
  },
  status: { observedGeneration: 3, replicas: 2, updatedReplicas: 2, readyReplicas: 1, availableReplicas: 1 },
};
const job: V1Job = {
  metadata: meta('obs-migrate-1', 'migrate', { 'observatory.dev/purpose': 'migrate' }),
  spec: { backoffLimit: 0, template: { spec: { ...podSpec, restartPolicy: 'Never' } } },
  status: { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'x' }] },
};
const service: V1Service = {
  metadata: meta('obs-web', 'web', { 'observatory.dev/spec-hash': 's2' }),
  spec: { ports: [{ port: 3000 }], selector: { 'app.kubernetes.io/instance': 'obs' } },
};
const budget: V1PodDisruptionBudget = {
  metadata: meta('obs-worker', 'worker', { 'observatory.dev/spec-hash': 's3' }),
  spec: { maxUnavailable: 1 },
  status: { currentHealthy: 1, desiredHealthy: 1, disruptionsAllowed: 0, expectedPods: 2 },
};
const policy: V1NetworkPolicy = {
  metadata: meta('obs-web', 'web', { 'observatory.dev/spec-hash': 's4' }),
  spec: { podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'obs' } }, policyTypes: ['Ingress'] },
};
const pod = (name: string, ready: boolean, hash: string): V1Pod => ({
  metadata: meta(name, 'worker', { 'observatory.dev/config-hash': hash }),
  spec: podSpec,
  status: {
    phase: 'Running',
    podIP: `10.0.0.${name.length}`,
    hostIP: '192.168.0.1',
    startTime: new Date(0),
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    containerStatuses: [
      { name: 'worker', image: 'observatory:dev', imageID: 'sha256:1', ready, restartCount: 4 },
    ],
  },
});
/** A backup Job's Pod: its summary is the termination message of the container that exited 0. */
const backupJob: V1Job = {
  metadata: meta('obs-backup-1', 'backup', { 'observatory.dev/purpose': 'backup' }),
  status: { conditions: [{ type: 'Complete', status: 'True' }] },
};
const backupPod: V1Pod = {
  metadata: {
    ...meta('obs-backup-1-x', 'backup'),
    labels: { ...meta('', 'backup').labels, 'batch.kubernetes.io/job-name': 'obs-backup-1' },
  },
  status: {
    phase: 'Succeeded',
    containerStatuses: [
      {
        name: 'observatory',
        image: 'observatory:dev',
        imageID: 'sha256:1',
        ready: false,
        restartCount: 0,
        state: {
          terminated: { exitCode: 0, message: '{"id":"b1"}', reason: 'Completed', startedAt: new Date(0) },
        },
      },
    ],
  },
};
const pods = [pod('ready', true, 'c1'), pod('starting', false, 'c1'), pod('old-one', true, 'c0'), backupPod];
const secret: V1Secret = {
  metadata: { ...meta('db', 'source'), labels: { 'observatory.dev/watch': 'true' } },
  data: { url: 'cG9zdGdyZXM6Ly8=' },
};
const configMap: V1ConfigMap = {
  metadata: { ...meta('settings', 'source'), labels: { 'observatory.dev/watch': 'true' } },
  data: { LOG_LEVEL: 'info' },
};

type Row = [kind: keyof typeof cacheTrims, input: KubernetesObject, dropped: string[]];
const rows: Row[] = [
  ['object', object, ['metadata.managedFields']],
  ['deployment', deployment, ['metadata.managedFields', 'spec.template.spec']],
  ['job', job, ['metadata.managedFields', 'spec']],
  ['service', service, ['metadata.managedFields', 'spec']],
  ['disruptionBudget', budget, ['metadata.managedFields', 'spec']],
  ['networkPolicy', policy, ['metadata.managedFields', 'spec']],
  [
    'pod',
    pods[0]!,
    ['metadata.managedFields', 'spec', 'status.hostIP', 'status.startTime', 'status.containerStatuses'],
  ],
  ['secret', secret, ['metadata.managedFields']],
  ['configMap', configMap, ['metadata.managedFields']],
];

/** Every leaf path of a JSON value ("a|b|c": keys hold dots), arrays and dates counted as leaves. */
function paths(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Date)
    return [prefix];
  return Object.entries(value).flatMap(([k, v]) => paths(v, prefix ? `${prefix}|${k}` : k));
}

const trim = (kind: keyof typeof cacheTrims, o: KubernetesObject) =>
  (cacheTrims[kind] as (o: KubernetesObject) => KubernetesObject)(o);

describe('what the informer caches keep of each kind', () => {
  it.each(rows)('%s: drops exactly %#', (kind, input, dropped) => {
    const before = structuredClone(input);
    const out = trim(kind, input);
    expect(input).toEqual(before); // the object as received is not changed
    const gone = dropped.map((d) => d.replaceAll('.', '|'));
    const under = (p: string) => gone.some((d) => p === d || p.startsWith(`${d}|`));
    const kept = paths(input).filter((p) => !under(p));
    expect(paths(out).sort()).toEqual(kept.sort());
    for (const p of kept) {
      const at = (o: unknown) => p.split('|').reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], o);
      expect(at(out), p).toEqual(at(input));
    }
  });

  it.each(rows)('%s: an object without the dropped parts passes unchanged', (kind) => {
    // e.g. a DELETED event's final state, or an object written before managedFields existed.
    const bare = { metadata: { name: 'x', namespace: 'ns', resourceVersion: '7' } };
    expect(trim(kind, bare)).toEqual(bare);
  });
});

describe('the operator reads the same of trimmed objects', () => {
  const caches = (t: (kind: keyof typeof cacheTrims, o: KubernetesObject) => KubernetesObject): Caches => ({
    deployments: () => [t('deployment', deployment) as V1Deployment],
    services: () => [t('service', service) as V1Service],
    jobs: () => [t('job', job) as V1Job, t('job', backupJob) as V1Job],
    pods: () => pods.map((p) => t('pod', p) as V1Pod),
    disruptionBudgets: () => [t('disruptionBudget', budget) as V1PodDisruptionBudget],
    networkPolicies: () => [t('networkPolicy', policy) as V1NetworkPolicy],
    secrets: () => [t('secret', secret) as V1Secret],
    configMaps: () => [t('configMap', configMap) as V1ConfigMap],
  });
  const recordingReads = (asked: string[]): WorkerReads => ({
    probe: async (p, path) => {
      asked.push(`probe ${p.metadata?.name} ${p.status?.podIP} ${path}`);
      return 'healthy';
    },
    producers: async (p, since) => {
      asked.push(`producers ${p.metadata?.name} ${p.status?.podIP} ${since}`);
      return undefined;
    },
    backfill: async (p) => {
      asked.push(`backfill ${p.metadata?.name} ${p.status?.podIP}`);
      return undefined;
    },
    ingestionBacklog: async (p) => {
      asked.push(`ingestion backlog ${p.metadata?.name} ${p.status?.podIP}`);
      return undefined;
    },
    jobResults: async (p) => {
      asked.push(`job results ${p.metadata?.name} ${p.status?.podIP}`);
      return undefined;
    },
  });

  it('observeWorld: the same world and the same Pods asked at the same addresses', async () => {
    const askedFull: string[] = [];
    const askedTrimmed: string[] = [];
    const full = await observeWorld(
      object,
      caches((_k, o) => o),
      recordingReads(askedFull),
    );
    const trimmed = await observeWorld(
      trim('object', object) as typeof object,
      caches(trim),
      recordingReads(askedTrimmed),
    );
    expect({ ...trimmed, now: full.now }).toEqual(full);
    expect(askedTrimmed).toEqual(askedFull);
    expect(askedFull.length).toBeGreaterThan(0);
    expect(full.deployments.worker?.stalePods).toBe(1);
    expect(full.networkPolicies?.web?.specHash).toBe('s4');
    expect(full.jobs.find((j) => j.purpose === 'backup')?.terminationMessage).toBe('{"id":"b1"}');
  });

  it.each([
    ['object', object, fingerprints.object],
    ['deployment', deployment, fingerprints.deployment],
    ['job', job, fingerprints.job],
    ['service', service, fingerprints.service],
    ['disruptionBudget', budget, fingerprints.disruptionBudget],
    ['networkPolicy', policy, fingerprints.networkPolicy],
    ['pod', pods[0]!, fingerprints.pod],
    ['secret', secret, fingerprints.source],
    ['configMap', configMap, fingerprints.source],
  ] as [keyof typeof cacheTrims, KubernetesObject, (o: never) => unknown][])(
    'the change filter fingerprint of a %s',
    (kind, input, fingerprint) => {
      expect(fingerprint(trim(kind, input) as never)).toEqual(fingerprint(input as never));
    },
  );
});
