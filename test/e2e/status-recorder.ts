/**
 * Records every status an ObservabilityService is given, from a watch on the object (resumed
 * from the last resourceVersion whenever the connection is recycled), for the flicker checks.
 */
import { type KubeConfig, Watch } from '@kubernetes/client-node';
import { sleep } from '../../cluster/wait.ts';
import type { ObservabilityService } from '../../operator/api/v1alpha1.ts';
import type { StatusRecord } from '../../operator/testing/condition-history.ts';

export class StatusRecorder {
  readonly records: StatusRecord[] = [];
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
        const text = JSON.stringify(o.status);
        if (text === this.last) return;
        this.last = text;
        this.records.push({
          status: o.status,
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
}
