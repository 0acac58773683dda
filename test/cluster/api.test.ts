// The API side of the local cluster: CRDs with CEL rules applied by the harness, garbage
// collection by the real controller manager, and Pods that see their environment, their own
// service account identity (RBAC enforced) and clear failures for images the node cannot run.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiException, CustomObjectsApi, RbacAuthorizationV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { waitFor } from '../../cluster/wait.ts';
import { type Cluster, startCluster } from './harness.ts';
import { clients, containerPids, createNamespace, processAlive } from './testing.ts';

const widgetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.test.observatory.dev' },
  spec: {
    group: 'test.observatory.dev',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  min: { type: 'integer' },
                  max: { type: 'integer' },
                  mode: {
                    type: 'string',
                    'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'mode is immutable' }],
                  },
                },
                'x-kubernetes-validations': [
                  { rule: 'self.min <= self.max', message: 'min must not exceed max' },
                ],
              },
            },
          },
        },
      },
    ],
  },
};

const isNotFound = (error: unknown) => error instanceof ApiException && error.code === 404;

describe('API, controllers and Pod environment on the local cluster', () => {
  let cluster: Cluster;
  let crdDir: string;
  let ns: string;

  beforeAll(async () => {
    crdDir = await mkdtemp(join(tmpdir(), 'observatory-crds-'));
    await writeFile(join(crdDir, 'widgets.yaml'), stringify(widgetCrd));
    cluster = await startCluster({ crdDirs: [crdDir] });
    ns = await createNamespace(cluster, 'api');
    await waitFor('default service account in the namespace', () =>
      clients(cluster).core.readNamespacedServiceAccount({ name: 'default', namespace: ns }),
    );
  });
  afterAll(async () => {
    await cluster?.stop();
    await rm(crdDir, { recursive: true, force: true });
  });

  /** Runs a Pod to completion and returns it with its log. */
  async function runToEnd(pod: V1Pod): Promise<{ pod: V1Pod; log: string }> {
    const { core } = clients(cluster);
    await core.createNamespacedPod({ namespace: ns, body: pod });
    const name = pod.metadata?.name ?? '';
    const done = await waitFor(`pod ${name} finished`, async () => {
      const p = await core.readNamespacedPod({ name, namespace: ns });
      return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
    });
    return { pod: done, log: await cluster.logs(ns, name, pod.spec?.containers[0]?.name ?? '') };
  }

  it('a CRD with a CEL rule rejects an invalid object with the rule message', async () => {
    const custom = cluster.kubeconfig.makeApiClient(CustomObjectsApi);
    const widget = (name: string, min: number, max: number, mode = 'a') => ({
      group: 'test.observatory.dev',
      version: 'v1',
      namespace: ns,
      plural: 'widgets',
      body: {
        apiVersion: 'test.observatory.dev/v1',
        kind: 'Widget',
        metadata: { name },
        spec: { min, max, mode },
      },
    });
    const rejected = await custom.createNamespacedCustomObject(widget('bad', 5, 1)).catch((e: unknown) => e);
    expect(rejected).toBeInstanceOf(ApiException);
    expect((rejected as ApiException<unknown>).code).toBe(422);
    expect(JSON.stringify((rejected as ApiException<unknown>).body)).toContain('min must not exceed max');

    await custom.createNamespacedCustomObject(widget('good', 1, 5));
    // A transition rule (oldSelf) holds on update.
    const current = (await custom.getNamespacedCustomObject({
      group: 'test.observatory.dev',
      version: 'v1',
      namespace: ns,
      plural: 'widgets',
      name: 'good',
    })) as { spec: { mode: string } };
    current.spec.mode = 'b';
    const immutable = await custom
      .replaceNamespacedCustomObject({
        group: 'test.observatory.dev',
        version: 'v1',
        namespace: ns,
        plural: 'widgets',
        name: 'good',
        body: current,
      })
      .catch((e: unknown) => e);
    expect(JSON.stringify((immutable as ApiException<unknown>).body)).toContain('mode is immutable');
  });

  it('deleting an owner garbage-collects its children, Pods included', async () => {
    const { core } = clients(cluster);
    const owner = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'owner' } },
    });
    const ownerReferences = [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid ?? '' },
    ];
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'child', ownerReferences } },
    });
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'child-pod', ownerReferences },
        spec: {
          terminationGracePeriodSeconds: 2,
          containers: [{ name: 'main', image: 'busybox', command: ['sleep', '600'] }],
        },
      },
    });
    const running = await waitFor('child pod running', async () => {
      const p = await core.readNamespacedPod({ name: 'child-pod', namespace: ns });
      return p.status?.phase === 'Running' ? p : undefined;
    });
    const pids = containerPids(running);
    expect(pids.length).toBe(1);

    await core.deleteNamespacedConfigMap({ name: 'owner', namespace: ns });
    await waitFor('child configmap collected', () =>
      core.readNamespacedConfigMap({ name: 'child', namespace: ns }).then(
        () => false,
        (e: unknown) => isNotFound(e),
      ),
    );
    await waitFor('child pod collected', () =>
      core.readNamespacedPod({ name: 'child-pod', namespace: ns }).then(
        () => false,
        (e: unknown) => isNotFound(e),
      ),
    );
    expect(pids.filter(processAlive)).toEqual([]);
  });

  it('resolves env from values, Secrets, ConfigMaps and Pod fields', async () => {
    const { core } = clients(cluster);
    await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'creds' }, stringData: { password: 's3cret' } },
    });
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'settings' }, data: { level: 'debug', k: 'v' } },
    });
    const { pod, log } = await runToEnd({
      metadata: { name: 'env', labels: { tier: 'test' } },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'main',
            image: 'busybox',
            command: [
              'sh',
              '-c',
              'echo "A=$A B=$B IP=$IP NAME=$NAME NS=$NS TIER=$TIER EXP=$EXP CM=$CM_k KS=$KUBERNETES_SERVICE_HOST"',
            ],
            envFrom: [{ prefix: 'CM_', configMapRef: { name: 'settings' } }],
            env: [
              { name: 'A', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
              { name: 'B', valueFrom: { configMapKeyRef: { name: 'settings', key: 'level' } } },
              { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
              { name: 'NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              { name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
              { name: 'TIER', valueFrom: { fieldRef: { fieldPath: "metadata.labels['tier']" } } },
              { name: 'EXP', value: '$(NAME)-$(B)' },
            ],
          },
        ],
      },
    });
    expect(pod.status?.phase).toBe('Succeeded');
    expect(log.trim()).toBe(
      `A=s3cret B=debug IP=${pod.status?.podIP} NAME=env NS=${ns} TIER=test EXP=env-debug CM=v KS=${cluster.host}`,
    );
  });

  it('a Pod reaches the API server as its service account, and RBAC applies', async () => {
    const { core } = clients(cluster);
    const rbac = cluster.kubeconfig.makeApiClient(RbacAuthorizationV1Api);
    await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'reader' } } });
    // Lists ConfigMaps with the token of the Pod's kubeconfig; prints the HTTP status and body.
    const script = `
const fs = require('node:fs');
const https = require('node:https');
const kubeconfig = fs.readFileSync(process.env.KUBECONFIG, 'utf8');
const token = /token: (\\S+)/.exec(kubeconfig)[1];
const ca = fs.readFileSync(/certificate-authority: (\\S+)/.exec(kubeconfig)[1]);
https.get({ host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT,
  path: '/api/v1/namespaces/${ns}/configmaps', ca, headers: { authorization: 'Bearer ' + token } }, (res) => {
  let body = ''; res.on('data', (d) => { body += d; }); res.on('end', () => console.log(res.statusCode + ' ' + body));
});`;
    const pod = (name: string): V1Pod => ({
      metadata: { name },
      spec: {
        serviceAccountName: 'reader',
        restartPolicy: 'Never',
        containers: [{ name: 'main', image: 'node', command: ['node', '-e', script] }],
      },
    });
    const denied = await runToEnd(pod('before-rbac'));
    expect(denied.log).toMatch(/^403 /);
    expect(denied.log).toContain(`system:serviceaccount:${ns}:reader`);

    await rbac.createNamespacedRole({
      namespace: ns,
      body: {
        metadata: { name: 'read-configmaps' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name: 'reader-reads' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-configmaps' },
        subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: ns }],
      },
    });
    const allowed = await runToEnd(pod('after-rbac'));
    expect(allowed.log).toMatch(/^200 /);
    expect(allowed.log).toContain('kube-root-ca.crt');
  });

  it('an image the node agent does not know fails the Pod with a clear reason', async () => {
    const { core } = clients(cluster);
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'unknown-image' },
        spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] },
      },
    });
    const waiting = await waitFor('waiting reason reported', async () => {
      const p = await core.readNamespacedPod({ name: 'unknown-image', namespace: ns });
      return p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ErrImagePull' ? p : undefined;
    });
    expect(waiting.status?.phase).toBe('Pending');
    expect(waiting.status?.containerStatuses?.[0]?.state?.waiting?.message).toContain(
      'image nginx:1.27 is not known to the local node agent',
    );
  });
});
