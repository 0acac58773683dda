/**
 * What the cluster holds at each moment of the walk, from watches of its own (client-node's
 * informers, independent of the operator's caches): which web/worker Deployments exist and since
 * when, how many worker Pods are Ready, and since when every Deployment and Pod has been settled.
 * Each status the recorder sees is judged against this snapshot (status-truth.ts).
 */
import {
  AppsV1Api,
  CoreV1Api,
  type Informer,
  type KubeConfig,
  type KubernetesObject,
  makeInformer,
  type ObjectCache,
  type V1Deployment,
  type V1Pod,
} from '@kubernetes/client-node';

export interface Truth {
  /** Deployment name -> when this watch first saw it (ms). */
  deployments: Record<string, number>;
  readyWorkers: number;
  /** Since when every Deployment is rolled out and every Pod Ready (undefined: not now). */
  settledSince: number | undefined;
}

const ready = (p: V1Pod) =>
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const rolledOut = (d: V1Deployment) => {
  const want = d.spec?.replicas ?? 1;
  const s = d.status ?? {};
  return (
    (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0) &&
    s.replicas === want &&
    s.updatedReplicas === want &&
    s.readyReplicas === want
  );
};

export class ClusterTruth {
  private readonly seen = new Map<string, number>();
  private settledSince: number | undefined;
  private readonly deployments: Informer<V1Deployment> & ObjectCache<V1Deployment>;
  private readonly pods: Informer<V1Pod> & ObjectCache<V1Pod>;

  constructor(kc: KubeConfig, ns: string, instance: string) {
    const selector = `app.kubernetes.io/instance=${instance}`;
    const apps = kc.makeApiClient(AppsV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    this.deployments = makeInformer(
      kc,
      `/apis/apps/v1/namespaces/${ns}/deployments`,
      () => apps.listNamespacedDeployment({ namespace: ns, labelSelector: selector }),
      selector,
    );
    this.pods = makeInformer(
      kc,
      `/api/v1/namespaces/${ns}/pods`,
      () => core.listNamespacedPod({ namespace: ns, labelSelector: selector }),
      selector,
    );
    for (const informer of [this.deployments, this.pods] as Informer<KubernetesObject>[]) {
      informer.on('add', () => this.update());
      informer.on('update', () => this.update());
      informer.on('delete', () => this.update());
      // A broken watch restarts; the snapshot then says "not settled" until it is back.
      informer.on('error', () => {
        this.settledSince = undefined;
        setTimeout(() => void informer.start().catch(() => {}), 1_000);
      });
    }
  }

  async start(): Promise<void> {
    await Promise.all([this.deployments.start(), this.pods.start()]);
  }

  async stop(): Promise<void> {
    await Promise.all([this.deployments.stop(), this.pods.stop()]);
  }

  private update(): void {
    const now = Date.now();
    const deployments = this.deployments.list();
    for (const d of deployments) if (!this.seen.has(d.metadata!.name!)) this.seen.set(d.metadata!.name!, now);
    for (const name of [...this.seen.keys()])
      if (!deployments.some((d) => d.metadata?.name === name)) this.seen.delete(name);
    const servicePods = this.pods.list().filter((p) => !p.metadata?.labels?.['job-name']);
    const settled =
      deployments.every(rolledOut) && servicePods.every((p) => ready(p) && !p.metadata?.deletionTimestamp);
    if (!settled) this.settledSince = undefined;
    else this.settledSince ??= now;
  }

  snapshot(): Truth {
    const workers = this.pods
      .list()
      .filter(
        (p) =>
          p.metadata?.labels?.['app.kubernetes.io/component'] === 'worker' && !p.metadata?.deletionTimestamp,
      );
    return {
      deployments: Object.fromEntries(this.seen),
      readyWorkers: workers.filter(ready).length,
      settledSince: this.settledSince,
    };
  }
}
