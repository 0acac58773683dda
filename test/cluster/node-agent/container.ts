// One container of a Pod as a local process: starts it, restarts it by the Pod's restart policy
// with exponential backoff, runs its startup/liveness/readiness probes and keeps the state the
// kubelet reports (waiting/running/terminated, last state, restart count, started, ready).
import { constants } from 'node:os';
import type { V1Container, V1ContainerState } from '@kubernetes/client-node';
import { type Supervised, startProcess } from '../../../cluster/processes.ts';
import type { LocalCommand } from './images.ts';
import { type ProbeContext, ProbeLoop } from './probes.ts';

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

export interface ContainerLaunch {
  /** The control-plane binary, whose `exec` subcommand ties the process's life to ours. */
  launcher: string;
  command: LocalCommand;
  env: Record<string, string>;
  cwd: string;
  logPath: string;
}

export interface Backoff {
  baseMs: number;
  maxMs: number;
}

const now = () => new Date();

export class ContainerRunner {
  state: V1ContainerState = { waiting: { reason: 'ContainerCreating' } };
  lastState: V1ContainerState = {};
  restartCount = 0;
  ready = false;
  started = false;
  pid: number | undefined;

  private process: Supervised | undefined;
  private launch: ContainerLaunch | undefined;
  private probes: Array<{ stop(): void }> = [];
  private stopping = false;
  private crashes = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private doneWaiters: Array<() => void> = [];

  readonly spec: V1Container;
  private readonly policy: RestartPolicy;
  private readonly backoff: Backoff;
  private readonly graceMs: () => number;
  private readonly probeContext: () => ProbeContext;
  private readonly onChange: () => void;

  constructor(
    spec: V1Container,
    policy: RestartPolicy,
    backoff: Backoff,
    graceMs: () => number,
    probeContext: () => ProbeContext,
    onChange: () => void,
  ) {
    this.spec = spec;
    this.policy = policy;
    this.backoff = backoff;
    this.graceMs = graceMs;
    this.probeContext = probeContext;
    this.onChange = onChange;
  }

  /** Not started: the image or configuration could not be resolved (the kubelet's waiting reasons). */
  setWaiting(reason: string, message: string): void {
    this.state = { waiting: { reason, message } };
    this.onChange();
  }

  start(launch: ContainerLaunch): void {
    this.launch = launch;
    this.spawn();
  }

  /** Whether the container has exited and will not be started again. */
  get finished(): boolean {
    return (
      this.state.terminated !== undefined &&
      (this.stopping || !this.willRestart(this.state.terminated.exitCode))
    );
  }

  /** Resolves once the container is finished (see `finished`). */
  done(): Promise<void> {
    if (this.finished) return Promise.resolve();
    return new Promise((resolve) => this.doneWaiters.push(resolve));
  }

  /** Stops for good: no more restarts; SIGTERM, then SIGKILL after graceMs. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.stopProbes();
    if (this.process) await this.process.stop(graceMs);
    if (this.state.waiting && this.restartCount > 0) {
      // Stopped during backoff: report the last run as the final state.
      this.state = this.lastState;
    }
    this.settle();
  }

  private willRestart(exitCode: number): boolean {
    if (this.policy === 'Always') return true;
    if (this.policy === 'OnFailure') return exitCode !== 0;
    return false;
  }

  private spawn(): void {
    const launch = this.launch;
    if (!launch || this.stopping) return;
    const startedAt = now();
    const process = startProcess({
      name: this.spec.name,
      file: launch.launcher,
      args: ['exec', '--', launch.command.file, ...launch.command.args],
      env: { ...launch.env, CONTROLPLANE_PARENT_PID: String(globalThis.process.pid) },
      cwd: launch.cwd,
      logPath: launch.logPath,
    });
    this.process = process;
    this.pid = process.pid;
    this.state = { running: { startedAt } };
    this.ready = false;
    this.started = !this.spec.startupProbe;
    this.startProbes();
    this.onChange();
    void process.exited.then(({ code, signal }) => {
      if (this.process !== process) return;
      this.stopProbes();
      const exitCode = code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0);
      this.state = {
        terminated: {
          exitCode,
          ...(signal ? { signal: constants.signals[signal] } : {}),
          reason: exitCode === 0 ? 'Completed' : 'Error',
          startedAt,
          finishedAt: now(),
          containerID: `local://${process.pid}`,
        },
      };
      this.ready = false;
      this.afterExit(exitCode, Date.now() - startedAt.getTime());
    });
  }

  private afterExit(exitCode: number, ranMs: number): void {
    if (this.stopping || !this.willRestart(exitCode)) {
      this.onChange();
      this.settle();
      return;
    }
    // A container that ran for a while starts its backoff afresh, as the kubelet's does.
    if (ranMs > 60_000) this.crashes = 0;
    const delay =
      this.crashes === 0 ? 0 : Math.min(this.backoff.baseMs * 2 ** (this.crashes - 1), this.backoff.maxMs);
    this.crashes++;
    this.lastState = this.state;
    this.restartCount++;
    if (delay > 0) {
      this.state = {
        waiting: {
          reason: 'CrashLoopBackOff',
          message: `back-off ${Math.round(delay / 1000)}s restarting failed container=${this.spec.name}`,
        },
      };
    }
    this.onChange();
    this.restartTimer = setTimeout(() => this.spawn(), delay);
  }

  private settle(): void {
    if (!this.finished) return;
    for (const resolve of this.doneWaiters.splice(0)) resolve();
  }

  private startProbes(): void {
    const ctx = this.probeContext();
    const { startupProbe, livenessProbe, readinessProbe } = this.spec;
    const afterStartup = () => {
      if (livenessProbe) {
        this.addProbe(
          new ProbeLoop(livenessProbe, ctx, true, (ok) => {
            if (!ok) this.kill(livenessProbe.terminationGracePeriodSeconds);
          }),
        );
      }
      if (readinessProbe) {
        this.addProbe(
          new ProbeLoop(readinessProbe, ctx, false, (ok) => {
            this.ready = ok;
            this.onChange();
          }),
        );
      } else {
        this.ready = true;
      }
    };
    if (startupProbe) {
      const loop = new ProbeLoop(startupProbe, ctx, false, (ok) => {
        if (!ok) return;
        loop.stop();
        this.started = true;
        afterStartup();
        this.onChange();
      });
      this.addProbe(loop);
      // A startup probe that keeps failing gets the container restarted.
      const limitMs =
        ((startupProbe.initialDelaySeconds ?? 0) +
          (startupProbe.periodSeconds ?? 10) * (startupProbe.failureThreshold ?? 3)) *
        1000;
      const guard = setTimeout(() => {
        if (!this.started && this.state.running) this.kill(startupProbe.terminationGracePeriodSeconds);
      }, limitMs);
      this.probes.push({ stop: () => clearTimeout(guard) });
    } else {
      afterStartup();
    }
  }

  private addProbe(loop: ProbeLoop): void {
    this.probes.push(loop);
    loop.start();
  }

  private stopProbes(): void {
    for (const loop of this.probes.splice(0)) loop.stop();
  }

  /** Failed liveness/startup: end this run; the restart policy decides what comes next. */
  private kill(graceSeconds: number | undefined): void {
    this.stopProbes();
    void this.process?.stop(graceSeconds !== undefined ? graceSeconds * 1000 : this.graceMs());
  }
}
