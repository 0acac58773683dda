/**
 * One whole deployment on the local cluster, as a cluster admin would make it: PostgreSQL, Redis
 * and the analytics server (ClickHouse over HTTP) run on this machine bound to the node IP and
 * appear in the namespace as the Services `postgres`, `redis` and `clickhouse` (no selector, an
 * EndpointSlice naming the node IP), so Pods use `*.svc.cluster.local` names; the `datastores`
 * Secret holds those in-cluster URLs; both namespaces enforce the restricted Pod Security Standard; `helm install` of charts/observatory runs the operator as a
 * Pod of the image observatory:dev. This process reaches the datastores by the node IP and the
 * Pods by their Services' ClusterIPs or Pod IPs (kube-proxy serves both from the host).
 * stop() removes everything it made, so the next deployment starts on a clean cluster.
 */
import { spawnSync } from 'node:child_process';
import { CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { type AnalyticsServer, startAnalyticsServer } from '../datastores/analytics-server.ts';
import { type PostgresFixture, startPostgres } from '../datastores/postgres.ts';
import { type RedisFixture, startRedis } from '../datastores/redis.ts';
import { helm } from '../helm.ts';
import type { LocalClusterClient } from '../local-cluster.ts';
import { cli } from '../observatory-cli.ts';
import { chartDir } from '../paths.ts';
import { waitFor } from '../wait.ts';
import type { Obsvc, Platform, Project, RunResult } from './scenario.ts';

/** Where the chart installs the operator. */
export const OPERATOR_NAMESPACE = 'observatory-system';
export const OPERATOR_RELEASE = 'obs';
const CRD = 'observabilityservices.observatory.dev';

/**
 * Every namespace a deployment makes enforces the restricted Pod Security Standard: the API
 * server itself refuses a Pod of the operator, the service or a Job that does not conform.
 */
export const RESTRICTED_LABELS = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/enforce-version': 'latest',
};

/** Each host datastore as a Service on its usual port, backed by the node IP and the real port. */
function datastoreServices(
  ns: string,
  nodeIP: string,
  ports: Record<string, { port: number; hostPort: number }>,
) {
  return Object.entries(ports).flatMap(([name, { port, hostPort }]) => [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: ns, labels: { 'app.kubernetes.io/name': name } },
      spec: { ports: [{ name, port, targetPort: hostPort, protocol: 'TCP' }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: `${name}-host`,
        namespace: ns,
        labels: {
          'kubernetes.io/service-name': name,
          // Not the EndpointSlice controller's: a Service without selector is left to its owner.
          'endpointslice.kubernetes.io/managed-by': 'observatory-local-deployment',
        },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: [nodeIP], conditions: { ready: true } }],
      ports: [{ name, port: hostPort, protocol: 'TCP' }],
    },
  ]);
}

const portOf = (url: string) => Number(new URL(url).port);

export interface DeploymentEvent {
  type: string;
  reason: string;
  message: string;
  involvedObject: { name: string };
}

export class LocalDeployment {
  readonly cluster: LocalClusterClient;
  readonly ns: string;
  pg!: PostgresFixture;
  redis!: RedisFixture;
  ch!: AnalyticsServer;
  private chartInstalled = false;

  private constructor(cluster: LocalClusterClient, ns: string) {
    this.cluster = cluster;
    this.ns = ns;
  }

  /** The datastores on the node IP, the namespace with their Services and the `datastores` Secret. */
  static async start(cluster: LocalClusterClient, ns = 'obs'): Promise<LocalDeployment> {
    const d = new LocalDeployment(cluster, ns);
    const host = { host: cluster.nodeIP };
    const started = await Promise.allSettled([
      startPostgres(host),
      startRedis(host),
      startAnalyticsServer(host),
    ]);
    const [pg, redis, ch] = started;
    if (pg.status === 'rejected' || redis.status === 'rejected' || ch.status === 'rejected') {
      await Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.stop() : undefined)));
      throw (started.find((s) => s.status === 'rejected') as PromiseRejectedResult).reason;
    }
    [d.pg, d.redis, d.ch] = [pg.value, redis.value, ch.value];
    try {
      const core = d.core();
      await core.createNamespace({ body: { metadata: { name: ns, labels: RESTRICTED_LABELS } } });
      const services = datastoreServices(ns, cluster.nodeIP, {
        postgres: { port: 5432, hostPort: portOf(d.pg.url) },
        redis: { port: 6379, hostPort: portOf(d.redis.url) },
        clickhouse: { port: 8123, hostPort: portOf(d.ch.url) },
      });
      await cluster.kubectl(['apply', '-f', '-'], services.map((o) => stringify(o)).join('---\n'));
      const svc = (name: string) => `${name}.${ns}.svc.cluster.local`;
      await core.createNamespacedSecret({
        namespace: ns,
        body: {
          metadata: { name: 'datastores' },
          stringData: {
            database: `postgres://postgres@${svc('postgres')}:5432/postgres`,
            clickhouse: `http://${svc('clickhouse')}:8123`,
            redis: `redis://${svc('redis')}:6379`,
          },
        },
      });
      await waitFor('default service account', () =>
        core.readNamespacedServiceAccount({ name: 'default', namespace: ns }),
      );
    } catch (error) {
      await d.stop();
      throw error;
    }
    return d;
  }

  core() {
    return this.cluster.kubeconfig.makeApiClient(CoreV1Api);
  }

  custom() {
    return this.cluster.kubeconfig.makeApiClient(CustomObjectsApi);
  }

  /**
   * helm install of the chart: the operator as a Pod of image observatory:dev watching this
   * namespace, in a restricted namespace made here; `valuesFile` adds the caller's values.
   */
  async installChart(valuesFile?: string): Promise<void> {
    this.chartInstalled = true;
    const created = this.kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: OPERATOR_NAMESPACE, labels: RESTRICTED_LABELS },
      }),
    );
    if (created.code !== 0) throw new Error(`operator namespace: ${created.stderr}`);
    const r = await helm([
      'install',
      OPERATOR_RELEASE,
      chartDir,
      '--kubeconfig',
      this.cluster.kubeconfigPath,
      '--namespace',
      OPERATOR_NAMESPACE,
      '--create-namespace',
      '--set',
      'image.tag=dev',
      '--set',
      `operator.watchNamespace=${this.ns}`,
      '--set-json',
      'operator.extraEnv=[{"name":"LOG_LEVEL","value":"warn"}]',
      ...(valuesFile ? ['--values', valuesFile] : []),
      '--wait',
      '--timeout',
      '3m',
    ]);
    if (r.code !== 0) throw new Error(`helm install failed: ${r.stderr}\n${await this.operatorOutput()}`);
  }

  async operatorPods(): Promise<V1Pod[]> {
    const list = await this.core().listNamespacedPod({
      namespace: OPERATOR_NAMESPACE,
      labelSelector: `app.kubernetes.io/instance=${OPERATOR_RELEASE}`,
    });
    return list.items.filter((p) => !p.metadata?.deletionTimestamp);
  }

  /** Deletes the chart's operator Pod (its Deployment makes a new one); returns the deleted name. */
  async deleteOperatorPod(): Promise<string> {
    const [pod] = await this.operatorPods();
    const name = pod?.metadata?.name;
    if (!name) throw new Error('no operator pod to delete');
    await this.core().deleteNamespacedPod({ name, namespace: OPERATOR_NAMESPACE, gracePeriodSeconds: 0 });
    return name;
  }

  /** The last lines of the operator Pod's log (kubectl logs, through the kubelet). */
  async operatorOutput(): Promise<string> {
    const [pod] = await this.operatorPods().catch(() => []);
    if (!pod?.metadata?.name) return '(no operator pod)';
    const r = this.kubectl(['logs', '-n', OPERATOR_NAMESPACE, pod.metadata.name, '--tail=60']);
    return (r.stdout || r.stderr).slice(-3_000);
  }

  /** `kubectl` of the cluster's own release, with an optional manifest on stdin. */
  kubectl(args: string[], stdin?: string): RunResult {
    const r = spawnSync(this.cluster.kubectlPath, ['--kubeconfig', this.cluster.kubeconfigPath, ...args], {
      input: stdin,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  }

  /** The namespace's Events that match a field selector (e.g. `reason=X`), as kubectl lists them. */
  events(fieldSelector: string): DeploymentEvent[] {
    const r = this.kubectl(['get', 'events', '-n', this.ns, '--field-selector', fieldSelector, '-o', 'json']);
    if (r.code !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout).items as DeploymentEvent[];
  }

  apply(manifest: object): RunResult {
    return this.kubectl(
      ['apply', '--server-side', '--field-manager=test', '-f', '-'],
      JSON.stringify(manifest),
    );
  }

  async get(name: string): Promise<Obsvc> {
    return (await this.custom().getNamespacedCustomObject({
      group: 'observatory.dev',
      version: 'v1alpha1',
      plural: 'observabilityservices',
      namespace: this.ns,
      name,
    })) as Obsvc;
  }

  async waitFor(
    name: string,
    what: string,
    check: (o: Obsvc) => boolean,
    timeoutMs = 300_000,
  ): Promise<Obsvc> {
    let last: Obsvc | undefined;
    try {
      return await waitFor(
        what,
        async () => {
          last = await this.get(name);
          return check(last) ? last : undefined;
        },
        { timeoutMs, intervalMs: 1_000 },
      );
    } catch (err) {
      const out = await this.operatorOutput();
      throw new Error(
        `${(err as Error).message}\nstatus: ${JSON.stringify(last?.status, null, 1)}\noperator: ${out}`,
      );
    }
  }

  async pods(component: string): Promise<V1Pod[]> {
    const list = await this.core().listNamespacedPod({
      namespace: this.ns,
      labelSelector: `app.kubernetes.io/component=${component}`,
    });
    return list.items.filter((p) => !p.metadata?.deletionTimestamp);
  }

  /** The address of a ready Pod of the role. */
  async podIP(component: string): Promise<string> {
    return waitFor(
      `a ready ${component} pod`,
      async () => {
        const ready = (await this.pods(component)).find((p) =>
          p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        );
        return ready?.status?.podIP;
      },
      { timeoutMs: 120_000 },
    );
  }

  /** The web Service (by its ClusterIP) of the namespace, once a web Pod is ready behind it. */
  async webUrl(): Promise<string> {
    await this.podIP('web');
    const services = await this.core().listNamespacedService({
      namespace: this.ns,
      labelSelector: 'app.kubernetes.io/component=web',
    });
    const [service] = services.items;
    if (!service?.spec?.clusterIP) throw new Error(`no web Service in ${this.ns}`);
    return `http://${service.spec.clusterIP}:${service.spec.ports?.[0]?.port}`;
  }

  /** Removes the namespace (and with it every Pod), the chart's release, its namespace and CRD. */
  async stop(): Promise<void> {
    const errors: string[] = [];
    const attempt = (what: string, r: RunResult) => {
      if (r.code !== 0 && !/not found|NotFound/.test(r.stderr)) errors.push(`${what}: ${r.stderr.trim()}`);
    };
    attempt('delete namespace', this.kubectl(['delete', 'namespace', this.ns, '--wait', '--timeout=180s']));
    if (this.chartInstalled) {
      attempt(
        'helm uninstall',
        await helm([
          'uninstall',
          OPERATOR_RELEASE,
          '--kubeconfig',
          this.cluster.kubeconfigPath,
          '--namespace',
          OPERATOR_NAMESPACE,
          '--wait',
          '--timeout',
          '2m',
        ]),
      );
      // Kept by the chart's resource policy on uninstall; the next install starts from none.
      attempt('delete CRD', this.kubectl(['delete', 'crd', CRD, '--wait', '--timeout=60s']));
      attempt(
        'delete operator namespace',
        this.kubectl(['delete', 'namespace', OPERATOR_NAMESPACE, '--wait', '--timeout=180s']),
      );
    }
    await Promise.all([this.ch?.stop(), this.pg?.stop(), this.redis?.stop()]);
    if (errors.length) throw new Error(`local deployment cleanup: ${errors.join('; ')}`);
  }
}

/** The local deployment as the scenario's Platform. */
export function localPlatform(d: LocalDeployment): Platform {
  return {
    ns: d.ns,
    kubectl: (args, stdin) => d.kubectl(args, stdin),
    get: (name) => d.get(name),
    waitFor: (name, what, check, timeoutMs) => d.waitFor(name, what, check, timeoutMs),
    webUrl: () => d.webUrl(),
    query: async <T>(sql: string, params?: Record<string, unknown>) => {
      const rs = await d.ch.client.query({
        query: sql,
        format: 'JSONEachRow',
        ...(params ? { query_params: params } : {}),
      });
      return rs.json<T>();
    },
    createProject: async (name): Promise<Project> => {
      const r = await cli(['create-project', '--name', name, '--json'], {
        DATABASE_URL: d.pg.url,
        SERVICE_RELEASE: '3',
      });
      if (r.code !== 0) throw new Error(`create-project failed: ${r.stderr}`);
      return JSON.parse(r.stdout) as Project;
    },
  };
}

// The Service and EndpointSlice of a host process, for the other host servers a walk adds (S3).
export { datastoreServices };
