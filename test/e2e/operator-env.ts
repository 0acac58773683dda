/**
 * One whole deployment for operator end-to-end tests: real PostgreSQL, Redis and the ClickHouse
 * engine on loopback, the local Kubernetes cluster with the project's CRDs, a namespace with the
 * datastore Secret, and the operator as a process that can be killed and restarted at will.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { controlPlaneDir } from '../../cluster/control-plane-binary.ts';
import { waitFor } from '../../cluster/wait.ts';
import { helm } from '../chart/helm.ts';
import { type Cluster, startCluster } from '../cluster/harness.ts';
import { freePort } from '../fixtures/ports.ts';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';
import { type ManagedProcess, startProcess } from '../fixtures/processes.ts';
import { type RedisFixture, startRedis } from '../fixtures/redis.ts';
import { type AnalyticsServer, ROOT, startAnalyticsServer } from '../fixtures/service.ts';
import { chartDir } from '../tools/paths.ts';

/** Where the chart installs the operator when a Deployment uses `{ operator: 'chart' }`. */
export const OPERATOR_NAMESPACE = 'observatory-system';
export const OPERATOR_RELEASE = 'obs';

export interface Obsvc {
  metadata: { name: string; namespace: string; generation: number; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
  status?: {
    state?: string;
    phase?: string;
    observedGeneration?: number;
    conditions?: {
      type: string;
      status: string;
      reason: string;
      message: string;
      observedGeneration?: number;
    }[];
    backfill?: { completedSteps?: number; progress?: string; currentJob?: string };
    blockedBy?: string[];
  };
}

export class Deployment {
  cluster!: Cluster;
  pg!: PostgresFixture;
  redis!: RedisFixture;
  ch!: AnalyticsServer;
  ns = 'obs';
  operator: ManagedProcess | undefined;
  operatorStarts = 0;
  operatorPorts = { health: 0, metrics: 0 };

  /** 'process': the operator runs beside the cluster (startOperator); 'chart': helm installs it as a Pod. */
  mode: 'process' | 'chart' = 'process';

  static async start(
    ns = 'obs',
    options: { operator?: 'process' | 'chart'; log?: (line: string) => void } = {},
  ): Promise<Deployment> {
    const d = new Deployment();
    d.ns = ns;
    d.mode = options.operator ?? 'process';
    [d.pg, d.redis, d.ch, d.cluster] = await Promise.all([
      startPostgres(),
      startRedis(),
      startAnalyticsServer(),
      startCluster({
        restartBackoff: { baseMs: 500, maxMs: 5_000 },
        // With the chart, the CRD comes from the chart (helm refuses to adopt one it did not create).
        ...(d.mode === 'chart' ? { crdDirs: [] } : {}),
        ...(options.log ? { log: options.log } : {}),
      }),
    ]);
    const core = d.core();
    await core.createNamespace({ body: { metadata: { name: ns } } });
    await core.createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: { name: 'datastores' },
        stringData: { database: d.pg.url, clickhouse: d.ch.url, redis: d.redis.url },
      },
    });
    await waitFor('default service account', () =>
      core.readNamespacedServiceAccount({ name: 'default', namespace: ns }),
    );
    return d;
  }

  core() {
    return this.cluster.kubeconfig.makeApiClient(CoreV1Api);
  }

  /** helm install of the chart: the operator as a Pod of image observatory:dev watching this namespace. */
  async installChart(): Promise<void> {
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
      '--wait',
      '--timeout',
      '3m',
    ]);
    if (r.code !== 0) throw new Error(`helm install failed: ${r.stderr}`);
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

  /** The last lines of the operator's output, from the process or the chart's Pod. */
  async operatorOutput(): Promise<string> {
    if (this.mode === 'process') return this.operator?.output().slice(-3_000) ?? '';
    const [pod] = await this.operatorPods();
    if (!pod?.metadata?.name) return '(no operator pod)';
    return (await this.cluster.logs(OPERATOR_NAMESPACE, pod.metadata.name, 'operator').catch(() => '')).slice(
      -3_000,
    );
  }
  custom() {
    return this.cluster.kubeconfig.makeApiClient(CustomObjectsApi);
  }

  async startOperator(): Promise<void> {
    const [health, metrics] = [await freePort(), await freePort()];
    this.operatorPorts = { health, metrics };
    this.operatorStarts++;
    this.operator = startProcess(
      'operator',
      process.execPath,
      [join(ROOT, 'server/bin/observatory.ts'), 'operator'],
      {
        env: {
          PATH: process.env['PATH'],
          HOME: process.env['HOME'],
          KUBECONFIG: this.cluster.kubeconfigPath,
          OPERATOR_WATCH_NAMESPACE: this.ns,
          OPERATOR_NAMESPACE: this.ns,
          OPERATOR_HEALTH_PORT: String(health),
          OPERATOR_METRICS_PORT: String(metrics),
          OPERATOR_BIND_ADDRESS: '127.0.0.1',
          POD_NAME: `operator-${this.operatorStarts}`,
          LOG_LEVEL: 'warn',
        },
      },
    );
  }

  /** SIGKILL, as a crash or a node loss would: no lease release, no cleanup. */
  async killOperator(): Promise<void> {
    await this.operator?.kill('SIGKILL');
    this.operator = undefined;
  }

  /** `kubectl` of the cluster's own release, with an optional manifest on stdin. */
  kubectl(args: string[], stdin?: string): { code: number; stdout: string; stderr: string } {
    const r = spawnSync(
      join(controlPlaneDir, 'kubectl'),
      ['--kubeconfig', this.cluster.kubeconfigPath, ...args],
      {
        input: stdin,
        encoding: 'utf8',
      },
    );
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  }

  apply(manifest: object): { code: number; stdout: string; stderr: string } {
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

  /** The address of a ready pod of the role. */
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

  writeDebug(file: string, content: string): void {
    writeFileSync(file, content);
  }

  async stop(): Promise<void> {
    await this.killOperator();
    await this.cluster?.stop();
    await Promise.all([this.ch?.stop(), this.pg?.stop(), this.redis?.stop()]);
  }
}

export const condition = (o: Obsvc, type: string) => o.status?.conditions?.find((c) => c.type === type);
export const isTrue = (o: Obsvc, type: string) => condition(o, type)?.status === 'True';

/** The datastore settings every ObservabilityService of these tests uses. */
export const DATASTORES = {
  postgres: { urlSecretRef: { name: 'datastores', key: 'database' } },
  clickhouse: { urlSecretRef: { name: 'datastores', key: 'clickhouse' } },
  redis: { urlSecretRef: { name: 'datastores', key: 'redis' } },
};
