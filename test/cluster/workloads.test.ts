// Deployments on the local cluster: real scheduler, ReplicaSet/Deployment controllers and Pods run
// as processes by the node agent, with real readiness probes.
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster } from './harness.ts';
import { clients, containerPids, createNamespace, httpGetText, isReady, processAlive } from './testing.ts';
import { sleep, waitFor } from './wait.ts';

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
    cluster = await startCluster();
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
    const { apps } = clients(cluster);
    const before = await pods();
    const oldNames = new Set(before.map((p) => p.metadata?.name));
    const oldPids = before.flatMap(containerPids);
    expect(oldPids.length).toBe(2);

    const current = await apps.readNamespacedDeployment({ name, namespace: ns });
    const env = current.spec?.template.spec?.containers[0]?.env ?? [];
    for (const variable of env) if (variable.name === 'VERSION') variable.value = '2';
    await apps.replaceNamespacedDeployment({ name, namespace: ns, body: current });

    // Sample the rollout: when did the first new Pod become Ready, when did the first old one start ending?
    let firstNewReady = Number.POSITIVE_INFINITY;
    let firstOldEnding = Number.POSITIVE_INFINITY;
    let minAvailable = Number.POSITIVE_INFINITY;
    const deadline = Date.now() + 90_000;
    for (;;) {
      const now = Date.now();
      const list = await pods();
      const available = list.filter((p) => isReady(p) && !p.metadata?.deletionTimestamp);
      minAvailable = Math.min(minAvailable, available.length);
      if (available.some((p) => !oldNames.has(p.metadata?.name)))
        firstNewReady = Math.min(firstNewReady, now);
      const oldLeft = list.filter((p) => oldNames.has(p.metadata?.name));
      if (oldLeft.length < 2 || oldLeft.some((p) => p.metadata?.deletionTimestamp)) {
        firstOldEnding = Math.min(firstOldEnding, now);
      }
      const done = oldLeft.length === 0 && available.length === 2 && list.length === 2;
      if (done) break;
      if (now > deadline) throw new Error('rollout did not finish within 90s');
      await sleep(100);
    }
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
});
