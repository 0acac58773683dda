// One image for every Kubernetes program kubeadm and its kube-proxy DaemonSet run in containers
// (kube-apiserver, kube-controller-manager, kube-scheduler, etcd, kube-proxy): Debian bookworm
// minbase with iptables and conntrack (kube-proxy programs the node's tables with them) and the
// kindnode multi-call binary, symlinked under each program's name in /usr/local/bin. It is tagged
// with every name `kubeadm config images list` gives for those programs, so the node's containerd
// holds the layers once and kubeadm's manifests find their images without a pull.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type BuildSpec, ensureBuilt, readRecord } from '../cached-build.ts';
import { kubernetesVersion } from '../control-plane-binary.ts';
import { buildah } from '../images/buildah.ts';
import type { StepReporter } from '../steps.ts';
import { kindnodePrograms } from './binaries.ts';
import { mmdebstrap, type RootfsRecipe, rootfsArgs } from './debian-rootfs.ts';

const run = promisify(execFile);
const archiveName = 'components.oci.tar';
const inImage = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'etcd', 'kube-proxy'];

const recipe: RootfsRecipe = {
  packages: ['iptables', 'conntrack', 'ca-certificates'],
  hooks: [...kindnodePrograms.map((name) => `ln -s kindnode "$1/usr/local/bin/${name}"`)],
};

/** The images kubeadm runs for these programs, as it names them for this Kubernetes version. */
async function kubeadmImageNames(kindnode: string): Promise<string[]> {
  const { stdout } = await run(kindnode, [
    'kubeadm',
    'config',
    'images',
    'list',
    '--kubernetes-version',
    kubernetesVersion,
  ]);
  const names = stdout.trim().split('\n');
  return names.filter((name) => inImage.some((program) => name.includes(`/${program}:`)));
}

export interface ComponentImage {
  archive: string;
  /** The name the archive carries, then every other name to tag it with. */
  names: string[];
}

export async function ensureComponentImage(kindnode: string, steps: StepReporter): Promise<ComponentImage> {
  const names = await kubeadmImageNames(kindnode);
  if (names.length !== inImage.length) throw new Error(`kubeadm config images list: got ${names.join(', ')}`);
  const binaryHash = (await readRecord(`kindnode-${kubernetesVersion}`))?.inputsHash ?? '';
  const spec: BuildSpec = {
    name: `kind-components-${kubernetesVersion}`,
    label: `control-plane and kube-proxy image ${kubernetesVersion}`,
    async inputs() {
      return [binaryHash, ...names, ...rootfsArgs(recipe, 'rootfs.tar', 'tar')];
    },
    async build(out, progress) {
      const work = await mkdtemp(join(tmpdir(), 'observatory-kind-components-'));
      try {
        progress(`mmdebstrap bookworm (minbase, ${recipe.packages.join(', ')})`);
        const rootfs = join(work, 'rootfs.tar');
        await mmdebstrap(recipe, rootfs, 'tar');
        progress(`committing ${names.join(', ')}`);
        const container = (await buildah(['from', 'scratch'])).trim();
        try {
          await buildah(['add', container, rootfs, '/']);
          await buildah(['copy', '--chmod', '0755', container, kindnode, '/usr/local/bin/kindnode']);
          await buildah([
            'config',
            '--env',
            'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
            '--os',
            'linux',
            '--arch',
            'amd64',
            container,
          ]);
          await buildah(['commit', '--quiet', container, names[0]!]);
        } finally {
          await buildah(['rm', container]).catch(() => {});
        }
        const archive = join(out, archiveName);
        await buildah(['push', '--quiet', names[0]!, `oci-archive:${archive}:${names[0]}`]);
        const digest = createHash('sha256')
          .update(await readFile(archive))
          .digest('hex');
        return { names, bytes: (await stat(archive)).size, sha256: digest };
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },
  };
  return { archive: join(await ensureBuilt(spec, steps), archiveName), names };
}
