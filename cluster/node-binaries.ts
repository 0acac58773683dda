// The programs a node runs, each built once from the Go module proxy and cached by the hash of its
// module (go.mod, go.sum, sources) and flags:
// - kubelet and kube-proxy: one multi-call binary (cluster/nodecomponents) with the control
//   plane's k8s.io/kubernetes version and module pins, stamped with that version;
// - containerd 2.x with its runc shim and ctr (cluster/containerd: go.mod `tool` lines): the
//   kubelet's CRI client wants the RuntimeConfig call Debian's containerd 1.6 lacks, and 1.6 is
//   past its end of life;
// - CoreDNS with only the plugins the cluster DNS uses (cluster/coredns).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type BuildSpec, ensureBuilt } from './cached-build.ts';
import { kubernetesVersion } from './control-plane-binary.ts';
import { type GoBuild, goBuild, goInputs } from './go-build.ts';
import { clusterSource } from './paths.ts';
import type { StepReporter } from './steps.ts';

export const containerdVersion = 'v2.4.2';

export function versionFlags(version: string): string[] {
  const [major, minor] = version.slice(1).split('.');
  return ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) => [
    `-X ${pkg}.gitVersion=${version}`,
    `-X ${pkg}.gitMajor=${major}`,
    `-X ${pkg}.gitMinor=${minor}`,
    `-X ${pkg}.gitTreeState=clean`,
  ]);
}

export function goSpec(name: string, label: string, build: GoBuild): BuildSpec {
  return {
    name,
    label,
    inputs: () => goInputs(build),
    async build(out) {
      await goBuild(build, out);
      return {};
    },
  };
}

const nodeComponents: GoBuild = {
  moduleDir: join(clusterSource, 'nodecomponents'),
  packages: ['.'],
  ldflags: versionFlags(kubernetesVersion),
};

const containerd: GoBuild = {
  moduleDir: join(clusterSource, 'containerd'),
  packages: ['containerd', 'containerd-shim-runc-v2', 'ctr'].map(
    (c) => `github.com/containerd/containerd/v2/cmd/${c}`,
  ),
  ldflags: [`-X github.com/containerd/containerd/v2/version.Version=${containerdVersion}`],
  // Snapshotters that need cgo or devices the node never uses.
  tags: ['no_btrfs', 'no_devmapper', 'no_zfs'],
};

const coredns: GoBuild = { moduleDir: join(clusterSource, 'coredns'), packages: ['.'], ldflags: [] };

export interface NodeBinaries {
  kubelet: string;
  kubeProxy: string;
  containerd: string;
  containerdShimDir: string;
  ctr: string;
  coredns: string;
}

/** containerd, its runc shim and ctr, in one directory (also what a kind node runs). */
export function ensureContainerd(steps: StepReporter): Promise<string> {
  return ensureBuilt(
    goSpec(`containerd-${containerdVersion}`, `containerd ${containerdVersion}`, containerd),
    steps,
  );
}

/** CoreDNS with the cluster DNS's plugins only, in one directory. */
export function ensureCorednsBuilt(steps: StepReporter): Promise<string> {
  return ensureBuilt(goSpec('coredns', 'CoreDNS', coredns), steps);
}

export async function ensureNodeBinaries(steps: StepReporter): Promise<NodeBinaries> {
  const nodeDir = await ensureBuilt(
    goSpec(`kubelet-${kubernetesVersion}`, `kubelet and kube-proxy ${kubernetesVersion}`, nodeComponents),
    steps,
  );
  const containerdDir = await ensureContainerd(steps);
  const corednsDir = await ensureCorednsBuilt(steps);
  const binaries: NodeBinaries = {
    kubelet: join(nodeDir, 'nodecomponents'),
    kubeProxy: join(nodeDir, 'nodecomponents'),
    containerd: join(containerdDir, 'containerd'),
    containerdShimDir: containerdDir,
    ctr: join(containerdDir, 'ctr'),
    coredns: join(corednsDir, 'coredns'),
  };
  for (const [name, path] of Object.entries(binaries)) {
    if (!existsSync(path)) throw new Error(`${name}: ${path} missing after build`);
  }
  return binaries;
}
