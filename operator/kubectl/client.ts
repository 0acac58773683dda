/**
 * The plugin's I/O against the API server, through `@kubernetes/client-node` and the user's
 * kubeconfig (kubectl hands a plugin none of its flags, so the plugin loads KUBECONFIG itself).
 * Thin: every decision lives in the pure modules.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import {
  ApiException,
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  NetworkingV1Api,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  type V1Pod,
  type V1Secret,
} from '@kubernetes/client-node';
import { PORTS } from '../../server/contract/ports.ts';
import {
  backfillReportSchema,
  HEALTH_STATUS,
  healthResponseSchema,
  ingestionBacklogSchema,
  jobResultsReportSchema,
  producersReportSchema,
  WORKER_PATHS,
} from '../../server/contract/worker-api.ts';
import { GROUP, KIND, type ObservabilityService, PLURAL, VERSION } from '../api/v1alpha1.ts';
import type { Caches, WorkerReads } from '../runtime/observe.ts';
import { WATCH_LABEL } from '../runtime/observe.ts';
import type { Connection } from './args.ts';
import type { EventLike, Listed } from './report.ts';

/** The kubeconfig is missing or names no usable context: exit code 2. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The API server refused or could not be reached: exit code 1 with this message. */
export class ApiError extends Error {
  override name = 'ApiError';
}

export function loadKubeConfig(c: Connection, env: NodeJS.ProcessEnv): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (c.kubeconfig) kc.loadFromFile(c.kubeconfig);
    else if (env['KUBECONFIG'] || env['HOME']) kc.loadFromDefault();
    else kc.loadFromCluster();
  } catch (err) {
    throw new ConfigError(
      `cannot load the kubeconfig${c.kubeconfig ? ` ${c.kubeconfig}` : ''}: ${(err as Error).message}`,
    );
  }
  if (c.context) {
    if (!kc.getContextObject(c.context))
      throw new ConfigError(`context "${c.context}" is not in the kubeconfig`);
    kc.setCurrentContext(c.context);
  }
  if (!kc.getCurrentCluster())
    throw new ConfigError(
      'the kubeconfig has no current context with a cluster; use --context or --kubeconfig',
    );
  return kc;
}

export const namespaceOf = (kc: KubeConfig, c: Connection): string =>
  c.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';

const READ_TIMEOUT_MS = 5_000;

/** An API failure as one line: what was asked and what the server said. */
function explain(err: unknown, what: string, server: string): ApiError {
  if (err instanceof ApiException) {
    const body = typeof err.body === 'string' ? safeJson(err.body) : err.body;
    const message =
      (body as { message?: string } | undefined)?.message ?? String(err.body ?? '').slice(0, 300);
    if (err.code === 401) return new ApiError(`not authenticated to ${server}: ${message}`);
    if (err.code === 403) return new ApiError(`no access: ${message}`);
    if (err.code === 404) return new ApiError(`${what}: not found (${message})`);
    return new ApiError(`${what}: the API server answered ${err.code}: ${message}`);
  }
  const e = err as { code?: string; cause?: { code?: string }; message?: string };
  return new ApiError(
    `${what}: cannot reach the API server at ${server}: ${e.cause?.code ?? e.code ?? e.message}`,
  );
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

const statusOf = (err: unknown) => (err instanceof ApiException ? err.code : undefined);

export class PluginClient {
  readonly server: string;
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;

  private readonly kc: KubeConfig;
  readonly namespace: string;

  constructor(kc: KubeConfig, namespace: string) {
    this.kc = kc;
    this.namespace = namespace;
    this.server = kc.getCurrentCluster()?.server ?? '';
    this.custom = kc.makeApiClient(CustomObjectsApi);
    this.core = kc.makeApiClient(CoreV1Api);
  }

  private async call<T>(what: string, f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (err) {
      throw explain(err, what, this.server);
    }
  }

  private target() {
    return { group: GROUP, version: VERSION, plural: PLURAL, namespace: this.namespace };
  }

  /** The named object, or the only one in the namespace when no name is given. */
  async object(name?: string): Promise<ObservabilityService> {
    if (name !== undefined) {
      try {
        return (await this.custom.getNamespacedCustomObject({
          ...this.target(),
          name,
        })) as ObservabilityService;
      } catch (err) {
        if (statusOf(err) !== 404) throw explain(err, `get ${KIND} ${this.namespace}/${name}`, this.server);
        if (!(await this.apiInstalled())) throw this.notInstalled();
        throw new ApiError(`${KIND} "${name}" not found in namespace ${this.namespace}`);
      }
    }
    const list = await this.call(`list ${KIND}s in namespace ${this.namespace}`, async () => {
      try {
        return (await this.custom.listNamespacedCustomObject(this.target())) as {
          items: ObservabilityService[];
        };
      } catch (err) {
        if (statusOf(err) === 404) throw this.notInstalled();
        throw err;
      }
    });
    const names = list.items.map((o) => o.metadata.name);
    if (names.length === 1) return list.items[0]!;
    if (names.length === 0) throw new ApiError(`no ${KIND} in namespace ${this.namespace}`);
    throw new ApiError(
      `${names.length} ${KIND}s in namespace ${this.namespace} (${names.join(', ')}): name one`,
    );
  }

  private notInstalled(): ApiError {
    return new ApiError(`the ${KIND} API (${GROUP}/${VERSION}) is not installed on ${this.server}`);
  }

  private async apiInstalled(): Promise<boolean> {
    try {
      await this.custom.listNamespacedCustomObject({ ...this.target(), limit: 1 });
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Sets one annotation with the object's resourceVersion as precondition: a request is written
   * only against the object it was decided from (409 otherwise).
   */
  async annotate(o: ObservabilityService, annotation: string, value: string): Promise<void> {
    await this.mergePatch(o, { annotations: { [annotation]: value } }, 'annotate');
  }

  /** Merges `spec` into the object's spec, with the same precondition. */
  async patchSpec(o: ObservabilityService, spec: Record<string, unknown>): Promise<void> {
    await this.mergePatch(o, {}, 'patch', { spec });
  }

  private async mergePatch(
    o: ObservabilityService,
    metadata: Record<string, unknown>,
    verb: string,
    body: Record<string, unknown> = {},
  ): Promise<void> {
    const patch = { ...body, metadata: { resourceVersion: o.metadata.resourceVersion, ...metadata } };
    try {
      await this.custom.patchNamespacedCustomObject(
        { ...this.target(), name: o.metadata.name, body: patch },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    } catch (err) {
      if (statusOf(err) === 409)
        throw new ApiError(
          `${o.metadata.name} changed since it was read; run the command again to act on its current state`,
        );
      throw explain(err, `${verb} ${KIND} ${this.namespace}/${o.metadata.name}`, this.server);
    }
  }

  /** One listing of everything the planner reads, as the operator's informer caches would hold it. */
  async caches(): Promise<{ caches: Caches; unreadable: string[] }> {
    const namespace = this.namespace;
    const apps = this.kc.makeApiClient(AppsV1Api);
    const batch = this.kc.makeApiClient(BatchV1Api);
    const policy = this.kc.makeApiClient(PolicyV1Api);
    const watched = { namespace, labelSelector: `${WATCH_LABEL}=true` };
    const unreadable: string[] = [];
    // Secrets and ConfigMaps only feed the rollout hash: without access the plan says so.
    const optional = async <T>(what: string, f: () => Promise<{ items: T[] }>) => {
      try {
        return (await f()).items;
      } catch (err) {
        if (statusOf(err) !== 403) throw explain(err, `list ${what}`, this.server);
        unreadable.push(what);
        return [];
      }
    };
    const networking = this.kc.makeApiClient(NetworkingV1Api);
    const [deployments, services, jobs, pods, disruptionBudgets, networkPolicies, secrets, configMaps] =
      await this.call(`read the objects of namespace ${namespace}`, () =>
        Promise.all([
          apps.listNamespacedDeployment({ namespace }),
          this.core.listNamespacedService({ namespace }),
          batch.listNamespacedJob({ namespace }),
          this.core.listNamespacedPod({ namespace }),
          policy.listNamespacedPodDisruptionBudget({ namespace }),
          networking.listNamespacedNetworkPolicy({ namespace }),
          optional('Secrets', () => this.core.listNamespacedSecret(watched)),
          optional('ConfigMaps', () => this.core.listNamespacedConfigMap(watched)),
        ]),
      );
    return {
      caches: {
        deployments: () => deployments.items,
        services: () => services.items,
        jobs: () => jobs.items,
        pods: () => pods.items,
        disruptionBudgets: () => disruptionBudgets.items,
        networkPolicies: () => networkPolicies.items,
        secrets: () => secrets,
        configMaps: () => configMaps,
      },
      unreadable,
    };
  }

  /**
   * What a support bundle reads of the namespace: the objects of every kind the operator creates
   * (and the ReplicaSets between Deployments and Pods), Events and Secrets; a kind the user may not
   * list is named in `unreadable` instead.
   */
  async reportSources(): Promise<{
    objects: Listed[];
    events: EventLike[];
    secrets: V1Secret[];
    unreadable: string[];
  }> {
    const namespace = this.namespace;
    const apps = this.kc.makeApiClient(AppsV1Api);
    const batch = this.kc.makeApiClient(BatchV1Api);
    const policy = this.kc.makeApiClient(PolicyV1Api);
    const networking = this.kc.makeApiClient(NetworkingV1Api);
    const unreadable: string[] = [];
    const list = async <T>(kind: string, f: () => Promise<{ items: T[] }>): Promise<(T & Listed)[]> => {
      try {
        return (await f()).items.map((item) => ({ kind, ...item }) as T & Listed);
      } catch (err) {
        if (statusOf(err) !== 403) throw explain(err, `list ${kind}s`, this.server);
        unreadable.push(`${kind}s`);
        return [];
      }
    };
    const [kinds, events, secrets] = await Promise.all([
      Promise.all([
        list('Deployment', () => apps.listNamespacedDeployment({ namespace })),
        list('ReplicaSet', () => apps.listNamespacedReplicaSet({ namespace })),
        list('Job', () => batch.listNamespacedJob({ namespace })),
        list('Pod', () => this.core.listNamespacedPod({ namespace })),
        list('Service', () => this.core.listNamespacedService({ namespace })),
        list('ConfigMap', () => this.core.listNamespacedConfigMap({ namespace })),
        list('PodDisruptionBudget', () => policy.listNamespacedPodDisruptionBudget({ namespace })),
        list('NetworkPolicy', () => networking.listNamespacedNetworkPolicy({ namespace })),
      ]),
      list('Event', () => this.core.listNamespacedEvent({ namespace })),
      list('Secret', () => this.core.listNamespacedSecret({ namespace })),
    ]);
    return { objects: kinds.flat(), events, secrets, unreadable };
  }

  /** A worker path's answer through the Pod proxy, as it came (the bundle shows what was said). */
  async workerAnswer(pod: V1Pod, path: string): Promise<unknown> {
    const res = await this.proxyGet(pod, path);
    if (!res) return { error: 'no answer through the Pod proxy' };
    return res.status === 200 ? res.body : { status: res.status, body: res.body ?? null };
  }

  /** A GET through the API server's Pod proxy to the worker port; undefined when there is no answer. */
  private async proxyGet(pod: V1Pod, path: string): Promise<{ status: number; body: unknown } | undefined> {
    const name = `${pod.metadata?.name}:${PORTS.worker}`;
    const url = new URL(`${this.server}/api/v1/namespaces/${this.namespace}/pods/${name}/proxy${path}`);
    const options: RequestOptions = { method: 'GET', headers: { accept: 'application/json' } };
    await this.kc.applyToHTTPSOptions(options);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve) => {
      const req = send(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: safeJson(Buffer.concat(chunks).toString()) }),
        );
        res.on('error', () => resolve(undefined));
      });
      req.setTimeout(READ_TIMEOUT_MS, () => req.destroy());
      req.on('error', () => resolve(undefined));
      req.end();
    });
  }

  /** The worker reads of the operator, through the Pod proxy (the plugin runs outside the Pod network). */
  workerReads(): WorkerReads {
    return {
      probe: async (pod, path) => {
        const res = await this.proxyGet(pod, path);
        const body = healthResponseSchema.safeParse(res?.body);
        if (res?.status === 200 && body.data?.status === HEALTH_STATUS.ok) return 'healthy';
        return body.data?.status === HEALTH_STATUS.propagationStuck ? 'stuck' : 'unreachable';
      },
      producers: async (pod, since) => {
        const res = await this.proxyGet(pod, `${WORKER_PATHS.producers}?since=${encodeURIComponent(since)}`);
        return res?.status === 200 ? producersReportSchema.safeParse(res.body).data : undefined;
      },
      backfill: async (pod) => {
        const res = await this.proxyGet(pod, WORKER_PATHS.backfill);
        return res?.status === 200 ? backfillReportSchema.safeParse(res.body).data : undefined;
      },
      ingestionBacklog: async (pod) => {
        const res = await this.proxyGet(pod, WORKER_PATHS.ingestionBacklog);
        return res?.status === 200 ? ingestionBacklogSchema.safeParse(res.body).data : undefined;
      },
      jobResults: async (pod) => {
        const res = await this.proxyGet(pod, WORKER_PATHS.jobResults);
        return res?.status === 200 ? jobResultsReportSchema.safeParse(res.body).data : undefined;
      },
    };
  }

  /** The Pods of a Job, newest first (the Job controller labels them with the Job's name). */
  async jobPods(job: string): Promise<V1Pod[]> {
    const pods = await this.call(`list the Pods of Job ${job}`, () =>
      this.core.listNamespacedPod({
        namespace: this.namespace,
        labelSelector: `batch.kubernetes.io/job-name=${job}`,
      }),
    );
    const created = (p: V1Pod) => new Date(p.metadata?.creationTimestamp ?? 0).getTime();
    return pods.items.sort((a, b) => created(b) - created(a));
  }

  /** The log through the API server's Pod log endpoint. */
  podLog(pod: string, tail?: number, container?: string): Promise<string> {
    return this.call(`read the log of Pod ${pod}`, () =>
      this.core.readNamespacedPodLog({
        name: pod,
        namespace: this.namespace,
        ...(tail !== undefined ? { tailLines: tail } : {}),
        ...(container !== undefined ? { container } : {}),
      }),
    );
  }
}
