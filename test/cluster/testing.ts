// Helpers for tests that drive the local cluster.
import { request } from 'node:http';
import { AppsV1Api, BatchV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { exchange } from '../../cluster/exchange.ts';
import { waitFor } from '../../cluster/wait.ts';
import type { Cluster } from './harness.ts';

export function clients(cluster: Cluster) {
  return {
    core: cluster.kubeconfig.makeApiClient(CoreV1Api),
    apps: cluster.kubeconfig.makeApiClient(AppsV1Api),
    batch: cluster.kubeconfig.makeApiClient(BatchV1Api),
  };
}

export const isReady = (pod: V1Pod) =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** Local pids of a Pod's containers, from the containerIDs the node agent reports. */
export function containerPids(pod: V1Pod): number[] {
  return (pod.status?.containerStatuses ?? [])
    .map((s) => /^local:\/\/(\d+)$/.exec(s.containerID ?? '')?.[1])
    .filter((pid): pid is string => pid !== undefined)
    .map(Number);
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function httpGetText(
  host: string,
  port: number,
  path = '/',
): Promise<{ status: number; body: string }> {
  const res = await exchange(request({ host, port, path, timeout: 2000 }), undefined, 10_000);
  if (res.error !== undefined) throw new Error(`GET http://${host}:${port}${path}: ${res.error}`);
  return { status: res.status, body: res.body };
}

/** A unique namespace per test so tests in one cluster do not see each other's objects. */
export async function createNamespace(cluster: Cluster, name: string): Promise<string> {
  await clients(cluster).core.createNamespace({ body: { metadata: { name } } });
  return name;
}

/** A long-sleeping busybox Pod in `default`, resolved once it runs: a process stop() must end. */
export async function startSleeperPod(cluster: Cluster): Promise<void> {
  const { core } = clients(cluster);
  await waitFor('default service account', () =>
    core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' }),
  );
  await core.createNamespacedPod({
    namespace: 'default',
    body: {
      metadata: { name: 'sleeper' },
      spec: { containers: [{ name: 'main', image: 'busybox', command: ['sleep', '600'] }] },
    },
  });
  await waitFor('pod running', async () => {
    const pod = await core.readNamespacedPod({ name: 'sleeper', namespace: 'default' });
    return pod.status?.phase === 'Running';
  });
}
