// The local cluster: a Kubernetes control plane and one real node on this machine, without
// Docker. The node is what kind's node container holds (containerd, runc, the kubelet, kube-proxy
// in iptables mode, CNI bridge networking, CoreDNS as the kube-dns Service), run directly on the
// machine as root. Every program and image is built here from Go modules, Debian packages and
// this repository (see node-binaries.ts and images/), cached, and shown as a step when built.
//
// A node changes the machine (bridges, iptables, sysctls, cgroups, fixed ports 10248-10256), so
// there is one per machine at a time (a lock) and stop() undoes all of it.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { bootApiServer, startControllerManager, startScheduler, watch } from './control-plane.ts';
import {
  buildRecord,
  controlPlaneFresh,
  ensureControlPlane,
  kubernetesVersion,
} from './control-plane-binary.ts';
import { applyCrdDirs } from './crds.ts';
import { ensureHostPackages } from './host-packages.ts';
import { appImageName, ensureAppImage } from './images/app-image.ts';
import { ensureCorednsImage } from './images/coredns-image.ts';
import { ensurePauseImage } from './images/pause-image.ts';
import { type KubectlRunner, kubectlRunner } from './kubectl.ts';
import { takeMachineLock } from './machine-lock.ts';
import { nodeNetwork } from './node/addresses.ts';
import { cniConfig, kubeletConfig, kubeProxyConfig, type NodeLayout } from './node/configs.ts';
import { type Containerd, importImage, startContainerd } from './node/containerd.ts';
import { dnsManifests } from './node/dns.ts';
import { sh, shQuiet } from './node/host.ts';
import {
  networkSafety,
  restoreSysctls,
  type SafetyCheck,
  setUpHostNetwork,
  snapshotSysctls,
  tearDownHostNetwork,
} from './node/host-network.ts';
import { removeKubeletChains, removeKubepodsCgroups, unmountUnder } from './node/teardown.ts';
import { ensureNodeBinaries } from './node-binaries.ts';
import { cacheRoot } from './paths.ts';
import { type Supervised, startProcess } from './processes.ts';
import { type StepReporter, stepReporter } from './steps.ts';
import { sleep, waitFor } from './wait.ts';

export interface LocalClusterOptions {
  nodeName?: string;
  /** Directories of CRDs to apply at start; none by default: the chart installs the project's own
   * (helm refuses to adopt a CRD it did not create). */
  crdDirs?: string[];
  verbosity?: number;
  startTimeoutMs?: number;
  log?: (line: string) => void;
}

/** What a process needs to use a running local cluster (plain data: vitest hands it to test files). */
export interface LocalClusterInfo {
  kubeconfigPath: string;
  /** kubectl of the control plane's release. */
  kubectlPath: string;
  /** ctr of the node's containerd, and that containerd's socket. */
  ctrPath: string;
  containerdSocket: string;
  server: string;
  nodeName: string;
  nodeIP: string;
  dataDir: string;
  version: string;
  /** The network checks, read from the kernel after setup and before the kubelet started. */
  safety: SafetyCheck[];
  /** Images imported into containerd (the app image is observatory:dev). */
  images: { app: string; pause: string; coredns: string };
}

/** A running local cluster as its users see it: kubeconfig, kubectl and ctr. */
export interface LocalClusterClient extends LocalClusterInfo {
  kubeconfig: KubeConfig;
  kubectl: KubectlRunner;
  ctr(args: string[]): Promise<string>;
}

export interface LocalCluster extends LocalClusterClient {
  /** The plain data another process needs to attach to this cluster. */
  info: LocalClusterInfo;
  stop(): Promise<void>;
}

/** Attaches to a cluster another process started (the vitest global setup). */
export function attachLocalCluster(info: LocalClusterInfo): LocalClusterClient {
  const kubeconfig = new KubeConfig();
  kubeconfig.loadFromFile(info.kubeconfigPath);
  return {
    ...info,
    kubeconfig,
    kubectl: kubectlRunner(info.kubectlPath, info.kubeconfigPath),
    ctr: (args) => sh(info.ctrPath, ['--address', info.containerdSocket, '--namespace', 'k8s.io', ...args]),
  };
}

/** Everything the cluster runs, built when missing; returns what startLocalCluster needs. */
export async function buildAll(steps: StepReporter) {
  await ensureHostPackages(steps);
  const label = `control plane ${kubernetesVersion}`;
  if (await controlPlaneFresh()) steps.cached(label, `cold build ${(await buildRecord())?.seconds}s`);
  const controlPlane = (await controlPlaneFresh())
    ? await ensureControlPlane()
    : await steps.run(label, (progress) => ensureControlPlane(progress));
  const binaries = await ensureNodeBinaries(steps);
  const pause = await ensurePauseImage(steps);
  const coredns = await ensureCorednsImage(binaries.coredns, steps);
  const app = await ensureAppImage(steps);
  return { controlPlane, binaries, pause, coredns, app };
}

const machineLock = '/run/observatory-local-node.pid';
/** How long a start waits for another process's node to stop (OBSERVATORY_NODE_WAIT_SECONDS). */
function nodeWaitMs(env: NodeJS.ProcessEnv): number {
  const raw = env['OBSERVATORY_NODE_WAIT_SECONDS'];
  if (raw === undefined || raw === '') return 30 * 60_000;
  const seconds = Number(raw);
  if (!Number.isInteger(seconds) || seconds < 0)
    throw new Error(`OBSERVATORY_NODE_WAIT_SECONDS=${raw} is not a whole number of seconds`);
  return seconds * 1000;
}

export async function startLocalCluster(options: LocalClusterOptions = {}): Promise<LocalCluster> {
  const log = options.log ?? (() => {});
  const steps = stepReporter(log);
  const built = await buildAll(steps);
  await takeMachineLock(machineLock, { waitMs: nodeWaitMs(process.env), log });
  const network = nodeNetwork;
  const nodeName = options.nodeName ?? 'observatory-node';
  const dataDir = await mkdtemp(join(tmpdir(), 'observatory-node-'));
  const timeoutMs = options.startTimeoutMs ?? 180_000;
  const sysctls = await snapshotSysctls();
  const netnsBefore = new Set(await readdir('/run/netns').catch(() => [] as string[]));
  const kubeletDirExisted = existsSync('/var/lib/kubelet');
  const containerdRunExisted = existsSync('/run/containerd');
  const netnsDirExisted = existsSync('/run/netns');
  const controlPlane: Supervised[] = [];
  const nodeProcesses: Supervised[] = [];
  let containerd: Containerd | undefined;
  let stopped: Promise<void> | undefined;
  const kubectlBinary = join(built.controlPlane, '..', 'kubectl');
  const kubeconfigPath = join(dataDir, 'kubeconfig');
  const kubectl = kubectlRunner(kubectlBinary, kubeconfigPath);

  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      const errors: string[] = [];
      const attempt = async (what: string, fn: () => Promise<unknown>) => {
        await fn().catch((error: Error) => errors.push(`${what}: ${error.message}`));
      };
      // Nothing may recreate Pods while they go.
      await Promise.all(controlPlane.slice(2).map((p) => p.stop(2000)));
      if (nodeProcesses.length && containerd) {
        await attempt('delete Pods', () =>
          kubectl([
            'delete',
            'pods',
            '--all',
            '--all-namespaces',
            '--force',
            '--grace-period=0',
            '--wait=false',
          ]),
        );
        const ctr = containerd.ctr;
        await attempt('Pods gone from containerd', () =>
          // Running tasks (containers and sandboxes); the kubelet tore down each sandbox's network.
          waitFor('no container running', async () => (await ctr(['tasks', 'ls', '-q'])).trim() === '', {
            timeoutMs: 60_000,
            intervalMs: 500,
          }),
        );
      }
      for (const p of [...nodeProcesses].reverse()) await p.stop(5000);
      if (existsSync(join(dataDir, 'kube-proxy.yaml'))) {
        await attempt('kube-proxy --cleanup', () =>
          sh(built.binaries.kubeProxy, ['kube-proxy', '--cleanup']),
        );
      }
      await containerd?.process.stop(5000);
      await attempt('leftover shims', () => killShims(dataDir));
      await Promise.all(controlPlane.map((p) => p.stop(2000)));
      await attempt('mounts', () => unmountUnder(dataDir));
      await attempt('network namespaces', async () => {
        for (const name of await readdir('/run/netns').catch(() => [] as string[])) {
          if (netnsBefore.has(name)) continue;
          await shQuiet('umount', ['-l', join('/run/netns', name)]);
          await rm(join('/run/netns', name), { force: true });
        }
      });
      await attempt('host network', tearDownHostNetwork);
      await attempt('kubelet chains', removeKubeletChains);
      await attempt('cgroups', removeKubepodsCgroups);
      await attempt('sysctls', () => restoreSysctls(sysctls));
      // Fixed paths the kubelet (device plugins) and the shims (sockets) use whatever they are told.
      if (!kubeletDirExisted) await rm('/var/lib/kubelet', { recursive: true, force: true });
      if (!containerdRunExisted) await rm('/run/containerd', { recursive: true, force: true });
      if (!netnsDirExisted)
        await attempt('/run/netns', () =>
          unmountUnder('/run/netns').then(() => rm('/run/netns', { recursive: true })),
        );
      for (const dir of ['/var/log/pods', '/var/log/containers'])
        await rm(dir, { recursive: true, force: true });
      await rm(dataDir, { recursive: true, force: true });
      await rm(machineLock, { force: true });
      if (errors.length) throw new Error(`local cluster teardown: ${errors.join('; ')}`);
    })();
    return stopped;
  };

  try {
    await steps.run('host network (guard bridge, Pod guard)', setUpHostNetwork);
    const booted = await steps.run('control plane start', () =>
      bootApiServer({
        binary: built.controlPlane,
        dataDir,
        host: network.nodeIP,
        nodeName,
        verbosity: options.verbosity ?? 1,
        timeoutMs,
        kubelet: true,
        processes: controlPlane,
      }),
    );
    const { layout, server } = booted;
    const [nodeKubeconfig, kubeProxyKubeconfig] = await Promise.all([
      booted.kubeconfigFor('kubelet', layout.pki.node),
      booted.kubeconfigFor('kube-proxy', layout.pki.kubeProxy),
    ]);
    const crashedLater = Promise.race([
      booted.crashed,
      watch(controlPlane, startControllerManager(layout)),
      watch(controlPlane, startScheduler(layout)),
    ]);
    crashedLater.catch(() => {});
    const kubeconfig = new KubeConfig();
    kubeconfig.loadFromFile(kubeconfigPath);
    const core = kubeconfig.makeApiClient(CoreV1Api);

    // The DNS Service exists before any Pod: no Pod ever sends a query nobody answers.
    await Promise.race([
      crashedLater,
      waitFor(
        'kube-dns applied',
        () => kubectl(['apply', '-f', '-'], dnsManifests(network, built.coredns.name)),
        {
          timeoutMs,
          intervalMs: 500,
        },
      ),
    ]);

    const nodeLayout: NodeLayout = {
      nodeName,
      network,
      dataDir,
      containerdRoot: join(cacheRoot, 'node-containerd'),
      containerdSocket: join(dataDir, 'containerd.sock'),
      registryConfigDir: join(dataDir, 'containerd', 'registries'),
      cniConfDir: join(dataDir, 'cni'),
      cniBinDir: '/usr/lib/cni',
      runc: '/usr/sbin/runc',
      sandboxImage: built.pause.name,
      caCert: layout.pki.caCert,
      kubeProxyKubeconfig,
      resolvConf: join(dataDir, 'resolv.conf'),
    };
    await mkdir(nodeLayout.cniConfDir, { recursive: true });
    await writeFile(join(nodeLayout.cniConfDir, '10-observatory.conflist'), cniConfig(nodeLayout));
    await writeFile(nodeLayout.resolvConf, '# no nameserver: Pods with dnsPolicy Default have no upstream\n');
    await writeFile(join(dataDir, 'kubelet.yaml'), kubeletConfig(nodeLayout));
    await writeFile(join(dataDir, 'kube-proxy.yaml'), kubeProxyConfig(nodeLayout));

    containerd = await steps.run('containerd start and image import', async (progress) => {
      const started = await startContainerd(nodeLayout, {
        containerd: built.binaries.containerd,
        shimDir: built.binaries.containerdShimDir,
        ctr: built.binaries.ctr,
      });
      for (const archive of [built.pause.archive, built.coredns.archive, built.app]) {
        progress(
          (await importImage(started, nodeLayout.containerdRoot, archive)).trim().split('\n')[0] ?? '',
        );
      }
      return started;
    });

    const safety = await networkSafety();
    const unsafe = safety.filter((c) => !c.ok);
    if (unsafe.length)
      throw new Error(`network safety: ${unsafe.map((c) => `${c.check} (${c.detail})`).join('; ')}`);

    const nodeEnv = {
      PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      HOME: '/root',
      NODE_PARENT_PID: String(process.pid),
    };
    const startNodeProcess = (name: string, args: string[]) =>
      watch(
        nodeProcesses,
        startProcess({
          name,
          file: built.binaries.kubelet,
          args: [name, ...args],
          env: nodeEnv,
          cwd: dataDir,
          logPath: join(dataDir, 'logs', `${name}.log`),
        }),
      );
    const nodeCrashed = Promise.race([
      crashedLater,
      startNodeProcess('kubelet', [
        `--config=${join(dataDir, 'kubelet.yaml')}`,
        `--kubeconfig=${nodeKubeconfig}`,
        `--root-dir=${join(dataDir, 'kubelet')}`,
        `--node-ip=${network.nodeIP}`,
        `--hostname-override=${nodeName}`,
        `--v=${options.verbosity ?? 1}`,
      ]),
      startNodeProcess('kube-proxy', [
        `--config=${join(dataDir, 'kube-proxy.yaml')}`,
        `--v=${options.verbosity ?? 1}`,
      ]),
      containerd.process.exited.then(() => {
        throw new Error('containerd exited');
      }),
    ]);
    nodeCrashed.catch(() => {});

    await steps.run('node Ready, CoreDNS ready', () =>
      Promise.race([
        nodeCrashed,
        (async () => {
          await applyCrdDirs(kubeconfig, options.crdDirs ?? []);
          await waitFor(
            'node Ready and schedulable',
            async () => {
              const node = await core.readNode({ name: nodeName });
              const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
              return ready && !node.spec?.taints?.some((t) => t.key === 'node.kubernetes.io/not-ready');
            },
            { timeoutMs, intervalMs: 250 },
          );
          await waitFor(
            'default service account',
            () => core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' }),
            {
              timeoutMs,
              intervalMs: 250,
            },
          );
          await waitFor(
            'CoreDNS ready',
            async () => {
              const slices = await kubectl([
                'get',
                'endpointslices',
                '-n',
                'kube-system',
                '-l',
                'kubernetes.io/service-name=kube-dns',
                '-o',
                'json',
              ]);
              const items = (
                JSON.parse(slices) as { items: { endpoints?: { conditions?: { ready?: boolean } }[] }[] }
              ).items;
              return items.some((s) => s.endpoints?.some((e) => e.conditions?.ready));
            },
            { timeoutMs, intervalMs: 500 },
          );
        })(),
      ]),
    );
    log(`local cluster ready: ${server} (KUBECONFIG=${kubeconfigPath})`);
    const info: LocalClusterInfo = {
      kubeconfigPath,
      kubectlPath: kubectlBinary,
      ctrPath: built.binaries.ctr,
      containerdSocket: nodeLayout.containerdSocket,
      server,
      nodeName,
      nodeIP: network.nodeIP,
      dataDir,
      version: kubernetesVersion,
      safety,
      images: { app: appImageName, pause: built.pause.name, coredns: built.coredns.name },
    };
    return { ...attachLocalCluster(info), info, stop };
  } catch (error) {
    await stop().catch((teardown: Error) => log(teardown.message));
    throw error;
  }
}

/** Shims of this node's containerd outlive it (they hold the containers); none may stay. */
async function killShims(dataDir: string): Promise<void> {
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('containerd-shim') && cmdline.includes(dataDir)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {}
    }
  }
  await sleep(200);
}
