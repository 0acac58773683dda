/**
 * The dual-write propagation job: a singleton across worker replicas (a Redis lease). The holder
 * renews it on a heartbeat much shorter than the run interval, so a holder whose Pod is gone loses
 * it within LEASE_MS; a worker restarted under the holder's identity (its Pod name) takes it at once.
 * A holder that cannot renew stops before its next write. Each run records a heartbeat, then propagates every completed
 * staging partition oldest first, advancing the cursor only after a partition's insert succeeded.
 * A partition over `chunkRows` rows is propagated in chunks of whole traces (one statement each,
 * so its time and memory stay bounded however large the partition), each recorded as it commits
 * so a restart resumes after the last one (progress.ts).
 * Runs are aligned to the moments partitions become eligible (schedule.ts).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { Logger } from 'pino';
import {
  type Chunk,
  type PartitionSample,
  planChunks,
  sampleSize,
} from '../../../features/backfill/chunks.ts';
import { keySampleQuery, stagingExperimentEnrichmentStatement } from '../../../features/backfill/sql.ts';
import { PROPAGATION_KEYS } from '../../../features/events/propagation-record.ts';
import { partitionEndMs } from '../../../features/events/staging.ts';
import type { TombstoneGuard } from '../../../features/tombstones/record.ts';
import { chTimeToIso } from '../../../features/write-model/time.ts';
import type { Coordination, LeaseHolder } from '../../../platform/coordination/store.ts';
import { progressFor, progressRecord } from './progress.ts';
import { nextRunDelayMs } from './schedule.ts';
import {
  completedPartitionsQuery,
  oldestStagedQuery,
  pendingPartitionsQuery,
  propagateChunkStatement,
  STAGING_KEY,
  STAGING_TABLE,
  stagingChunk,
} from './sql.ts';

export interface PropagationOptions {
  analytics: ClickHouseClient;
  coordination: Coordination;
  log: Logger;
  workerId: string;
  /** The worker's stable identity (the Pod name), absent outside a cluster. */
  identity?: string | undefined;
  intervalMs: number;
  /** Seconds after a partition's window closes before it is taken (lets in-flight inserts land). */
  graceSeconds: number;
  /** Rows per statement: a larger partition is propagated in chunks. */
  chunkRows: number;
  onMetrics?: (m: PropagationMetrics) => void;
  /** After a chunk is in the events tables: each project's oldest `created_at` it carried. */
  onPropagated?: (oldest: { projectId: string; createdAt: string }[]) => Promise<void>;
  /** The record of deleted traces, which no chunk propagates. */
  tombstones: Pick<TombstoneGuard, 'run'>;
}

export interface PropagationMetrics {
  backlog: number;
  lastProcessedDelaySeconds: number | null;
  /** When this run finished successfully (ms since the epoch). */
  lastSuccessAt: number;
}

/**
 * How long the lease outlives its holder's last renewal: the longest a new Pod waits after the
 * holder's Pod is gone. The holder renews it every third of that, whatever the run interval.
 */
export const LEASE_MS = 30_000;
const RENEW_EVERY_MS = LEASE_MS / 3;

/** The lease ran out or another worker holds it: this run must write nothing more. */
class LeaseLost extends Error {}

export interface RunOutcome {
  ran: boolean;
  processed: string[];
}

export class PropagationJob {
  readonly #o: PropagationOptions;
  readonly #holder: LeaseHolder;
  #timer: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  /** Until when the lease is ours for sure: LEASE_MS from the start of the last confirmed take or renewal. */
  #heldUntil = 0;

  constructor(options: PropagationOptions) {
    this.#o = options;
    this.#holder = { process: options.workerId, identity: options.identity };
  }

  async #take(): Promise<boolean> {
    const asked = Date.now();
    const held = await this.#o.coordination.acquireLease(PROPAGATION_KEYS.lease, this.#holder, LEASE_MS);
    this.#heldUntil = held ? asked + LEASE_MS : 0;
    return held;
  }

  async #renew(): Promise<void> {
    const asked = Date.now();
    const held = await this.#o.coordination.renewLease(PROPAGATION_KEYS.lease, this.#holder, LEASE_MS);
    this.#heldUntil = held ? asked + LEASE_MS : 0;
    if (!held) throw new LeaseLost('the propagation lease was lost');
  }

  /** Before a write: the lease may have run out while a statement ran (the heartbeat could not renew it). */
  #assertHeld(): void {
    if (Date.now() >= this.#heldUntil) throw new LeaseLost('the propagation lease ran out');
  }

  /** One run, if this worker holds the lease. */
  async runOnce(): Promise<RunOutcome> {
    const { coordination: c, analytics } = this.#o;
    if (!(await this.#take())) return { ran: false, processed: [] };
    await c.set(PROPAGATION_KEYS.lastRunStartedAt, String(Date.now()));
    const processed: string[] = [];
    try {
      const after = (await c.get(PROPAGATION_KEYS.cursor)) ?? '';
      const rs = await analytics.query({
        query: completedPartitionsQuery(),
        query_params: { after, graceSeconds: this.#o.graceSeconds },
        format: 'JSONEachRow',
      });
      const partitions = await rs.json<{ partition: string; partitionId: string; rows: string | number }>();
      for (const p of partitions) {
        const stored = progressFor(await c.get(PROPAGATION_KEYS.chunks), p.partition);
        const chunks = stored?.chunks ?? (await this.#plan(p.partitionId, Number(p.rows)));
        this.#assertHeld();
        if (!stored && chunks.length > 1)
          await c.set(PROPAGATION_KEYS.chunks, progressRecord(p.partition, chunks, 0));
        for (let i = stored?.done ?? 0; i < chunks.length; i++) {
          const chunk = chunks[i]!;
          this.#assertHeld();
          const insert = propagateChunkStatement(chunk);
          const enrich = stagingExperimentEnrichmentStatement(stagingChunk(chunk));
          // Deleted traces are not propagated, also those deleted while it runs (the guard's note).
          await this.#o.tombstones.run(async (tombstones) => {
            await analytics.command({
              query: insert.query,
              query_params: { ...insert.params, ...tombstones },
            });
            await analytics.command({
              query: enrich.query,
              query_params: { ...enrich.params, ...tombstones },
            });
          });
          await this.#announce(chunk);
          this.#assertHeld();
          if (chunks.length > 1)
            await c.set(PROPAGATION_KEYS.chunks, progressRecord(p.partition, chunks, i + 1));
          // Confirmed between statements: another worker may have taken a lease we could not renew.
          await this.#renew();
        }
        this.#assertHeld();
        await c.set(PROPAGATION_KEYS.cursor, p.partition);
        processed.push(p.partition);
      }
      await c.set(PROPAGATION_KEYS.idle, partitions.length === 0 ? '1' : '0');
      await c.set(PROPAGATION_KEYS.lastError, '');
      const succeededAt = Date.now();
      await c.set(PROPAGATION_KEYS.lastSuccessAt, String(succeededAt));
      await this.#reportMetrics(succeededAt);
      if (processed.length > 0) this.#o.log.info({ partitions: processed }, 'propagated staging partitions');
    } catch (err) {
      if (err instanceof LeaseLost) {
        // The record is the new holder's now: nothing more is written.
        this.#o.log.warn({ err: err.message, processed }, 'propagation run stopped');
        return { ran: true, processed };
      }
      const message = (err as Error).message.slice(0, 500);
      await c.set(PROPAGATION_KEYS.lastError, message).catch(() => {});
      this.#o.log.error({ err: message, processed }, 'propagation run failed');
    }
    return { ran: true, processed };
  }

  /** Tells `onPropagated` what a committed chunk carried; a failure fails the run, which retries it. */
  async #announce(chunk: Chunk): Promise<void> {
    if (!this.#o.onPropagated) return;
    const q = oldestStagedQuery(chunk);
    const rs = await this.#o.analytics.query({
      query: q.query,
      query_params: q.params,
      format: 'JSONEachRow',
    });
    const rows = await rs.json<{ project_id: string; created_at: string }>();
    await this.#o.onPropagated(
      rows.map((r) => ({ projectId: r.project_id, createdAt: chTimeToIso(r.created_at) })),
    );
  }

  /**
   * The chunks of a partition: the whole partition when it fits one, else ranges of whole traces
   * from a sample of its keys, recorded before the first runs so every resume uses the same ones.
   */
  async #plan(partitionId: string, rows: number): Promise<Chunk[]> {
    const { analytics, chunkRows } = this.#o;
    let sample: PartitionSample['sample'] = [];
    if (rows > chunkRows) {
      const rs = await analytics.query({
        query: keySampleQuery(STAGING_TABLE, STAGING_KEY, sampleSize(rows, chunkRows)),
        query_params: { partition: partitionId },
        format: 'JSONEachRow',
      });
      sample = (await rs.json<{ sample: PartitionSample['sample'] }>())[0]?.sample ?? [];
    }
    return planChunks([{ partition: partitionId, rows, sample }], chunkRows);
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
    // Keeps the lease between runs and through long statements, so only a dead holder loses it.
    this.#heartbeat = setInterval(() => {
      if (this.#heldUntil > 0)
        this.#renew().catch((err: Error) =>
          this.#o.log.warn({ err: err.message }, 'propagation lease not renewed'),
        );
    }, RENEW_EVERY_MS);
    const tick = () => {
      let standby = false;
      this.#running = this.runOnce()
        .then((r) => {
          standby = !r.ran;
        })
        .catch((err) => this.#o.log.error({ err: (err as Error).message }, 'propagation tick failed'))
        .finally(() => {
          if (this.#timer === undefined) return;
          const next = nextRunDelayMs(Date.now(), this.#o.intervalMs, this.#o.graceSeconds);
          // A standby asks again soon: the lease of a holder whose Pod is gone runs out within LEASE_MS.
          this.#timer = setTimeout(tick, standby ? Math.min(next, RENEW_EVERY_MS) : next);
        });
    };
    this.#timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
    clearInterval(this.#heartbeat);
    this.#heldUntil = 0;
    await this.#o.coordination.releaseLease(PROPAGATION_KEYS.lease, this.#holder).catch(() => {});
  }
}
