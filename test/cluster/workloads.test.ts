// Deployments on the local cluster: real scheduler, ReplicaSet/Deployment controllers and Pods run
// as processes by the node agent, with real readiness probes.
import { type V1Deployment, type V1Pod, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../cluster/wait.ts';
import { type Cluster, startCluster } from './harness.ts';
import { clients, containerPids, createNamespace, httpGetText, isReady, processAlive } from './testing.ts';

// A small HTTP server bound to the Pod's own address; it answers with who it is.
const server = `
const http = require('node:http');
http.createServer((req, res) => {
  res.end(JSON.stringify({ pod: process.env.POD_NAME, ip: process.env.POD_IP, version: process.env.VERSION }));
}).listen(8080, process.env.POD_IP, () => console.log('listening on ' + process.env.POD_IP + ':8080'));
process.on('SIGTERM', () => { console.log('SIGTERM'); process.exit(0); });
`;

function deployment(name: string, version: string): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 5,
          containers: [
            {
              name: 'web',
              image: 'node:24',
              command: ['node', '-e', server],
              ports: [{ name: 'http', containerPort: 8080 }],
              env: [
                { name: 'VERSION', value: version },
                { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              ],
              readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 1 },
              livenessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 2 },
            },
          ],
        },
      },
    },
  };
}

describe('Deployments on the local cluster', () => {
  let cluster: Cluster;
  let ns: string;
  const name = 'web';

  beforeAll(async () => {
    // About the cluster itself: the project's CRDs (crds/) are left to the operator's suites.
    cluster = await startCluster({ crdDirs: [] });
    ns = await createNamespace(cluster, 'workloads');
    await waitFor('default service account in the namespace', () =>
      clients(cluster).core.readNamespacedServiceAccount({ name: 'default', namespace: ns }),
    );
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const pods = async (): Promise<V1Pod[]> =>
    (await clients(cluster).core.listNamespacedPod({ namespace: ns, labelSelector: `app=${name}` })).items;

  it('becomes Available with two Ready pods on distinct loopback addresses', async () => {
    const { apps } = clients(cluster);
    await apps.createNamespacedDeployment({ namespace: ns, body: deployment(name, '1') });
    await waitFor(
      'deployment Available with 2 available replicas',
      async () => {
        const d = await apps.readNamespacedDeployment({ name, namespace: ns });
        const available = d.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True');
        return available && d.status?.availableReplicas === 2 && d.status?.readyReplicas === 2;
      },
      { timeoutMs: 60_000 },
    );
    const ready = (await pods()).filter(isReady);
    expect(ready).toHaveLength(2);
    const ips = ready.map((p) => p.status?.podIP ?? '');
    expect(new Set(ips).size).toBe(2);
    for (const pod of ready) {
      const ip = pod.status?.podIP ?? '';
      expect(ip).toMatch(
        new RegExp(`^${cluster.host.replace(/\.0\.1$/, '').replaceAll('.', '\\.')}\\.\\d+\\.\\d+$`),
      );
      const answer = JSON.parse((await httpGetText(ip, 8080)).body) as Record<string, string>;
      expect(answer).toEqual({ pod: pod.metadata?.name, ip, version: '1' });
    }
    const log = await cluster.logs(ns, ready[0]?.metadata?.name ?? '', 'web');
    expect(log).toContain(`listening on ${ready[0]?.status?.podIP}:8080`);
  });

  it('rolls out an environment change with new pods Ready before old ones end', async () => {
    const { apps, core } = clients(cluster);
    const list = await core.listNamespacedPod({ namespace: ns, labelSelector: `app=${name}` });
    const before = list.items;
    const oldNames = new Set(before.map((p) => p.metadata?.name));
    const oldPids = before.flatMap(containerPids);
    expect(oldPids.length).toBe(2);

    // Every change to the Pods, in the API server's own order (one watch from the list's version).
    const events: Array<{ type: string; pod: V1Pod }> = [];
    const watch = await new Watch(cluster.kubeconfig).watch(
      `/api/v1/namespaces/${ns}/pods`,
      { labelSelector: `app=${name}`, resourceVersion: list.metadata?.resourceVersion },
      (type, pod: V1Pod) => events.push({ type, pod }),
      () => {},
    );
    try {
      const current = await apps.readNamespacedDeployment({ name, namespace: ns });
      const env = current.spec?.template.spec?.containers[0]?.env ?? [];
      for (const variable of env) if (variable.name === 'VERSION') variable.value = '2';
      await apps.replaceNamespacedDeployment({ name, namespace: ns, body: current });
      await waitFor(
        'rollout finished',
        async () => {
          const now = await pods();
          return now.length === 2 && now.every((p) => !oldNames.has(p.metadata?.name) && isReady(p));
        },
        { timeoutMs: 90_000 },
      );
    } finally {
      watch.abort();
    }

    // Replay the events: which came first, a new Pod Ready or an old Pod ending?
    const state = new Map(before.map((p) => [p.metadata?.name, p]));
    let firstNewReady = Number.POSITIVE_INFINITY;
    let firstOldEnding = Number.POSITIVE_INFINITY;
    let minAvailable = Number.POSITIVE_INFINITY;
    events.forEach(({ type, pod }, index) => {
      const podName = pod.metadata?.name;
      if (type === 'DELETED') state.delete(podName);
      else state.set(podName, pod);
      const all = [...state.values()];
      const available = all.filter((p) => isReady(p) && !p.metadata?.deletionTimestamp);
      minAvailable = Math.min(minAvailable, available.length);
      if (available.some((p) => !oldNames.has(p.metadata?.name)))
        firstNewReady = Math.min(firstNewReady, index);
      const oldEnding =
        (oldNames.has(podName) && (type === 'DELETED' || pod.metadata?.deletionTimestamp)) ?? false;
      if (oldEnding) firstOldEnding = Math.min(firstOldEnding, index);
    });
    expect(firstOldEnding).toBeLessThan(Number.POSITIVE_INFINITY);
    expect(firstNewReady).toBeLessThan(firstOldEnding);
    // maxUnavailable rounds down to 0 for two replicas: never fewer than two available Pods.
    expect(minAvailable).toBeGreaterThanOrEqual(2);
    for (const pod of await pods()) {
      const answer = JSON.parse((await httpGetText(pod.status?.podIP ?? '', 8080)).body) as Record<
        string,
        string
      >;
      expect(answer['version']).toBe('2');
    }
    await waitFor('old processes ended', () => oldPids.every((pid) => !processAlive(pid)), {
      timeoutMs: 15_000,
    });
    // The old servers got SIGTERM and shut down by themselves.
    expect(await cluster.logs(ns, [...oldNames][0] ?? '', 'web')).toContain('SIGTERM');
  });

  it('scaling to zero ends the processes and frees their addresses', async () => {
    const { apps } = clients(cluster);
    const before = await pods();
    const pids = before.flatMap(containerPids);
    const ips = before.map((p) => p.status?.podIP ?? '');
    expect(pids.length).toBe(2);
    const current = await apps.readNamespacedDeployment({ name, namespace: ns });
    if (current.spec) current.spec.replicas = 0;
    await apps.replaceNamespacedDeployment({ name, namespace: ns, body: current });
    await waitFor('no pods left', async () => (await pods()).length === 0, { timeoutMs: 30_000 });
    expect(pids.filter(processAlive)).toEqual([]);
    for (const ip of ips) await expect(httpGetText(ip, 8080)).rejects.toThrow();
  });
  it('restarts a container whose liveness probe fails', async () => {
    const { core } = clients(cluster);
    // Healthy for its first second of life, then answers 500: the kubelet-style liveness probe kills it.
    const flaky = `
const started = Date.now();
require('node:http').createServer((req, res) => {
  res.statusCode = Date.now() - started < 1000 ? 200 : 500;
  res.end();
}).listen(8080, process.env.POD_IP);`;
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'flaky' },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'main',
              image: 'node',
              command: ['node', '-e', flaky],
              env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
              livenessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1, failureThreshold: 2 },
            },
          ],
        },
      },
    });
    const restarted = await waitFor(
      'a liveness restart',
      async () => {
        const pod = await core.readNamespacedPod({ name: 'flaky', namespace: ns });
        return (pod.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 ? pod : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(restarted.status?.containerStatuses?.[0]?.lastState?.terminated).toBeDefined();
    await core.deleteNamespacedPod({ name: 'flaky', namespace: ns });
  });

  it('deleting a Pod sends SIGTERM, then SIGKILL once the grace period is over', async () => {
    const { core } = clients(cluster);
    const stubborn = `process.on('SIGTERM', () => console.log('got SIGTERM, ignoring it')); setInterval(() => {}, 1000); console.log('up');`;
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'stubborn' },
        spec: { containers: [{ name: 'main', image: 'node', command: ['node', '-e', stubborn] }] },
      },
    });
    const running = await waitFor('pod running', async () => {
      const pod = await core.readNamespacedPod({ name: 'stubborn', namespace: ns });
      return pod.status?.phase === 'Running' ? pod : undefined;
    });
    await waitFor('process up', async () => (await cluster.logs(ns, 'stubborn', 'main')).includes('up'));
    const [pid] = containerPids(running);
    const started = Date.now();
    await core.deleteNamespacedPod({ name: 'stubborn', namespace: ns, body: { gracePeriodSeconds: 2 } });
    await waitFor(
      'pod removed',
      () =>
        core.readNamespacedPod({ name: 'stubborn', namespace: ns }).then(
          () => false,
          () => true,
        ),
      { timeoutMs: 15_000 },
    );
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1900); // it ignored SIGTERM, so it lived out the grace period
    expect(processAlive(pid ?? 0)).toBe(false);
    expect(await cluster.logs(ns, 'stubborn', 'main')).toContain('got SIGTERM, ignoring it');
  });
});
