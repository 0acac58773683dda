// Runs one Pod bound to this node: gives it an address, credentials and an environment, runs its
// init containers then its containers, reports its status, and on deletion stops its processes
// (SIGTERM, SIGKILL after the grace period) before removing the Pod object, as the kubelet does.
import { execFile } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ApiException,
  type CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1Container,
  type V1Pod,
} from '@kubernetes/client-node';
import type { PodAddressPool } from '../network.ts';
import { type Backoff, ContainerRunner, type RestartPolicy } from './container.ts';
import { EnvError, type EnvSources, expand, resolveEnv } from './env.ts';
import { resolveImage } from './images.ts';
import type { ProbeContext } from './probes.ts';
import { type ApiEndpoint, writePodCredentials } from './service-account.ts';
import { ConditionClock, type PodSnapshot, podStatus } from './status.ts';

export const fieldManager = 'observatory-node-agent';

export interface PodWorkerContext {
  core: CoreV1Api;
  nodeName: string;
  hostIP: string;
  launcher: string;
  podsDir: string;
  api: ApiEndpoint;
  addresses: PodAddressPool;
  backoff: Backoff;
  log(message: string): void;
}

const isNotFound = (error: unknown) => error instanceof ApiException && error.code === 404;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Where a Pod's container logs live: stable by namespace and name so helpers can find them. */
export function containerLogPath(podsDir: string, namespace: string, pod: string, container: string): string {
  return join(podsDir, namespace, pod, `${container}.log`);
}

export class PodWorker {
  private pod: V1Pod;
  private readonly clock = new ConditionClock();
  private readonly snapshot: PodSnapshot;
  private readonly podDir: string;
  private terminating: Promise<void> | undefined;
  private stopped = false;
  /** Set once the agent lets go of the Pod: no more API calls for it. */
  private closed = false;
  private reportInFlight = false;
  private reportAgain = false;
  private lastReported = '';
  private deadlineTimer: NodeJS.Timeout | undefined;

  private readonly ctx: PodWorkerContext;

  constructor(ctx: PodWorkerContext, pod: V1Pod) {
    this.ctx = ctx;
    this.pod = pod;
    const restartPolicy = (pod.spec?.restartPolicy ?? 'Always') as RestartPolicy;
    this.podDir = join(ctx.podsDir, this.namespace, this.name);
    const runner = (container: V1Container, policy: RestartPolicy) =>
      new ContainerRunner(
        container,
        policy,
        ctx.backoff,
        () => this.graceSeconds() * 1000,
        () => this.probeContext(container),
        () => this.report(),
      );
    this.snapshot = {
      podIP: undefined,
      hostIP: ctx.hostIP,
      startTime: new Date(),
      restartPolicy,
      initialized: !pod.spec?.initContainers?.length,
      // Init containers run to completion; they are retried unless the Pod never restarts.
      init: (pod.spec?.initContainers ?? []).map((c) => ({
        runner: runner(c, restartPolicy === 'Never' ? 'Never' : 'OnFailure'),
        image: c.image ?? '',
      })),
      containers: (pod.spec?.containers ?? []).map((c) => ({
        runner: runner(c, restartPolicy),
        image: c.image ?? '',
      })),
    };
  }

  get name(): string {
    return this.pod.metadata?.name ?? '';
  }

  get namespace(): string {
    return this.pod.metadata?.namespace ?? 'default';
  }

  get uid(): string {
    return this.pod.metadata?.uid ?? '';
  }

  /** Process ids of running containers (for tests that check nothing is left behind). */
  pids(): number[] {
    return [...this.snapshot.init, ...this.snapshot.containers]
      .filter(({ runner }) => runner.state.running)
      .map(({ runner }) => runner.pid)
      .filter((pid): pid is number => pid !== undefined);
  }

  /** A newer version of the Pod object arrived from the watch. */
  update(pod: V1Pod): void {
    this.pod = pod;
    if (pod.metadata?.deletionTimestamp) void this.terminate();
  }

  /** Runs the Pod until it finishes or is deleted. */
  async run(): Promise<void> {
    if (this.pod.metadata?.deletionTimestamp) return this.terminate();
    this.snapshot.podIP = this.ctx.addresses.allocate();
    this.armDeadline();
    await mkdir(this.podDir, { recursive: true });
    this.report();
    const kubeconfig = await this.retry('service account token', () =>
      writePodCredentials(this.ctx.core, this.pod, this.podDir, this.ctx.api),
    );
    if (this.stopped) return;

    for (const entry of this.snapshot.init) {
      if (!(await this.startContainer(entry.runner, kubeconfig))) return;
      await entry.runner.done();
      if (this.stopped) return;
      if (entry.runner.state.terminated?.exitCode !== 0) {
        this.snapshot.failure = {
          reason: 'InitContainerFailed',
          message: `init container ${entry.runner.spec.name} failed`,
        };
        this.report();
        return;
      }
    }
    this.snapshot.initialized = true;
    this.report();
    await Promise.all(this.snapshot.containers.map(({ runner }) => this.startContainer(runner, kubeconfig)));
  }

  /** The Pod is being deleted: stop its processes within the grace period, then remove it. */
  terminate(): Promise<void> {
    this.terminating ??= (async () => {
      const graceMs = this.graceSeconds() * 1000;
      await this.stopContainers(graceMs);
      await this.flushReport();
      try {
        await this.ctx.core.deleteNamespacedPod({
          name: this.name,
          namespace: this.namespace,
          // With a body the API server ignores query parameters: the grace period goes in the body.
          body: { gracePeriodSeconds: 0, preconditions: { uid: this.uid } },
        });
      } catch (error) {
        if (!isNotFound(error) && !(error instanceof ApiException && error.code === 409)) {
          this.ctx.log(`deleting pod ${this.namespace}/${this.name}: ${(error as Error).message}`);
        }
      }
      this.release();
    })();
    return this.terminating;
  }

  /** The Pod object is gone (or the agent stops): end its processes without talking to the API. */
  async forget(graceMs: number): Promise<void> {
    this.closed = true;
    await this.stopContainers(graceMs);
    this.release();
  }

  private async stopContainers(graceMs: number): Promise<void> {
    this.stopped = true;
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    const all = [...this.snapshot.init, ...this.snapshot.containers];
    await Promise.all(all.map(({ runner }) => runner.stop(graceMs)));
  }

  private release(): void {
    if (this.snapshot.podIP) this.ctx.addresses.release(this.snapshot.podIP);
  }

  private graceSeconds(): number {
    return (
      this.pod.metadata?.deletionGracePeriodSeconds ?? this.pod.spec?.terminationGracePeriodSeconds ?? 30
    );
  }

  private armDeadline(): void {
    const seconds = this.pod.spec?.activeDeadlineSeconds;
    if (!seconds) return;
    this.deadlineTimer = setTimeout(() => {
      this.snapshot.failure = {
        reason: 'DeadlineExceeded',
        message: `Pod was active on the node longer than the specified deadline`,
      };
      void this.stopContainers(this.graceSeconds() * 1000).then(() => this.report());
    }, seconds * 1000);
  }

  /** Retries transient API failures (e.g. the Node authorizer's graph not yet knowing the Pod). */
  private async retry<T>(what: string, fn: () => Promise<T>): Promise<T | undefined> {
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        return await fn();
      } catch (error) {
        if (attempt % 10 === 0)
          this.ctx.log(`pod ${this.namespace}/${this.name}: ${what}: ${(error as Error).message}`);
        await sleep(Math.min(200 * 2 ** attempt, 2000));
      }
    }
    return undefined;
  }

  private envSources(): EnvSources {
    const { core } = this.ctx;
    return {
      configMap: (namespace, name) =>
        core.readNamespacedConfigMap({ name, namespace }).catch((error: unknown) => {
          if (isNotFound(error)) return undefined;
          throw error;
        }),
      secret: (namespace, name) =>
        core.readNamespacedSecret({ name, namespace }).catch((error: unknown) => {
          if (isNotFound(error)) return undefined;
          throw error;
        }),
    };
  }

  private baseEnv(kubeconfig: string | undefined): Record<string, string> {
    const { host, port } = this.ctx.api;
    // What every container sees: in-cluster API coordinates, and no environment of the harness.
    const env: Record<string, string> = {
      PATH: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: this.podDir,
      HOSTNAME: this.name,
      KUBERNETES_SERVICE_HOST: host,
      KUBERNETES_SERVICE_PORT: String(port),
      KUBERNETES_SERVICE_PORT_HTTPS: String(port),
      KUBERNETES_PORT: `tcp://${host}:${port}`,
    };
    if (kubeconfig) env['KUBECONFIG'] = kubeconfig;
    return env;
  }

  /** Resolves image and environment and starts the container; false when the Pod stopped meanwhile. */
  private async startContainer(runner: ContainerRunner, kubeconfig: string | undefined): Promise<boolean> {
    const spec = runner.spec;
    const podIP = this.snapshot.podIP as string;
    for (let attempt = 0; !this.stopped; attempt++) {
      let env: Record<string, string>;
      try {
        env = await resolveEnv(
          this.pod,
          spec,
          { podIP, hostIP: this.ctx.hostIP },
          this.envSources(),
          this.baseEnv(kubeconfig),
        );
      } catch (error) {
        // Missing Secret/ConfigMap keys are retried: they may be created after the Pod.
        const message = error instanceof EnvError ? error.message : `${(error as Error).message}`;
        runner.setWaiting('CreateContainerConfigError', message);
        await sleep(Math.min(500 * 2 ** attempt, 5000));
        continue;
      }
      const command = spec.command?.map((part) => expand(part, env));
      const args = spec.args?.map((part) => expand(part, env));
      const image = resolveImage(spec.image ?? '', command, args, podIP);
      if (!image.ok) {
        runner.setWaiting(image.reason, image.message);
        this.ctx.log(`pod ${this.namespace}/${this.name} container ${spec.name}: ${image.message}`);
        return false;
      }
      runner.start({
        launcher: this.ctx.launcher,
        command: image.command,
        env: { ...image.command.defaultEnv, ...env },
        cwd: image.command.cwd ?? this.podDir,
        logPath: containerLogPath(this.ctx.podsDir, this.namespace, this.name, spec.name),
      });
      return true;
    }
    return false;
  }

  private probeContext(container: V1Container): ProbeContext {
    return {
      podIP: this.snapshot.podIP ?? '127.0.0.1',
      ports: container.ports ?? [],
      exec: async (command, timeoutMs) => {
        const image = resolveImage(container.image ?? '', command, [], this.snapshot.podIP ?? '');
        if (!image.ok) return 126;
        return new Promise((resolve) => {
          execFile(
            image.command.file,
            image.command.args,
            { timeout: timeoutMs, cwd: this.podDir },
            (error) => resolve(error ? (typeof error.code === 'number' ? error.code : 1) : 0),
          );
        });
      },
    };
  }

  /** Asks for a status report; reports are sent one at a time, coalescing changes made meanwhile. */
  private report(): void {
    this.reportAgain = true;
    if (!this.reportInFlight) void this.sendReports();
  }

  private async flushReport(): Promise<void> {
    this.report();
    while (this.reportInFlight) await sleep(20);
  }

  private async sendReports(): Promise<void> {
    this.reportInFlight = true;
    try {
      while (this.reportAgain && !this.closed) {
        this.reportAgain = false;
        const status = podStatus(this.snapshot, this.clock);
        const body = JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: this.name, namespace: this.namespace },
          status,
        });
        if (body === this.lastReported) continue;
        try {
          await this.ctx.core.patchNamespacedPodStatus(
            { name: this.name, namespace: this.namespace, body: JSON.parse(body), fieldManager, force: true },
            setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
          );
          this.lastReported = body;
        } catch (error) {
          if (isNotFound(error)) return;
          this.ctx.log(`pod ${this.namespace}/${this.name}: status update: ${(error as Error).message}`);
          await sleep(500);
          this.reportAgain = true;
        }
      }
    } finally {
      this.reportInFlight = false;
    }
  }
}

/** Reads a container's log file (all runs of the container, stdout and stderr interleaved). */
export async function readContainerLog(podsDir: string, namespace: string, pod: string, container: string) {
  return readFile(containerLogPath(podsDir, namespace, pod, container), 'utf8');
}
