// Helpers for the files of the cluster suite: the one local cluster the global setup started, and
// a namespace per file that is gone again (with everything in it) when the file ends.
import { AppsV1Api, BatchV1Api, CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { attachLocalCluster, type LocalClusterClient } from '../../cluster/local-cluster.ts';
import { waitFor } from '../../cluster/wait.ts';

/** The cluster of test/cluster/global-setup.ts. */
export function localCluster(): LocalClusterClient {
  return attachLocalCluster(inject('localCluster'));
}

export function clients(cluster: { kubeconfig: KubeConfig }) {
  return {
    core: cluster.kubeconfig.makeApiClient(CoreV1Api),
    apps: cluster.kubeconfig.makeApiClient(AppsV1Api),
    batch: cluster.kubeconfig.makeApiClient(BatchV1Api),
  };
}

export const isReady = (pod: V1Pod) =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** Creates a namespace and waits for its default service account (Pods need it). */
export async function createNamespace(cluster: { kubeconfig: KubeConfig }, name: string): Promise<string> {
  const { core } = clients(cluster);
  await core.createNamespace({ body: { metadata: { name } } });
  await waitFor(`default service account in ${name}`, () =>
    core.readNamespacedServiceAccount({ name: 'default', namespace: name }),
  );
  return name;
}

/** Deletes namespaces and waits until they are gone, so the next file starts on a clean cluster. */
export async function deleteNamespaces(cluster: { kubeconfig: KubeConfig }, names: string[]): Promise<void> {
  const { core } = clients(cluster);
  await Promise.all(names.map((name) => core.deleteNamespace({ name }).catch(() => {})));
  for (const name of names) {
    await waitFor(
      `namespace ${name} gone`,
      () =>
        core.readNamespace({ name }).then(
          () => false,
          (error: { code?: number }) => error.code === 404,
        ),
      { timeoutMs: 180_000, intervalMs: 500 },
    );
  }
}
