// Probes performed for real against the Pod's address, with the kubelet's timing rules
// (initial delay, period, timeout, success and failure thresholds).
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { V1ContainerPort, V1Probe } from '@kubernetes/client-node';

export interface ProbeOutcome {
  ok: boolean;
  message?: string;
}

export interface ProbeContext {
  podIP: string;
  ports: V1ContainerPort[];
  /** Runs an exec probe's command in the container's environment; resolves with its exit code. */
  exec(command: string[], timeoutMs: number): Promise<number>;
}

function resolvePort(port: number | string | undefined, ports: V1ContainerPort[]): number {
  if (typeof port === 'number') return port;
  if (port !== undefined && /^\d+$/.test(port)) return Number(port);
  const named = ports.find((p) => p.name === port);
  if (!named) throw new Error(`port ${JSON.stringify(port)} is not a container port`);
  return named.containerPort;
}

function httpGet(probe: V1Probe, ctx: ProbeContext, timeoutMs: number): Promise<ProbeOutcome> {
  const spec = probe.httpGet!;
  const https = spec.scheme?.toUpperCase() === 'HTTPS';
  const headers: Record<string, string> = { 'user-agent': 'kube-probe/1.36', accept: '*/*' };
  for (const header of spec.httpHeaders ?? []) headers[header.name] = header.value;
  const options = {
    host: spec.host || ctx.podIP,
    port: resolvePort(spec.port, ctx.ports),
    path: spec.path || '/',
    method: 'GET',
    headers,
    timeout: timeoutMs,
    rejectUnauthorized: false, // the kubelet does not verify probe certificates either
  };
  return new Promise((resolve) => {
    const req = (https ? httpsRequest : httpRequest)(options, (res) => {
      res.resume();
      const code = res.statusCode ?? 0;
      // 2xx and 3xx are success, as for the kubelet.
      resolve(
        code >= 200 && code < 400
          ? { ok: true }
          : { ok: false, message: `HTTP probe failed with statuscode: ${code}` },
      );
    });
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs}ms`)));
    req.on('error', (error) => resolve({ ok: false, message: `Get "${options.path}": ${error.message}` }));
    req.end();
  });
}

function tcpSocket(probe: V1Probe, ctx: ProbeContext, timeoutMs: number): Promise<ProbeOutcome> {
  const spec = probe.tcpSocket!;
  return new Promise((resolve) => {
    const socket = connect({ host: spec.host || ctx.podIP, port: resolvePort(spec.port, ctx.ports) });
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error('timeout')));
    socket.once('connect', () => {
      socket.destroy();
      resolve({ ok: true });
    });
    socket.once('error', (error) => resolve({ ok: false, message: error.message }));
  });
}

export async function probeOnce(probe: V1Probe, ctx: ProbeContext): Promise<ProbeOutcome> {
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  try {
    if (probe.httpGet) return await httpGet(probe, ctx, timeoutMs);
    if (probe.tcpSocket) return await tcpSocket(probe, ctx, timeoutMs);
    if (probe.exec) {
      const code = await ctx.exec(probe.exec.command ?? [], timeoutMs);
      return code === 0 ? { ok: true } : { ok: false, message: `command exited with ${code}` };
    }
    return { ok: false, message: 'probe type not supported by the local node agent (grpc)' };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

/**
 * Runs one probe periodically and reports when its verdict flips, after successThreshold
 * consecutive successes or failureThreshold consecutive failures.
 */
export class ProbeLoop {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private successes = 0;
  private failures = 0;
  private verdict: boolean;
  private readonly probe: V1Probe;
  private readonly ctx: ProbeContext;
  private readonly onVerdict: (ok: boolean, message?: string) => void;

  constructor(
    probe: V1Probe,
    ctx: ProbeContext,
    initial: boolean,
    onVerdict: (ok: boolean, message?: string) => void,
  ) {
    this.probe = probe;
    this.ctx = ctx;
    this.onVerdict = onVerdict;
    this.verdict = initial;
  }

  start(): void {
    this.schedule((this.probe.initialDelaySeconds ?? 0) * 1000);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), delayMs);
  }

  private async tick(): Promise<void> {
    const outcome = await probeOnce(this.probe, this.ctx);
    if (this.stopped) return;
    if (outcome.ok) {
      this.successes++;
      this.failures = 0;
      if (!this.verdict && this.successes >= (this.probe.successThreshold ?? 1)) this.flip(true);
    } else {
      this.failures++;
      this.successes = 0;
      if (this.verdict && this.failures >= (this.probe.failureThreshold ?? 3))
        this.flip(false, outcome.message);
      // A probe that has never succeeded yet stays false; it is not a flip.
    }
    this.schedule((this.probe.periodSeconds ?? 10) * 1000);
  }

  private flip(ok: boolean, message?: string): void {
    this.verdict = ok;
    this.successes = 0;
    this.failures = 0;
    this.onVerdict(ok, message);
  }
}
