/**
 * The dual-write propagation job: a singleton across worker replicas (a Redis lease that a crashed
 * holder loses when it expires). Each run records a heartbeat, then propagates every completed
 * staging partition oldest first, advancing the cursor only after a partition's insert succeeded.
 * Runs are aligned to the moments partitions become eligible (schedule.ts).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { Logger } from 'pino';
import { partitionExperimentEnrichmentStatement } from '../../backfill/sql.ts';
import type { Coordination } from '../../coordination/store.ts';
import { PROPAGATION_KEYS } from '../../events/propagation-record.ts';
import { partitionEndMs } from '../../events/staging.ts';
import { nextRunDelayMs } from './schedule.ts';
import { completedPartitionsQuery, pendingPartitionsQuery, propagatePartitionStatement } from './sql.ts';

export interface PropagationOptions {
  analytics: ClickHouseClient;
  coordination: Coordination;
  log: Logger;
  workerId: string;
  intervalMs: number;
  /** Seconds after a partition's window closes before it is taken (lets in-flight inserts land). */
  graceSeconds: number;
  onMetrics?: (m: PropagationMetrics) => void;
}

export interface PropagationMetrics {
  backlog: number;
  lastProcessedDelaySeconds: number | null;
  /** When this run finished successfully (ms since the epoch). */
  lastSuccessAt: number;
}

export interface RunOutcome {
  ran: boolean;
  processed: string[];
}

export class PropagationJob {
  readonly #o: PropagationOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;

  constructor(options: PropagationOptions) {
    this.#o = options;
  }

  /** One run, if this worker holds the lease. */
  async runOnce(): Promise<RunOutcome> {
    const { coordination: c, analytics, workerId } = this.#o;
    const leaseMs = Math.max(3 * this.#o.intervalMs, 30_000);
    if (!(await c.acquireLease(PROPAGATION_KEYS.lease, workerId, leaseMs)))
      return { ran: false, processed: [] };
    await c.set(PROPAGATION_KEYS.lastRunStartedAt, String(Date.now()));
    const processed: string[] = [];
    try {
      const after = (await c.get(PROPAGATION_KEYS.cursor)) ?? '';
      const rs = await analytics.query({
        query: completedPartitionsQuery(),
        query_params: { after, graceSeconds: this.#o.graceSeconds },
        format: 'JSONEachRow',
      });
      const partitions = (await rs.json<{ partition: string }>()).map((r) => r.partition);
      for (const partition of partitions) {
        await analytics.command({ query: propagatePartitionStatement(), query_params: { partition } });
        await analytics.command({
          query: partitionExperimentEnrichmentStatement(),
          query_params: { partition },
        });
        await c.set(PROPAGATION_KEYS.cursor, partition);
        processed.push(partition);
        // Renew between partitions so a long catch-up keeps the lease.
        await c.acquireLease(PROPAGATION_KEYS.lease, workerId, leaseMs);
      }
      await c.set(PROPAGATION_KEYS.idle, partitions.length === 0 ? '1' : '0');
      await c.set(PROPAGATION_KEYS.lastError, '');
      const succeededAt = Date.now();
      await c.set(PROPAGATION_KEYS.lastSuccessAt, String(succeededAt));
      await this.#reportMetrics(succeededAt);
      if (processed.length > 0) this.#o.log.info({ partitions: processed }, 'propagated staging partitions');
    } catch (err) {
      const message = (err as Error).message.slice(0, 500);
      await c.set(PROPAGATION_KEYS.lastError, message).catch(() => {});
      this.#o.log.error({ err: message, processed }, 'propagation run failed');
    }
    return { ran: true, processed };
  }

  async #reportMetrics(lastSuccessAt: number): Promise<void> {
    if (!this.#o.onMetrics) return;
    const after = (await this.#o.coordination.get(PROPAGATION_KEYS.cursor)) ?? '';
    const rs = await this.#o.analytics.query({
      query: pendingPartitionsQuery(),
      query_params: { after },
      format: 'JSONEachRow',
    });
    const [row] = await rs.json<{ n: string | number }>();
    const end = after ? partitionEndMs(after) : null;
    this.#o.onMetrics({
      backlog: Number(row?.n ?? 0),
      lastProcessedDelaySeconds: end === null ? null : (Date.now() - end) / 1000,
      lastSuccessAt,
    });
  }

  start(): void {
    const tick = () => {
      this.#running = this.runOnce()
        .catch((err) => this.#o.log.error({ err: (err as Error).message }, 'propagation tick failed'))
        .finally(() => {
          if (this.#timer !== undefined)
            this.#timer = setTimeout(
              tick,
              nextRunDelayMs(Date.now(), this.#o.intervalMs, this.#o.graceSeconds),
            );
        });
    };
    this.#timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
    await this.#o.coordination.releaseLease(PROPAGATION_KEYS.lease, this.#o.workerId).catch(() => {});
  }
}
