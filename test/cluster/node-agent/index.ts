// The local node agent: a kubelet stand-in living inside the harness. It registers one Node,
// watches the Pods bound to it and runs each with a PodWorker; see images.ts for what it can run.
import { join } from 'node:path';
import {
  CoordinationV1Api,
  CoreV1Api,
  type KubeConfig,
  ListWatch,
  type V1Pod,
  Watch,
} from '@kubernetes/client-node';
import type { PodAddressPool } from '../network.ts';
import type { Backoff } from './container.ts';
import { NodeRegistration } from './node.ts';
import { PodWorker, readContainerLog } from './pod-worker.ts';
import type { ApiEndpoint } from './service-account.ts';

export interface NodeAgentOptions {
  /** Credentials of the node (system:node:<name>), so the Node authorizer applies. */
  kubeconfig: KubeConfig;
  nodeName: string;
  hostIP: string;
  kubeletVersion: string;
  api: ApiEndpoint;
  /** The control-plane binary (its `exec` subcommand starts containers). */
  launcher: string;
  workDir: string;
  addresses: PodAddressPool;
  backoff?: Backoff;
  log?: (message: string) => void;
}

export class NodeAgent {
  private readonly core: CoreV1Api;
  private readonly registration: NodeRegistration;
  private readonly workers = new Map<string, PodWorker>();
  private informer: ListWatch<V1Pod> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly podsDir: string;
  private readonly log: (message: string) => void;

  private readonly options: NodeAgentOptions;

  constructor(options: NodeAgentOptions) {
    this.options = options;
    this.core = options.kubeconfig.makeApiClient(CoreV1Api);
    this.log = options.log ?? (() => {});
    this.podsDir = join(options.workDir, 'pods');
    this.registration = new NodeRegistration(
      this.core,
      options.kubeconfig.makeApiClient(CoordinationV1Api),
      { name: options.nodeName, hostIP: options.hostIP, kubeletVersion: options.kubeletVersion },
      this.log,
    );
  }

  async start(): Promise<void> {
    await this.registration.register();
    const fieldSelector = `spec.nodeName=${this.options.nodeName}`;
    const informer = new ListWatch<V1Pod>(
      '/api/v1/pods',
      new Watch(this.options.kubeconfig),
      () => this.core.listPodForAllNamespaces({ fieldSelector }),
      false,
      undefined,
      fieldSelector,
    );
    informer.on('add', (pod) => this.sync(pod));
    informer.on('update', (pod) => this.sync(pod));
    informer.on('delete', (pod) => this.gone(pod));
    // The informer stops on errors other than 410: start it again (client-node's documented pattern).
    informer.on('error', (error: unknown) => {
      if (this.stopped) return;
      this.log(`pod watch: ${(error as Error)?.message ?? error}; restarting`);
      this.restartTimer = setTimeout(() => void informer.start().catch(() => {}), 1000);
    });
    this.informer = informer;
    await informer.start();
  }

  /** Stops watching and ends every Pod's processes at once (the cluster is going away). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    this.registration.stop();
    await this.informer?.stop();
    await Promise.all([...this.workers.values()].map((worker) => worker.forget(2000)));
    this.workers.clear();
  }

  /** Process ids of all running containers on this node. */
  pids(): number[] {
    return [...this.workers.values()].flatMap((worker) => worker.pids());
  }

  /** The output of a container (all its runs): the stand-in for `kubectl logs`. */
  logs(namespace: string, pod: string, container: string): Promise<string> {
    return readContainerLog(this.podsDir, namespace, pod, container);
  }

  private sync(pod: V1Pod): void {
    if (this.stopped) return;
    const uid = pod.metadata?.uid ?? '';
    const existing = this.workers.get(uid);
    if (existing) {
      existing.update(pod);
      return;
    }
    const phase = pod.status?.phase;
    // Finished Pods only need removing when deleted; they are not run again.
    if (phase === 'Succeeded' || phase === 'Failed') {
      if (pod.metadata?.deletionTimestamp) void this.removeFinished(pod);
      return;
    }
    const worker = new PodWorker(
      {
        core: this.core,
        nodeName: this.options.nodeName,
        hostIP: this.options.hostIP,
        launcher: this.options.launcher,
        podsDir: this.podsDir,
        api: this.options.api,
        addresses: this.options.addresses,
        backoff: this.options.backoff ?? { baseMs: 1000, maxMs: 30_000 },
        log: this.log,
      },
      pod,
    );
    this.workers.set(uid, worker);
    void worker
      .run()
      .catch((error: Error) => this.log(`pod ${worker.namespace}/${worker.name}: ${error.message}`));
  }

  private async removeFinished(pod: V1Pod): Promise<void> {
    await this.core
      .deleteNamespacedPod({
        name: pod.metadata?.name ?? '',
        namespace: pod.metadata?.namespace ?? 'default',
        body: { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata?.uid } },
      })
      .catch(() => {});
  }

  private gone(pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? '';
    const worker = this.workers.get(uid);
    if (!worker) return;
    this.workers.delete(uid);
    void worker.forget(0);
  }
}
