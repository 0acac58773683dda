// Admission of the production fields by a real kube-apiserver (test/fixtures/api-server.ts, no node):
// the CRD's schema and CEL refuse owned env names (naming the variable), conflicting budget
// settings, out-of-range settings, the operator's /tmp, blob storage without a bucket, with half its
// credentials or an inline credential; a spec using every template field is accepted; and the Pods,
// Deployments, Jobs and PodDisruptionBudgets the operator renders from it pass the API server's own
// validation, the Pods in a namespace that enforces the restricted Pod Security Standard
// (server-side dry run: no node needed).
import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PolicyV1Api,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyCrdDirs, waitEstablished } from '../../cluster/crds.ts';
import { crdDir } from '../../cluster/paths.ts';
import { withDefaults } from '../../operator/api/effective.ts';
import type { ObservabilityServiceSpec } from '../../operator/api/v1alpha1.ts';
import { renderDisruptionBudget } from '../../operator/render/disruption.ts';
import { renderJob } from '../../operator/render/jobs.ts';
import { renderDeployment } from '../../operator/render/workloads.ts';
import { type ControlPlane, startControlPlane } from '../fixtures/api-server.ts';
import { minimalSpec } from '../fixtures/obsvc-spec.ts';

const NS = 'restricted';

const base = minimalSpec('Dual', 'db');

const everyField: ObservabilityServiceSpec = {
  ...base,
  logLevel: 'debug',
  propagation: { intervalSeconds: 30, graceSeconds: 10 },
  datastores: {
    ...base.datastores,
    clickhouse: {
      ...base.datastores.clickhouse,
      clusterEnabled: true,
      clusterName: 'analytics',
      useLightweightUpdate: true,
    },
  },
  web: {
    replicas: 2,
    maxInFlightWrites: 256,
    podDisruptionBudget: { minAvailable: '50%' },
    template: {
      metadata: { labels: { team: 'obs' }, annotations: { 'example.com/owner': 'obs' } },
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'obs', effect: 'NoSchedule' }],
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname' } },
          ],
        },
      },
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
      ],
      priorityClassName: 'system-cluster-critical',
      serviceAccountName: 'observatory-web',
      imagePullSecrets: [{ name: 'registry' }],
      podSecurityContext: { runAsUser: 20000, runAsGroup: 20000 },
      containerSecurityContext: { capabilities: { drop: ['ALL'] } },
      env: [
        { name: 'HTTPS_PROXY', value: 'http://proxy:3128' },
        { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'db', key: 'token' } } },
      ],
      envFrom: [{ configMapRef: { name: 'extra', optional: true } }],
      volumes: [{ name: 'ca', configMap: { name: 'ca-bundle' } }],
      volumeMounts: [{ name: 'ca', mountPath: '/etc/ssl/custom', readOnly: true }],
    },
  },
  blobStorage: {
    media: {
      bucket: 'obs-media',
      prefix: 'media/',
      region: 'eu-central-1',
      endpoint: 'http://s3.storage.svc:7070',
      forcePathStyle: true,
      accessKeyIdSecretRef: { name: 's3', key: 'id' },
      secretAccessKeySecretRef: { name: 's3', key: 'secret' },
      maxContentLength: 5_000_000_000,
      downloadUrlExpirySeconds: 604_800,
    },
    exports: { bucket: 'obs.exports', intervalSeconds: 300 },
  },
  worker: { replicas: 2, podDisruptionBudget: { enabled: true, maxUnavailable: 1 } },
  jobs: {
    template: { nodeSelector: { 'kubernetes.io/os': 'linux' } },
    resources: { limits: { memory: '1Gi' } },
  },
};

let cluster: ControlPlane | undefined;
let objects: CustomObjectsApi;

const create = (spec: unknown, name = 'obs', fieldValidation?: 'Strict') =>
  objects.createNamespacedCustomObject({
    ...(fieldValidation ? { fieldValidation } : {}),
    group: 'observatory.dev',
    version: 'v1alpha1',
    namespace: NS,
    plural: 'observabilityservices',
    body: { apiVersion: 'observatory.dev/v1alpha1', kind: 'ObservabilityService', metadata: { name }, spec },
    dryRun: 'All',
  });

/** The API server's refusal message, or 'accepted'. */
async function verdict(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'accepted';
  } catch (error) {
    const body = (error as { body?: string }).body;
    return body ? (JSON.parse(body) as { message: string }).message : String(error);
  }
}

beforeAll(async () => {
  cluster = await startControlPlane({ crdDirs: [] });
  const kc = cluster.kubeconfig;
  const names = await applyCrdDirs(kc, [crdDir]);
  await waitEstablished(kc, names);
  objects = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespace({
    body: { metadata: { name: NS, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } },
  });
  // No controller manager: the service accounts the Pods name are made here.
  for (const name of ['default', 'observatory-web'])
    await core.createNamespacedServiceAccount({ namespace: NS, body: { metadata: { name } } });
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('admission of the production fields (real kube-apiserver)', () => {
  it('accepts a spec that uses every template field and setting', async () => {
    expect(await verdict(create(everyField))).toBe('accepted');
  });

  it.each([
    [
      'an owned variable in extra env, naming it',
      { web: { template: { env: [{ name: 'SERVICE_MIGRATION_V4_WRITE_MODE', value: 'legacy' }] } } },
      'env SERVICE_MIGRATION_V4_WRITE_MODE is set by the operator from the spec and cannot be overridden',
    ],
    [
      'DATABASE_URL in the Jobs env',
      { jobs: { template: { env: [{ name: 'DATABASE_URL', value: 'postgres://x' }] } } },
      'env DATABASE_URL is set by the operator',
    ],
    [
      'both minAvailable and maxUnavailable',
      { worker: { podDisruptionBudget: { minAvailable: 1, maxUnavailable: 1 } } },
      'set at most one of minAvailable and maxUnavailable',
    ],
    [
      'a budget percentage over 100',
      { web: { podDisruptionBudget: { minAvailable: '150%' } } },
      'minAvailable',
    ],
    ['propagation interval 0', { propagation: { intervalSeconds: 0 } }, 'spec.propagation.intervalSeconds'],
    [
      'propagation grace over an hour',
      { propagation: { graceSeconds: 3601 } },
      'spec.propagation.graceSeconds',
    ],
    ['ingestion limit over 10000', { web: { maxInFlightWrites: 10_001 } }, 'spec.web.maxInFlightWrites'],
    ['an unknown log level', { logLevel: 'verbose' }, 'spec.logLevel'],
    [
      'a cluster name without cluster mode',
      { datastores: { ...base.datastores, clickhouse: { ...base.datastores.clickhouse, clusterName: 'c' } } },
      'clusterName is used only with clusterEnabled: true',
    ],
    [
      "a volume named 'tmp'",
      { worker: { template: { volumes: [{ name: 'tmp', emptyDir: {} }] } } },
      "volume name 'tmp' is the operator's writable /tmp",
    ],
    [
      'a mount over /tmp',
      { worker: { template: { volumeMounts: [{ name: 'x', mountPath: '/tmp' }] } } },
      'volumeMounts may not use /tmp',
    ],
    [
      'envFrom naming both kinds',
      { web: { template: { envFrom: [{ secretRef: { name: 'a' }, configMapRef: { name: 'b' } }] } } },
      'envFrom entries name exactly one of secretRef or configMapRef',
    ],
    [
      'a blob storage variable in extra env',
      { worker: { template: { env: [{ name: 'SERVICE_S3_BATCH_EXPORT_SECRET_ACCESS_KEY', value: 'k' }] } } },
      'env SERVICE_S3_BATCH_EXPORT_SECRET_ACCESS_KEY is set by the operator',
    ],
    [
      'a bucket key id without its secret key',
      { blobStorage: { media: { bucket: 'obs-media', accessKeyIdSecretRef: { name: 's3', key: 'id' } } } },
      'spec.blobStorage.media: Required value: set both accessKeyIdSecretRef and secretAccessKeySecretRef, or neither',
    ],
    [
      'a secret key without its key id',
      {
        blobStorage: {
          exports: { bucket: 'obs-exports', secretAccessKeySecretRef: { name: 's3', key: 'secret' } },
        },
      },
      'spec.blobStorage.exports: Required value: set both accessKeyIdSecretRef and secretAccessKeySecretRef',
    ],
    [
      'a bucket setting without a bucket',
      { blobStorage: { media: { prefix: 'm/' } } },
      'spec.blobStorage.media.bucket: Required value',
    ],
    [
      'an invalid bucket name',
      { blobStorage: { media: { bucket: 'Obs_Media' } } },
      'spec.blobStorage.media.bucket',
    ],
    [
      'a prefix starting with /',
      { blobStorage: { exports: { bucket: 'obs-exports', prefix: '/exports' } } },
      'spec.blobStorage.exports.prefix',
    ],
    [
      'an endpoint that is not an http(s) URL',
      { blobStorage: { media: { bucket: 'obs-media', endpoint: 's3.example:9000' } } },
      'spec.blobStorage.media.endpoint',
    ],
    [
      'a media size of 0',
      { blobStorage: { media: { bucket: 'obs-media', maxContentLength: 0 } } },
      'spec.blobStorage.media.maxContentLength',
    ],
    [
      'a download URL living over seven days',
      { blobStorage: { media: { bucket: 'obs-media', downloadUrlExpirySeconds: 604_801 } } },
      'spec.blobStorage.media.downloadUrlExpirySeconds',
    ],
    [
      'an export interval over a day',
      { blobStorage: { exports: { bucket: 'obs-exports', intervalSeconds: 86_401 } } },
      'spec.blobStorage.exports.intervalSeconds',
    ],
  ])('refuses %s', async (_, patch, message) => {
    expect(await verdict(create({ ...base, ...patch }))).toContain(message);
  });

  it('has no field for an inline bucket credential (refused under strict field validation)', async () => {
    const inline = { ...base, blobStorage: { media: { bucket: 'obs-media', secretAccessKey: 'k' } } };
    expect(await verdict(create(inline, 'obs', 'Strict'))).toContain(
      'unknown field "spec.blobStorage.media.secretAccessKey"',
    );
  });

  it('the Pods, Deployments, Jobs and budgets rendered from that spec pass the API server, Pods under restricted PSS', async () => {
    const kc = cluster!.kubeconfig;
    const ctx = {
      meta: { name: 'obs', namespace: NS, uid: 'u-1', generation: 1 },
      spec: withDefaults(everyField),
    };
    const apps = kc.makeApiClient(AppsV1Api);
    const batch = kc.makeApiClient(BatchV1Api);
    const policy = kc.makeApiClient(PolicyV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    const strip = <T extends { metadata?: { ownerReferences?: unknown } }>(o: T): T => ({
      ...o,
      // The owner does not exist on this API server (dry-run create of the custom resource).
      metadata: { ...o.metadata, ownerReferences: undefined },
    });
    const results: Record<string, string> = {};
    for (const role of ['web', 'worker'] as const) {
      const d = renderDeployment(ctx, role, 'Dual');
      results[`Deployment ${role}`] = await verdict(
        apps.createNamespacedDeployment({ namespace: NS, body: strip(d), dryRun: 'All' }),
      );
      const pod: V1Pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `obs-${role}-pod`, labels: d.spec!.template.metadata!.labels! },
        spec: d.spec!.template.spec!,
      };
      results[`Pod ${role}`] = await verdict(
        core.createNamespacedPod({ namespace: NS, body: pod, dryRun: 'All' }),
      );
      const pdb = renderDisruptionBudget(ctx, role)!;
      results[`PodDisruptionBudget ${role}`] = await verdict(
        policy.createNamespacedPodDisruptionBudget({ namespace: NS, body: strip(pdb), dryRun: 'All' }),
      );
    }
    const job = renderJob(ctx, {
      purpose: 'backfill-1',
      state: 'Dual',
      image: 'observatory:dev',
      attempt: 0,
    });
    results.Job = await verdict(
      batch.createNamespacedJob({ namespace: NS, body: strip(job), dryRun: 'All' }),
    );
    results['Job Pod'] = await verdict(
      core.createNamespacedPod({
        namespace: NS,
        body: { metadata: { name: 'obs-job-pod' }, spec: job.spec!.template.spec! },
        dryRun: 'All',
      }),
    );
    expect(results).toEqual(Object.fromEntries(Object.keys(results).map((k) => [k, 'accepted'])));
  });

  it('the restricted namespace does refuse a Pod that leaves the defaults (the check has teeth)', async () => {
    const ctx = {
      meta: { name: 'obs', namespace: NS, uid: 'u-1', generation: 1 },
      spec: withDefaults({
        ...base,
        web: { template: { containerSecurityContext: { allowPrivilegeEscalation: true } } },
      }),
    };
    const spec = renderDeployment(ctx, 'web', 'Dual').spec!.template.spec!;
    const core = cluster!.kubeconfig.makeApiClient(CoreV1Api);
    expect(
      await verdict(
        core.createNamespacedPod({ namespace: NS, body: { metadata: { name: 'bad' }, spec }, dryRun: 'All' }),
      ),
    ).toContain('allowPrivilegeEscalation != false');
  });
});
