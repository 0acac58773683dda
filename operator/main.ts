/**
 * `observatory operator`: the controller process. Kubeconfig from KUBECONFIG or in-cluster. With
 * leader election on (the default), only the Lease holder reconciles, and only once every cache
 * it reads has synced (gate.ts): the work queue drops every event until then, and becoming leader
 * enqueues every object. Losing the Lease closes the gate before anything else is written (a pass
 * in flight stops at its next write), then exits the process so Kubernetes restarts it as a
 * follower. Health on :8081 (/healthz, /readyz), metrics
 * on :8080 (/metrics).
 *
 * Its settings (OperatorConfig, from the variables of OPERATOR_ENV in server/contract/env.ts) are
 * read once by its entry.
 */
import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubernetesListObject,
  type KubernetesObject,
  NetworkingV1Api,
  PolicyV1Api,
  type V1ConfigMap,
  type V1Deployment,
  type V1Job,
  type V1NetworkPolicy,
  type V1Pod,
  type V1PodDisruptionBudget,
  type V1Secret,
  type V1Service,
} from '@kubernetes/client-node';
import pino from 'pino';
import type { OperatorConfig } from './config.ts';
import { GROUP, MANAGED_BY, type ObservabilityService, PLURAL, VERSION } from './index.ts';
import { cacheTrims, type Trim } from './runtime/cache-trim.ts';
import { PooledKubeConfig } from './runtime/connection.ts';
import { reconcile } from './runtime/controller.ts';
import { ChangeFilter, fingerprints } from './runtime/enqueue.ts';
import { reconcileBlocked } from './runtime/gate.ts';
import { type SupervisedInformer, superviseInformer } from './runtime/informer.ts';
import { Kube } from './runtime/kube.ts';
import { LeaderElector } from './runtime/leader.ts';
import { INSTANCE, WATCH_LABEL } from './runtime/observe.ts';
import { podAddressReads } from './runtime/probes.ts';
import { operatorMetrics, serveHealth, serveMetrics } from './runtime/serve.ts';
import { WorkQueue } from './runtime/workqueue.ts';

const MANAGED = `app.kubernetes.io/managed-by=${MANAGED_BY}`;

export async function runOperator(config: OperatorConfig): Promise<number> {
  const log = pino({ name: 'operator', level: config.logLevel });
  const say = (msg: string, fields?: Record<string, unknown>) => log.info(fields ?? {}, msg);
  const kc = new PooledKubeConfig();
  kc.loadFromDefault();
  const watchNs = config.watchNamespace;
  const metrics = operatorMetrics();
  const kube = new Kube(kc);
  let ready = false;
  let leading = false;

  const queue = new WorkQueue((key) => reconcile(key, deps), {
    workers: 2,
    closed: true,
    onError: (key, err, retryInMs) =>
      log.warn({ key, err: (err as Error).message, retryInMs }, 'reconcile failed'),
  });
  const enqueueOwner = (o: { metadata?: { namespace?: string; labels?: Record<string, string> } }) => {
    const owner = o.metadata?.labels?.[INSTANCE];
    if (owner && o.metadata?.namespace) queue.add(`${o.metadata.namespace}/${owner}`);
  };
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const batch = kc.makeApiClient(BatchV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const policy = kc.makeApiClient(PolicyV1Api);
  const networking = kc.makeApiClient(NetworkingV1Api);
  const secretRollouts = config.secretRollouts;
  const WATCHED = `${WATCH_LABEL}=true`;
  // A watched Secret or ConfigMap changed: every object of its namespace re-plans; only those
  // whose roles read a changed key get a new Pod template.
  const enqueueNamespace = (o: KubernetesObject) => {
    for (const s of informers.objects.list(o.metadata?.namespace))
      queue.add(`${s.metadata.namespace}/${s.metadata.name}`);
  };
  type List<T extends KubernetesObject> = Promise<KubernetesListObject<T>>;
  type Selected = { labelSelector?: string };
  /**
   * One informer over a kind in the watched namespace (or all): its API path, its two list calls,
   * the label that admits an object to the cache, what a change enqueues, and what a change is.
   */
  const watch = <T extends KubernetesObject>(w: {
    api: readonly [group: string, version: string, plural: string];
    namespaced: (r: Selected & { namespace: string }) => List<T>;
    all: (r: Selected) => List<T>;
    labelSelector?: string;
    onChange: (o: T) => void;
    filter: ChangeFilter<T>;
    trim: Trim<T>;
  }) => {
    const [group, version, plural] = w.api;
    const path = `/${group ? `apis/${group}` : 'api'}/${version}${watchNs ? `/namespaces/${watchNs}` : ''}/${plural}`;
    const selected = w.labelSelector ? { labelSelector: w.labelSelector } : {};
    return superviseInformer<T>(
      kc,
      path,
      () => (watchNs ? w.namespaced({ ...selected, namespace: watchNs }) : w.all(selected)),
      w.onChange,
      { ...selected, filter: w.filter, trim: w.trim, log: say },
    );
  };
  type Named = ObservabilityService & { metadata: { name: string } };
  const objectChanges = new ChangeFilter<Named>(fingerprints.object);
  const crd = { group: GROUP, version: VERSION, plural: PLURAL };
  /** A kind of child the operator manages: cached by its managed-by label, enqueueing its owner. */
  const child = <T extends KubernetesObject>(
    api: readonly [string, string, string],
    namespaced: (r: Selected & { namespace: string }) => List<T>,
    all: (r: Selected) => List<T>,
    fingerprint: (o: T) => unknown,
    trim: Trim<T>,
  ) =>
    watch<T>({
      api,
      namespaced,
      all,
      labelSelector: MANAGED,
      onChange: enqueueOwner,
      filter: new ChangeFilter(fingerprint),
      trim,
    });

  const informers = {
    objects: watch<Named>({
      api: [GROUP, VERSION, PLURAL],
      // The custom objects API answers untyped lists.
      namespaced: (r) => custom.listNamespacedCustomObject({ ...crd, namespace: r.namespace }) as List<Named>,
      all: () => custom.listClusterCustomObject(crd) as List<Named>,
      onChange: (o) => queue.add(`${o.metadata.namespace}/${o.metadata.name}`),
      filter: objectChanges,
      trim: cacheTrims.object,
    }),
    deployments: child<V1Deployment>(
      ['apps', 'v1', 'deployments'],
      (r) => apps.listNamespacedDeployment(r),
      (r) => apps.listDeploymentForAllNamespaces(r),
      fingerprints.deployment,
      cacheTrims.deployment,
    ),
    services: child<V1Service>(
      ['', 'v1', 'services'],
      (r) => core.listNamespacedService(r),
      (r) => core.listServiceForAllNamespaces(r),
      fingerprints.service,
      cacheTrims.service,
    ),
    jobs: child<V1Job>(
      ['batch', 'v1', 'jobs'],
      (r) => batch.listNamespacedJob(r),
      (r) => batch.listJobForAllNamespaces(r),
      fingerprints.job,
      cacheTrims.job,
    ),
    pods: child<V1Pod>(
      ['', 'v1', 'pods'],
      (r) => core.listNamespacedPod(r),
      (r) => core.listPodForAllNamespaces(r),
      fingerprints.pod,
      cacheTrims.pod,
    ),
    disruptionBudgets: child<V1PodDisruptionBudget>(
      ['policy', 'v1', 'poddisruptionbudgets'],
      (r) => policy.listNamespacedPodDisruptionBudget(r),
      (r) => policy.listPodDisruptionBudgetForAllNamespaces(r),
      fingerprints.disruptionBudget,
      cacheTrims.disruptionBudget,
    ),
    networkPolicies: child<V1NetworkPolicy>(
      ['networking.k8s.io', 'v1', 'networkpolicies'],
      (r) => networking.listNamespacedNetworkPolicy(r),
      (r) => networking.listNetworkPolicyForAllNamespaces(r),
      fingerprints.networkPolicy,
      cacheTrims.networkPolicy,
    ),
  };
  // Only Secrets and ConfigMaps the user labeled enter the cache (RBAC cannot select by label, so
  // the label is what keeps every other credential of the namespace out of the operator's memory).
  const source = <T extends V1Secret | V1ConfigMap>(
    plural: string,
    namespaced: (r: Selected & { namespace: string }) => List<T>,
    all: (r: Selected) => List<T>,
    trim: Trim<T>,
  ) =>
    watch<T>({
      api: ['', 'v1', plural],
      namespaced,
      all,
      labelSelector: WATCHED,
      onChange: enqueueNamespace,
      filter: new ChangeFilter(fingerprints.source),
      trim,
    });
  const sources: { secrets?: SupervisedInformer<V1Secret>; configMaps?: SupervisedInformer<V1ConfigMap> } =
    secretRollouts
      ? {
          secrets: source<V1Secret>(
            'secrets',
            (r) => core.listNamespacedSecret(r),
            (r) => core.listSecretForAllNamespaces(r),
            cacheTrims.secret,
          ),
          configMaps: source<V1ConfigMap>(
            'configmaps',
            (r) => core.listNamespacedConfigMap(r),
            (r) => core.listConfigMapForAllNamespaces(r),
            cacheTrims.configMap,
          ),
        }
      : {};
  const allInformers = Object.entries({ ...informers, ...sources });
  const deps = {
    kube,
    objects: (namespace: string, name: string) =>
      informers.objects.get(name, namespace) as ObservabilityService | undefined,
    caches: {
      deployments: () => informers.deployments.list(),
      services: () => informers.services.list(),
      jobs: () => informers.jobs.list(),
      pods: () => informers.pods.list(),
      disruptionBudgets: () => informers.disruptionBudgets.list(),
      networkPolicies: () => informers.networkPolicies.list(),
      secrets: () => sources.secrets?.list() ?? [],
      configMaps: () => sources.configMaps?.list() ?? [],
    },
    reads: podAddressReads,
    metrics,
    expect: (o: ObservabilityService) => objectChanges.expect(o as Named),
    log: say,
    blocked: () =>
      reconcileBlocked(
        leading && (elector?.leading ?? true),
        allInformers.map(([name, i]) => ({ name, synced: i.hasSynced() })),
      ),
  };

  const health = await serveHealth(config.healthPort, () => ready, config.bindAddress);
  const metricsServer = await serveMetrics(config.metricsPort, metrics.registry, config.bindAddress);

  const startLeading = async () => {
    leading = true;
    metrics.leader.set(1);
    await Promise.all(allInformers.map(([, i]) => i.synced));
    if (!leading) return;
    queue.open();
    for (const o of informers.objects.list()) queue.add(`${o.metadata.namespace}/${o.metadata.name}`);
    ready = true;
    say('reconciling', { watchNamespace: watchNs || '(all)' });
  };

  const elector = config.leaderElection
    ? new LeaderElector(kc, {
        namespace: config.leaseNamespace,
        name: config.leaseName,
        identity: config.identity,
        onStartedLeading: () => void startLeading(),
        onStoppedLeading: () => {
          // Closes the gate first: a pass in flight writes nothing more.
          leading = false;
          metrics.leader.set(0);
          void queue.stop();
          log.error('lost the leader lease; exiting so a fresh process can campaign');
          process.exit(1);
        },
        log: say,
      })
    : undefined;
  if (elector) {
    elector.start();
    // Followers are ready to take over; /readyz reports the process, not the leadership.
    ready = true;
  } else await startLeading();

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  say('shutting down', { leading });
  ready = false;
  await queue.stop();
  await elector?.stop();
  await Promise.all(allInformers.map(([, i]) => i.stop()));
  await kc.close();
  health.close();
  metricsServer.close();
  return 0;
}
