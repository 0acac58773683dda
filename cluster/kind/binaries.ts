// The Kubernetes programs of a kind node and its control-plane images: one multi-call binary
// (cluster/kindnode: kubeadm, kubelet, kubectl, kube-apiserver, kube-controller-manager,
// kube-scheduler, etcd, kube-proxy) from the same k8s.io/kubernetes version and module pins as the
// local cluster, stamped with that version, built once from the Go module proxy and cached.
import { join } from 'node:path';
import { ensureBuilt } from '../cached-build.ts';
import { kubernetesVersion } from '../control-plane-binary.ts';
import { goSpec, versionFlags } from '../node-binaries.ts';
import { clusterSource } from '../paths.ts';
import type { StepReporter } from '../steps.ts';

/** The names the binary answers to when invoked through a symlink. */
export const kindnodePrograms = [
  'kubeadm',
  'kubelet',
  'kubectl',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'etcd',
  'kube-proxy',
] as const;

export async function ensureKindnode(steps: StepReporter): Promise<string> {
  const dir = await ensureBuilt(
    goSpec(
      `kindnode-${kubernetesVersion}`,
      `Kubernetes ${kubernetesVersion} for kind (one multi-call binary)`,
      {
        moduleDir: join(clusterSource, 'kindnode'),
        packages: ['.'],
        ldflags: versionFlags(kubernetesVersion),
      },
    ),
    steps,
  );
  return join(dir, 'kindnode');
}
