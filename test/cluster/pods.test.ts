// What the operator relies on from Kubernetes, on the real node with the project's image
// (observatory:dev, built from ./Dockerfile): owners garbage-collect their children, a container's
// environment comes from Secrets, ConfigMaps and the Pod's own fields, a Pod reaches the API server
// as its service account under RBAC, and a Job running the observatory CLI ends Complete or Failed
// by the CLI's exit code. Judged through the API and containerd, not by the code under test.
import { ApiException, RbacAuthorizationV1Api, type V1Container, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalClusterClient } from '../../cluster/local-cluster.ts';
import { waitFor } from '../../cluster/wait.ts';
import { clients, createNamespace, deleteNamespaces, localCluster } from './testing.ts';

let cluster: LocalClusterClient;
const ns = 'pods';

/** A container of the project's image as the operator renders one: non-root, read-only root. */
function image(name: string, fields: Partial<V1Container>): V1Container {
  return {
    name,
    image: 'observatory:dev',
    imagePullPolicy: 'Never',
    securityContext: { runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
    ...fields,
  };
}

const isNotFound = (error: unknown) => error instanceof ApiException && error.code === 404;

async function finished(name: string): Promise<V1Pod> {
  const { core } = clients(cluster);
  return waitFor(
    `pod ${name} finished`,
    async () => {
      const p = await core.readNamespacedPod({ name, namespace: ns });
      return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
}

/** Runs a Pod to completion; returns it with its log (kubectl logs, through the kubelet). */
async function runToEnd(pod: V1Pod): Promise<{ pod: V1Pod; log: string }> {
  await clients(cluster).core.createNamespacedPod({ namespace: ns, body: pod });
  const name = pod.metadata?.name ?? '';
  const done = await finished(name);
  return { pod: done, log: await cluster.kubectl(['logs', '-n', ns, name]) };
}

beforeAll(async () => {
  cluster = localCluster();
  await createNamespace(cluster, ns);
});
afterAll(async () => {
  await deleteNamespaces(cluster, [ns]);
});

describe('Pods of the project image on the real node', () => {
  it('deleting an owner garbage-collects its children, and the Pod’s containers leave containerd', async () => {
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
          terminationGracePeriodSeconds: 1,
          containers: [image('main', { command: ['node', '-e', 'setInterval(() => {}, 1000)'] })],
        },
      },
    });
    const running = await waitFor(
      'child pod running',
      async () => {
        const p = await core.readNamespacedPod({ name: 'child-pod', namespace: ns });
        return p.status?.phase === 'Running' ? p : undefined;
      },
      { timeoutMs: 120_000 },
    );
    const id = running.status?.containerStatuses?.[0]?.containerID?.replace('containerd://', '') ?? '';
    expect((await cluster.ctr(['tasks', 'ls', '-q'])).split('\n')).toContain(id);

    await core.deleteNamespacedConfigMap({ name: 'owner', namespace: ns });
    const gone = (read: () => Promise<unknown>) => read().then(() => false, isNotFound);
    await waitFor('child configmap collected', () =>
      gone(() => core.readNamespacedConfigMap({ name: 'child', namespace: ns })),
    );
    await waitFor(
      'child pod collected',
      () => gone(() => core.readNamespacedPod({ name: 'child-pod', namespace: ns })),
      {
        timeoutMs: 60_000,
      },
    );
    await waitFor(
      'its container gone from containerd',
      async () => !(await cluster.ctr(['tasks', 'ls', '-q'])).split('\n').includes(id),
    );
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
          image('main', {
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
          }),
        ],
      },
    });
    expect(pod.status?.phase, log).toBe('Succeeded');
    const kubernetesService = await core.readNamespacedService({ name: 'kubernetes', namespace: 'default' });
    expect(log.trim()).toBe(
      `A=s3cret B=debug IP=${pod.status?.podIP} NAME=env NS=${ns} TIER=test EXP=env-debug CM=v KS=${kubernetesService.spec?.clusterIP}`,
    );
  });

  it('a Pod reaches the API server as its service account by the cluster DNS name, and RBAC applies', async () => {
    const { core } = clients(cluster);
    const rbac = cluster.kubeconfig.makeApiClient(RbacAuthorizationV1Api);
    await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'reader' } } });
    // The projected service-account token and CA, as every in-cluster client reads them.
    const script = `
const fs = require('node:fs');
const https = require('node:https');
const dir = '/var/run/secrets/kubernetes.io/serviceaccount';
https.get({ host: 'kubernetes.default.svc.cluster.local', port: 443, path: '/api/v1/namespaces/${ns}/configmaps',
  ca: fs.readFileSync(dir + '/ca.crt'), headers: { authorization: 'Bearer ' + fs.readFileSync(dir + '/token', 'utf8') } }, (res) => {
  let body = ''; res.on('data', (d) => { body += d; }); res.on('end', () => console.log(res.statusCode + ' ' + body));
}).on('error', (e) => { console.error(e.message); process.exit(1); });`;
    const pod = (name: string): V1Pod => ({
      metadata: { name },
      spec: {
        serviceAccountName: 'reader',
        restartPolicy: 'Never',
        containers: [image('main', { command: ['node', '-e', script] })],
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
});

describe('Jobs running the observatory CLI from the image', () => {
  const job = (name: string, args: string[]) => ({
    metadata: { name },
    spec: {
      backoffLimit: 0,
      template: { spec: { restartPolicy: 'Never', containers: [image('observatory', { args })] } },
    },
  });
  const jobCondition = (name: string, type: 'Complete' | 'Failed') =>
    waitFor(
      `Job ${name} ${type}`,
      async () => {
        const j = await clients(cluster).batch.readNamespacedJob({ name, namespace: ns });
        return j.status?.conditions?.find((c) => c.type === type && c.status === 'True') ? j : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
  const jobLog = async (name: string) => {
    const pods = await clients(cluster).core.listNamespacedPod({
      namespace: ns,
      labelSelector: `job-name=${name}`,
    });
    const [pod] = pods.items;
    return { pod, log: await cluster.kubectl(['logs', '-n', ns, pod?.metadata?.name ?? '']) };
  };

  it('a command that succeeds completes the Job, with the CLI’s output in the Pod’s log', async () => {
    await clients(cluster).batch.createNamespacedJob({ namespace: ns, body: job('help', ['help']) });
    const done = await jobCondition('help', 'Complete');
    expect(done.status?.succeeded).toBe(1);
    const { pod, log } = await jobLog('help');
    expect(pod?.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 0,
      reason: 'Completed',
    });
    expect(log).toMatch(/usage: observatory <command>/);
  });

  it('a usage error (exit 2) fails the Job with BackoffLimitExceeded and says why in the log', async () => {
    await clients(cluster).batch.createNamespacedJob({
      namespace: ns,
      body: job('unknown', ['no-such-command']),
    });
    const failed = await jobCondition('unknown', 'Failed');
    expect(failed.status?.conditions?.find((c) => c.type === 'Failed')?.reason).toBe('BackoffLimitExceeded');
    const { pod, log } = await jobLog('unknown');
    expect(pod?.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(2);
    expect(log).toMatch(/no-such-command/);
  });
});
