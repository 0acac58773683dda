// Helpers for the files of the cluster suite: the one local cluster the global setup started, and
// a namespace per file that is gone again (with everything in it) when the file ends.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { AppsV1Api, BatchV1Api, CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { attachLocalCluster, type LocalClusterClient } from '../../cluster/local-cluster.ts';
import { repoRoot } from '../../cluster/paths.ts';
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

/** `kubectl observatory ARGS` as an admin runs it: kubectl finds the plugin of bin/ on PATH. */
export function kubectlObservatory(
  cluster: LocalClusterClient,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const PATH = [join(repoRoot, 'bin'), dirname(cluster.kubectlPath), process.env['PATH']].join(':');
  return new Promise((resolve) => {
    execFile(
      cluster.kubectlPath,
      ['observatory', ...args],
      { env: { ...process.env, PATH, KUBECONFIG: cluster.kubeconfigPath }, timeout: 120_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
