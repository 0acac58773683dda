// The kind node image, in kind's own node-image layout, built here with mmdebstrap and buildah:
// - Debian bookworm with systemd and the node's userland (the packages kind's base image installs
//   that a node here uses), runc and the CNI plugins from Debian's packages;
// - kind's own base-image files (entrypoint, systemd units for containerd and the kubelet, /kind/)
//   from the kind module at the version the cluster is created with, so kind finds the layout it
//   provisions;
// - containerd 2 built here, and kubeadm, kubelet and kubectl (the kindnode multi-call binary);
// - a CNI bridge for the node's Pods (one node: host-local addresses, no masquerading, nothing on a
//   Pod network leaves the node) in place of kindnetd, and a StorageClass with no provisioner in
//   place of local-path-provisioner, so no image beyond those below is needed;
// - the images kubeadm runs (control plane, etcd, kube-proxy), CoreDNS and pause imported into the
//   image's containerd store, as `kind build node-image` preloads them: the node never pulls.
// Written as a docker-archive for `docker load`; cached by the hash of every input.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type BuildSpec, ensureBuilt, readRecord } from '../cached-build.ts';
import { kubernetesVersion } from '../control-plane-binary.ts';
import { kind } from '../go-tools.ts';
import { buildah } from '../images/buildah.ts';
import { nodeNetwork } from '../node/addresses.ts';
import { containerdVersion } from '../node-binaries.ts';
import type { Log, StepReporter } from '../steps.ts';
import type { ComponentImage } from './component-image.ts';
import { mmdebstrap, type RootfsRecipe, rootfsArgs } from './debian-rootfs.ts';
import { preloadImages } from './preload.ts';

const run = promisify(execFile);
export const nodeImageName = `localhost/observatory/kind-node:${kubernetesVersion}`;
const archiveName = 'node.docker.tar';

interface NodeImageInputs {
  kindnode: string;
  containerdDir: string;
  kindSource: string;
  components: ComponentImage;
  pause: { name: string; archive: string };
  coredns: { name: string; archive: string };
}

const packages = [
  'systemd',
  'conntrack',
  'iptables',
  'nftables',
  'iproute2',
  'ethtool',
  'util-linux',
  'mount',
  'kmod',
  'libseccomp2',
  'pigz',
  'bash',
  'ca-certificates',
  'procps',
  // kind's createContainer hook (mount-product-files.sh) reads the container's state with jq.
  'jq',
  'runc',
  'containernetworking-plugins',
];

/** The CNI configuration of the node's Pods: one bridge, addresses from the node's Pod range. */
function cniConfig(): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'kind-pods',
      plugins: [
        {
          type: 'bridge',
          bridge: 'kind-pods0',
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: nodeNetwork.podCIDR, gateway: nodeNetwork.podGateway }]],
            routes: [{ dst: '0.0.0.0/0' }],
          },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

// On a cgroup v1 machine kind waits only for its entrypoint before running kubeadm, which may then
// find systemd still booting: its `systemctl start kubelet` fails and the kubelet unit has already
// been skipped for want of its configuration. This path unit starts the kubelet once kubeadm has
// written that configuration, whenever systemd gets there.
const kubeletPathUnit = `[Unit]
Description=Start the kubelet once kubeadm has written its configuration

[Path]
PathExists=/var/lib/kubelet/config.yaml
Unit=kubelet.service

[Install]
WantedBy=multi-user.target
`;

const storageManifest = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
`;

/** Steps mirroring kind's base-image Dockerfile: its files with its modes, the systemd clean-up,
 * the units it enables; then the binaries and configuration built here. */
function recipe(i: {
  kindFiles: string;
  kindnode: string;
  containerdDir: string;
  extras: string;
}): RootfsRecipe {
  const f = i.kindFiles;
  return {
    packages,
    hooks: [
      `install -m 0755 ${f}/usr/local/bin/* "$1/usr/local/bin/"`,
      `mkdir -p "$1/kind/bin" && cp -r ${f}/kind/. "$1/kind/" && chmod -R u+w,a+rX "$1/kind" && chmod 0755 "$1"/kind/bin/*`,
      `mkdir -p "$1/etc/containerd" "$1/etc/systemd/system/kubelet.service.d" "$1/etc/default" "$1/etc/sysctl.d"`,
      `install -m 0644 ${f}/etc/crictl.yaml "$1/etc/"`,
      `install -m 0644 ${f}/etc/containerd/* "$1/etc/containerd/"`,
      `install -m 0644 ${f}/etc/default/* "$1/etc/default/"`,
      `install -m 0644 ${f}/etc/sysctl.d/* "$1/etc/sysctl.d/"`,
      `find ${f}/etc/systemd/system -maxdepth 1 -type f -exec install -m 0644 {} "$1/etc/systemd/system/" \\;`,
      `install -m 0644 ${f}/etc/systemd/system/kubelet.service.d/* "$1/etc/systemd/system/kubelet.service.d/"`,
      'find "$1/lib/systemd/system/sysinit.target.wants/" -name systemd-tmpfiles-setup.service -delete',
      'rm -f "$1"/lib/systemd/system/multi-user.target.wants/* "$1"/etc/systemd/system/*.wants/* "$1"/lib/systemd/system/local-fs.target.wants/* "$1"/lib/systemd/system/sockets.target.wants/*udev* "$1"/lib/systemd/system/sockets.target.wants/*initctl* "$1"/lib/systemd/system/basic.target.wants/*',
      'echo ReadKMsg=no >> "$1/etc/systemd/journald.conf"',
      'ln -sf /usr/lib/systemd/systemd "$1/sbin/init"',
      'systemctl --root "$1" enable kubelet.service containerd.service undo-mount-hacks.service',
      'systemctl --root "$1" mask systemd-binfmt.service',
      'mkdir -p "$1/etc/kubernetes/manifests"',
      `install -m 0755 ${i.containerdDir}/containerd ${i.containerdDir}/containerd-shim-runc-v2 ${i.containerdDir}/ctr "$1/usr/local/bin/"`,
      `install -m 0755 ${i.kindnode} "$1/usr/bin/kindnode"`,
      'for p in kubeadm kubelet kubectl; do ln -s kindnode "$1/usr/bin/$p"; done',
      // Debian's CNI plugins live in /usr/lib/cni; containerd looks in /opt/cni/bin.
      'mkdir -p "$1/opt/cni" "$1/etc/cni/net.d" && ln -s /usr/lib/cni "$1/opt/cni/bin"',
      `cp -r ${i.extras}/. "$1/"`,
      'systemctl --root "$1" enable kubelet.path',
    ],
  };
}

/** Files written into the root filesystem as they are (the extras directory). */
async function writeExtras(dir: string, pauseName: string, kindFiles: string, ctr: string): Promise<void> {
  await mkdir(join(dir, 'etc', 'cni', 'net.d'), { recursive: true });
  await mkdir(join(dir, 'etc', 'containerd'), { recursive: true });
  await mkdir(join(dir, 'kind', 'manifests'), { recursive: true });
  await writeFile(join(dir, 'etc', 'cni', 'net.d', '10-kind-pods.conflist'), `${cniConfig()}\n`);
  await writeFile(join(dir, 'kind', 'version'), kubernetesVersion);
  await mkdir(join(dir, 'etc', 'systemd', 'system'), { recursive: true });
  await writeFile(join(dir, 'etc', 'systemd', 'system', 'kubelet.path'), kubeletPathUnit);
  await writeFile(join(dir, 'kind', 'manifests', 'default-storage.yaml'), storageManifest);
  // kind's containerd configuration, with the sandbox image this node holds.
  const config = await readFile(join(kindFiles, 'etc', 'containerd', 'config.toml'), 'utf8');
  const sandbox = /sandbox_image = "([^"]+)"/.exec(config)?.[1];
  if (!sandbox) throw new Error('kind containerd config.toml: no sandbox_image');
  // Containers may not lower their oom_score_adj below containerd's: raising a process's OOM
  // priority takes CAP_SYS_RESOURCE, which these machines do not grant (kind sets this for rootless
  // nodes, for the same reason). Without it every Pod sandbox fails to start.
  const restricted = config.replace('restrict_oom_score_adj = false', 'restrict_oom_score_adj = true');
  if (restricted === config)
    throw new Error('kind containerd config.toml: no restrict_oom_score_adj = false');
  await writeFile(join(dir, 'etc', 'containerd', 'config.toml'), restricted.replace(sandbox, pauseName));
  // The base runtime spec kind's image derives from `ctr oci spec`: a createContainer hook that
  // mounts the node's product files, and no rlimits.
  const { stdout } = await run(ctr, ['oci', 'spec']);
  const spec = JSON.parse(stdout) as { hooks?: { createContainer?: { path: string }[] }; process: object };
  spec.hooks = {
    ...spec.hooks,
    createContainer: [...(spec.hooks?.createContainer ?? []), { path: '/kind/bin/mount-product-files.sh' }],
  };
  delete (spec.process as { rlimits?: unknown }).rlimits;
  await writeFile(join(dir, 'etc', 'containerd', 'cri-base.json'), `${JSON.stringify(spec, null, 2)}\n`);
}

async function buildNodeImage(
  i: NodeImageInputs,
  out: string,
  progress: Log,
): Promise<Record<string, unknown>> {
  const work = await mkdtemp(join(tmpdir(), 'observatory-kind-node-'));
  try {
    const kindFiles = join(i.kindSource, 'images', 'base', 'files');
    const extras = join(work, 'extras');
    await writeExtras(extras, i.pause.name, kindFiles, join(i.containerdDir, 'ctr'));
    const rootfs = join(work, 'rootfs');
    progress(`mmdebstrap bookworm (minbase, systemd and ${packages.length - 1} more packages)`);
    await mmdebstrap(
      recipe({ kindFiles, kindnode: i.kindnode, containerdDir: i.containerdDir, extras }),
      rootfs,
      'directory',
    );
    progress('importing the images into the node image containerd store');
    const imported = await preloadImages({
      containerdDir: i.containerdDir,
      root: join(rootfs, 'var', 'lib', 'containerd'),
      work: join(work, 'preload'),
      archives: [i.components.archive, i.pause.archive, i.coredns.archive],
      tags: i.components.names.slice(1).map((name) => [i.components.names[0]!, name] as const),
    });
    progress(`${imported.length} images: ${imported.join(', ')}`);
    const tarball = join(work, 'rootfs.tar');
    await run(
      'nice',
      ['-n', '19', 'ionice', '-c3', 'tar', '--numeric-owner', '--xattrs', '-C', rootfs, '-cf', tarball, '.'],
      {
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    progress(
      `root filesystem ${((await stat(tarball)).size / 1e6).toFixed(0)} MB; committing ${nodeImageName}`,
    );
    const container = (await buildah(['from', 'scratch'])).trim();
    try {
      await buildah(['add', container, tarball, '/']);
      await buildah([
        'config',
        '--env',
        'container=docker',
        '--stop-signal',
        'SIGRTMIN+3',
        '--entrypoint',
        JSON.stringify(['/usr/local/bin/entrypoint', '/sbin/init']),
        '--cmd',
        '[]',
        '--os',
        'linux',
        '--arch',
        'amd64',
        container,
      ]);
      await buildah(['commit', '--quiet', container, nodeImageName]);
    } finally {
      await buildah(['rm', container]).catch(() => {});
    }
    const archive = join(out, archiveName);
    await buildah(['push', '--quiet', nodeImageName, `docker-archive:${archive}:${nodeImageName}`]);
    await buildah(['rmi', nodeImageName]).catch(() => {});
    return { image: nodeImageName, bytes: (await stat(archive)).size, images: imported };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The node image's docker-archive, built when missing or stale. */
export async function ensureNodeImage(i: NodeImageInputs, steps: StepReporter): Promise<string> {
  const spec: BuildSpec = {
    name: `kind-node-${kubernetesVersion}`,
    label: `kind node image ${kubernetesVersion}`,
    async inputs() {
      const records = await Promise.all(
        [
          `kindnode-${kubernetesVersion}`,
          `containerd-${containerdVersion}`,
          `kind-components-${kubernetesVersion}`,
          'image-pause',
          'image-coredns',
        ].map(async (name) => (await readRecord(name))?.inputsHash ?? name),
      );
      const placeholders = {
        kindFiles: 'KIND',
        kindnode: 'KINDNODE',
        containerdDir: 'CONTAINERD',
        extras: 'EXTRAS',
      };
      return [
        kind.version,
        ...records,
        ...i.components.names,
        i.pause.name,
        i.coredns.name,
        cniConfig(),
        storageManifest,
        kubeletPathUnit,
        ...rootfsArgs(recipe(placeholders), 'rootfs', 'directory'),
      ];
    },
    build: (out, progress) => buildNodeImage(i, out, progress),
  };
  return join(await ensureBuilt(spec, steps), archiveName);
}
