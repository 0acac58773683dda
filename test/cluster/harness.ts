// A real single-node Kubernetes cluster for tests, without Docker: etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler (built from Go modules, see binaries.ts) as child
// processes on a loopback address of their own, plus our node agent in this process running Pods
// as local processes. startCluster() is ready when the node is Ready and the default service
// account exists; stop() leaves no process and no listening port behind.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import {
  type ControlPlaneLayout,
  failOnExit,
  makeDataDirs,
  startApiServer,
  startControllerManager,
  startEtcd,
  startScheduler,
  waitApiServerReady,
} from '../../cluster/control-plane.ts';
import { ensureControlPlane, kubernetesVersion } from '../../cluster/control-plane-binary.ts';
import { applyCrdDirs } from '../../cluster/crds.ts';
import { writeKubeconfig } from '../../cluster/kubeconfig.ts';
import { crdDir } from '../../cluster/paths.ts';
import { createPki } from '../../cluster/pki.ts';
import { groupAlive, type Supervised } from '../../cluster/processes.ts';
import { waitFor } from '../../cluster/wait.ts';
import {
  freePorts,
  PodAddressPool,
  portIsFree,
  releaseLoopbackBlock,
  reserveLoopbackBlock,
} from './network.ts';
import { NodeAgent } from './node-agent/index.ts';

export interface ClusterOptions {
  /** Directory for all state; a fresh temp directory (removed by stop()) when absent. */
  dataDir?: string;
  /** Keep dataDir after stop() (for post-mortems). Also OBSERVATORY_CLUSTER_KEEP=1. */
  keepDataDir?: boolean;
  /** Directories whose *.yaml objects (CRDs) are applied at start; default the project's crds/. */
  crdDirs?: string[];
  /** A CRD the API server rejects fails the start ('fail', default) or is only logged ('warn'). */
  crdErrors?: 'fail' | 'warn';
  nodeName?: string;
  /** Component log verbosity (klog --v). */
  verbosity?: number;
  /** Restart backoff of crashing containers (the kubelet uses 10s..5min; tests want it short). */
  restartBackoff?: { baseMs: number; maxMs: number };
  startTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface Cluster {
  /** Admin kubeconfig (system:masters). */
  kubeconfigPath: string;
  /** https://127.x.0.1:port */
  server: string;
  kubeconfig: KubeConfig;
  dataDir: string;
  nodeName: string;
  host: string;
  ports: { apiServer: number; etcd: number; etcdPeer: number };
  version: string;
  /** Milliseconds from the call to ready. */
  startupMs: number;
  /** Output of a Pod's container (the stand-in for `kubectl logs`). */
  logs(namespace: string, pod: string, container: string): Promise<string>;
  /** Process ids of control-plane components and of running containers. */
  pids(): number[];
  stop(): Promise<void>;
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const started = performance.now();
  const log = options.log ?? (() => {});
  const binary = await ensureControlPlane(log);
  const nodeName = options.nodeName ?? 'local-node';
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'observatory-cluster-')));
  if (options.dataDir) {
    await rm(dataDir, { recursive: true, force: true });
    await mkdir(dataDir, { recursive: true });
  }
  const block = await reserveLoopbackBlock();
  const host = `127.${block}.0.1`;
  const [apiPort, etcdPort, etcdPeerPort] = (await freePorts(host, 3)) as [number, number, number];
  const server = `https://${host}:${apiPort}`;
  const processes: Supervised[] = [];
  let agent: NodeAgent | undefined;
  let stopped: Promise<void> | undefined;

  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      await agent?.stop().catch(() => {});
      // The control plane goes together: its state is thrown away, so no orderly shutdown is needed.
      await Promise.all(processes.map((p) => p.stop(1000)));
      releaseLoopbackBlock(block);
      const keep = options.keepDataDir || process.env['OBSERVATORY_CLUSTER_KEEP'] === '1';
      if (!keep) await rm(dataDir, { recursive: true, force: true });
    })();
    return stopped;
  };

  const cluster: Cluster = {
    kubeconfigPath: join(dataDir, 'kubeconfig'),
    server,
    kubeconfig: new KubeConfig(),
    dataDir,
    nodeName,
    host,
    ports: { apiServer: apiPort, etcd: etcdPort, etcdPeer: etcdPeerPort },
    version: kubernetesVersion,
    startupMs: 0,
    logs: (namespace, pod, container) => {
      if (!agent) throw new Error('the cluster has no node agent');
      return agent.logs(namespace, pod, container);
    },
    pids: () => [...processes.filter((p) => groupAlive(p.pid)).map((p) => p.pid), ...(agent?.pids() ?? [])],
    stop,
  };

  try {
    await makeDataDirs(dataDir);
    const pki = await createPki(join(dataDir, 'pki'), host, nodeName);
    const kubeconfigFor = async (name: string, identity: { cert: string; key: string }) => {
      const path = join(dataDir, name === 'admin' ? 'kubeconfig' : `${name}.kubeconfig`);
      await writeKubeconfig(path, {
        server,
        caFile: pki.caCert,
        user: { clientCertificate: identity.cert, clientKey: identity.key },
      });
      return path;
    };
    const [, controllerManagerKubeconfig, schedulerKubeconfig, nodeKubeconfig] = await Promise.all([
      kubeconfigFor('admin', pki.admin),
      kubeconfigFor('kube-controller-manager', pki.controllerManager),
      kubeconfigFor('kube-scheduler', pki.scheduler),
      kubeconfigFor('node', pki.node),
    ]);
    const layout: ControlPlaneLayout = {
      binary,
      dataDir,
      host,
      apiPort,
      etcdPort,
      etcdPeerPort,
      pki,
      controllerManagerKubeconfig,
      schedulerKubeconfig,
      verbosity: options.verbosity ?? 1,
    };
    const timeoutMs = options.startTimeoutMs ?? 120_000;
    const guard = (p: Supervised) => {
      processes.push(p);
      return failOnExit(p);
    };
    // Any component exiting during startup fails the start at once, with its log.
    const crashed = Promise.race([guard(startEtcd(layout)), guard(startApiServer(layout))]);
    crashed.catch(() => {});
    await Promise.race([crashed, waitApiServerReady(layout, timeoutMs)]);
    log(`kube-apiserver ready after ${Math.round(performance.now() - started)}ms`);
    const crashedLater = Promise.race([
      crashed,
      guard(startControllerManager(layout)),
      guard(startScheduler(layout)),
    ]);
    crashedLater.catch(() => {});

    cluster.kubeconfig.loadFromFile(cluster.kubeconfigPath);
    const nodeConfig = new KubeConfig();
    nodeConfig.loadFromFile(nodeKubeconfig);
    agent = new NodeAgent({
      kubeconfig: nodeConfig,
      nodeName,
      hostIP: host,
      kubeletVersion: kubernetesVersion,
      api: { host, port: apiPort, caFile: pki.caCert },
      launcher: binary,
      workDir: dataDir,
      addresses: new PodAddressPool(block),
      ...(options.restartBackoff ? { backoff: options.restartBackoff } : {}),
      log: (line) => log(`[node-agent] ${line}`),
    });
    const core = cluster.kubeconfig.makeApiClient(CoreV1Api);
    await Promise.race([
      crashedLater,
      (async () => {
        await waitFor('kube-node-lease namespace', () => core.readNamespace({ name: 'kube-node-lease' }), {
          timeoutMs,
          intervalMs: 100,
        });
        await agent.start();
        log(`node registered after ${Math.round(performance.now() - started)}ms`);
        await applyCrdDirs(cluster.kubeconfig, options.crdDirs ?? [crdDir]).catch((error: Error) => {
          if (options.crdErrors !== 'warn') throw error;
          log(`warning: ${error.message}`);
        });
        await waitFor(
          'node Ready and schedulable',
          async () => {
            const node = await core.readNode({ name: nodeName });
            const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
            // The not-ready taint is lifted by the node lifecycle controller: the scheduler will place Pods.
            return ready && !node.spec?.taints?.some((t) => t.key === 'node.kubernetes.io/not-ready');
          },
          { timeoutMs, intervalMs: 100 },
        );
        await waitFor(
          'default service account',
          () => core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' }),
          { timeoutMs, intervalMs: 100 },
        );
      })(),
    ]);
    cluster.startupMs = Math.round(performance.now() - started);
    log(`cluster ready in ${cluster.startupMs}ms: ${server} (kubeconfig ${cluster.kubeconfigPath})`);
    return cluster;
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Whether every process of the cluster is gone and its ports are free again. */
export async function leftovers(cluster: Cluster, pids: number[]): Promise<string[]> {
  const found: string[] = [];
  for (const pid of pids) if (groupAlive(pid)) found.push(`process group ${pid}`);
  for (const port of Object.values(cluster.ports)) {
    if (!(await portIsFree(cluster.host, port))) found.push(`port ${cluster.host}:${port}`);
  }
  return found;
}
