/**
 * Records every status an ObservabilityService is given, from a watch on the object (resumed
 * from the last resourceVersion whenever the connection is recycled), for the flicker checks and
 * the GitOps health checks: each record carries the object's generation and the walk's step.
 */
import { type KubeConfig, Watch } from '@kubernetes/client-node';
import { sleep } from '../../cluster/wait.ts';
import { API_VERSION, KIND, type ObservabilityService } from '../../operator/api/v1alpha1.ts';
import type { StatusRecord } from '../fixtures/operator/condition-history.ts';
import { argoHealth, expectedHealth, kstatus } from '../tools/gitops-health.ts';
import type { Truth } from './cluster-truth.ts';

export interface WalkRecord extends StatusRecord {
  generation: number;
  /** The step of the walk the test had announced when the status was seen. */
  step: string;
  /** When the watch delivered it (ms). */
  seenAt: number;
  /** The cluster's truth at that moment, when the test watches it (cluster-truth.ts). */
  truth?: Truth;
}

export interface HealthDisagreement {
  at: number;
  step: string;
  expected: { kstatus: string; argo: string };
  kstatus: string;
  argo: string;
  conditions: string;
}

export class StatusRecorder {
  readonly records: WalkRecord[] = [];
  /** Set by the test as the walk moves on; stamped on every status seen from then. */
  step = 'start';
  /** Set by the test when it changes the world under the object (evicts Pods, rotates a Secret). */
  world: string | undefined;
  /** The cluster's truth, snapshotted with every status seen (set by the test). */
  truth: (() => Truth) | undefined;
  private resourceVersion: string | undefined;
  private abort: AbortController | undefined;
  private stopped = false;
  private last = '';

  private readonly kc: KubeConfig;
  private readonly ns: string;
  private readonly name: string;

  constructor(kc: KubeConfig, ns: string, name: string) {
    this.kc = kc;
    this.ns = ns;
    this.name = name;
  }

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    this.abort = await new Watch(this.kc).watch(
      `/apis/observatory.dev/v1alpha1/namespaces/${this.ns}/observabilityservices`,
      {
        fieldSelector: `metadata.name=${this.name}`,
        ...(this.resourceVersion ? { resourceVersion: this.resourceVersion } : {}),
      },
      (type, o: ObservabilityService) => {
        if (type === 'ERROR') {
          // 410 Gone: start over from a fresh list; the status seen next is compared with the last.
          this.resourceVersion = undefined;
          return;
        }
        this.resourceVersion = o.metadata?.resourceVersion;
        if (type === 'DELETED' || !o.status) return;
        // A new spec with the old status is a state of its own: GitOps sees it as still moving.
        const generation = o.metadata.generation ?? 0;
        const text = JSON.stringify([generation, o.status]);
        if (text === this.last) return;
        this.last = text;
        this.records.push({
          status: o.status,
          generation,
          step: this.step,
          seenAt: Date.now(),
          ...(this.truth ? { truth: this.truth() } : {}),
          ...(this.world ? { world: this.world } : {}),
          ...(o.metadata.annotations ? { annotations: { ...o.metadata.annotations } } : {}),
        });
      },
      () => {
        if (!this.stopped) void sleep(500).then(() => this.connect().catch(() => this.retry()));
      },
    );
  }

  private retry(): void {
    if (!this.stopped) void sleep(2_000).then(() => this.connect().catch(() => this.retry()));
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }

  /**
   * Every recorded state of the object judged by the kstatus library and by the Argo CD Lua check
   * `script`, against what its conditions say; returns where either tool disagreed.
   */
  async healthDisagreements(script: string): Promise<HealthDisagreement[]> {
    const out: HealthDisagreement[] = [];
    for (const [at, r] of this.records.entries()) {
      const object = {
        apiVersion: API_VERSION,
        kind: KIND,
        metadata: { name: this.name, namespace: this.ns, generation: r.generation },
        status: r.status,
      };
      const expected = expectedHealth(object);
      const [k, a] = await Promise.all([kstatus(object), argoHealth(script, object)]);
      if (k.status !== expected.kstatus || a.status !== expected.argo)
        out.push({
          at,
          step: r.step,
          expected,
          kstatus: k.status,
          argo: a.status,
          conditions: JSON.stringify((r.status.conditions ?? []).map((c) => `${c.type}=${c.status}`)),
        });
    }
    return out;
  }
}
