/**
 * The operator replicas through the walk, judged from outside: every second each running operator
 * Pod's own /metrics is scraped at its Pod IP (observatory_operator_leader and the count of
 * observatory_operator_reconcile_duration_seconds), so a Pod that reconciled while not leading is
 * seen; the Pods' template hashes show whether an old and a new operator Pod ran at once (a
 * rolling update). `chaos` deletes operator Pods at random moments and notes what the walk was
 * doing at each (Jobs running, a rollout, the cutover wait).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { LocalDeployment } from '../../cluster/scenario/local-deployment.ts';
import { OPERATOR_NAMESPACE } from '../../cluster/scenario/local-deployment.ts';
import { sleep } from '../../cluster/wait.ts';
import { scrapeOperator } from '../tools/operator-metrics.ts';

const METRICS_PORT = 8080;

export interface Scrape {
  pod: string;
  template: string;
  leader: number;
  reconciles: number;
  at: number;
}

export interface Kill {
  pod: string;
  wasLeader: boolean;
  during: string;
  at: number;
}

async function scrape(pod: V1Pod): Promise<Scrape | undefined> {
  const ip = pod.status?.podIP;
  const activity = ip ? await scrapeOperator(`http://${ip}:${METRICS_PORT}/metrics`) : undefined;
  if (!activity) return undefined;
  return {
    pod: pod.metadata!.name!,
    template: pod.metadata?.labels?.['pod-template-hash'] ?? '',
    ...activity,
    at: Date.now(),
  };
}

export class OperatorFleet {
  readonly scrapes: Scrape[] = [];
  readonly kills: Kill[] = [];
  /** Moments at which running operator Pods of two templates ran side by side. */
  readonly overlaps: string[][] = [];
  private stopped = false;
  private loops: Promise<void>[] = [];
  private chaosOn = false;
  private readonly d: LocalDeployment;
  private readonly doing: () => Promise<string>;

  /** `doing` names what the walk is in the middle of (for the kills' record). */
  constructor(d: LocalDeployment, doing: () => Promise<string>) {
    this.d = d;
    this.doing = doing;
  }

  start(): void {
    this.loops.push(this.watch());
  }

  private async watch(): Promise<void> {
    while (!this.stopped) {
      // Terminating Pods included: an old Pod still shutting down runs beside its successor.
      const pods = await this.d
        .core()
        .listNamespacedPod({
          namespace: OPERATOR_NAMESPACE,
          labelSelector: 'app.kubernetes.io/component=operator',
        })
        .then(
          (l) => l.items,
          () => [],
        );
      const running = pods.filter((p) => p.status?.phase === 'Running');
      for (const s of await Promise.all(running.map(scrape))) if (s) this.scrapes.push(s);
      const templates = new Set(running.map((p) => p.metadata?.labels?.['pod-template-hash']));
      if (templates.size > 1) this.overlaps.push([...templates].map(String));
      await sleep(1_000);
    }
  }

  /** Deletes a random operator Pod every `minMs`-`maxMs` until stopped. */
  startChaos(minMs: number, maxMs: number): void {
    this.chaosOn = true;
    this.loops.push(
      (async () => {
        while (!this.stopped && this.chaosOn) {
          await sleep(minMs + Math.floor(Math.random() * (maxMs - minMs)));
          if (this.stopped || !this.chaosOn) return;
          const pods = await this.d.operatorPods().catch(() => []);
          const victim = pods[Math.floor(Math.random() * pods.length)];
          if (!victim?.metadata?.name) continue;
          const last = [...this.scrapes].reverse().find((s) => s.pod === victim.metadata!.name);
          const during = await this.doing().catch(() => 'unknown');
          const deleted = await this.d
            .core()
            .deleteNamespacedPod({
              name: victim.metadata.name,
              namespace: OPERATOR_NAMESPACE,
              gracePeriodSeconds: 0,
            })
            .then(
              () => true,
              () => false,
            );
          if (deleted)
            this.kills.push({
              pod: victim.metadata.name,
              wasLeader: last?.leader === 1,
              during,
              at: Date.now(),
            });
        }
      })(),
    );
  }

  stopChaos(): void {
    this.chaosOn = false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  /** Scrapes of a Pod that did not lead but had reconciled (each is a follower that acted). */
  followerReconciles(): Scrape[] {
    return this.scrapes.filter((s) => s.leader === 0 && s.reconciles > 0);
  }

  /** Distinct Pods seen standing by (leader 0). */
  followers(): string[] {
    return [...new Set(this.scrapes.filter((s) => s.leader === 0).map((s) => s.pod))];
  }
}
