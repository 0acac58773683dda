/**
 * Runs the historic backfill chain recorded in `background_migrations`. A step runs only when the
 * write mode writes the events tables (Rule 3), its gate variable is true, its predecessor has
 * finished and no live worker holds its lock. Progress is checkpointed in the row's `state` after
 * every chunk, so a step killed at any point resumes where it stopped; a chunk run twice writes
 * identical rows. A failure records `failed_at` and the reason and halts the chain. Before each
 * chunk the analytics store's free disk is checked against what the step still needs (pressure.ts):
 * short of it, the step waits (its report says why); a chunk refused for memory is retried after a
 * growing pause instead of failing the step. A step starts once the ingestion log's writes accepted
 * before it are in the store (server/features/ingestion/log/wait-drained.ts).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import { ENV } from '../../contract/env.ts';
import { backfillRetryCommand } from '../../contract/retries.ts';
import type { BackfillStep, StoreReport } from '../../contract/worker-api.ts';
import { behaviourOf, type ModeSettings } from '../../contract/write-modes.ts';
import type { BackfillTuning } from '../../kernel/config/backfill-tuning.ts';
import type { Dialect } from '../../platform/migrations/analytics/dialect.ts';
import { pendingBefore } from '../ingestion/log/queue.ts';
import { awaitLogDrained } from '../ingestion/log/wait-drained.ts';
import { TombstoneGuard } from '../tombstones/record.ts';
import { BACKFILL_CHAIN, type ChainStep } from './chain.ts';
import { type Chunk, type KeyColumn, type PartitionSample, planChunks, sampleSize } from './chunks.ts';
import { effectiveTuning } from './config.ts';
import { chunkRetryDelayMs, diskPressure, diskRecheckMs, isMemoryLimit } from './pressure.ts';
import { invalidateUnproven, type OutputProof, proofOf } from './proof.ts';
import { CHUNK_SETTINGS, keySampleQuery, partitionsQuery, SCRATCH_TABLE } from './sql.ts';
import { planOf } from './steps.ts';
import { readFreeBytes, readTableSize } from './store-space.ts';

/** The step may not start now; nothing was recorded. */
export class BackfillRefusal extends Error {
  override name = 'BackfillRefusal';
}
/** The step failed; `failed_at` and the reason are recorded. */
export class BackfillFailure extends Error {
  override name = 'BackfillFailure';
}

interface ChunkState extends Chunk {
  done: boolean;
}
/** How the chunks of a checkpoint were cut; a checkpoint cut otherwise is planned again. */
const CHUNKING = 'key-ranges';

export interface StepState {
  phase?: 'chunks_loaded' | 'completed';
  chunking?: typeof CHUNKING;
  chunks?: ChunkState[];
  /** Recorded as the step finishes; see proof.ts. */
  output?: OutputProof;
  /** When the chunks were planned and when the last one was recorded (the rate the estimates use). */
  startedAt?: string;
  checkpointAt?: string;
}

interface Row {
  name: string;
  args: BackfillTuning & { envGate?: string };
  state: StepState;
  finished_at: Date | null;
  failed_at: Date | null;
  failed_reason: string | null;
  worker_id: string | null;
  locked_at: Date | null;
}

export type StepStatus = BackfillStep;

const LOCK_STALE_SECONDS = 60;
const HEARTBEAT_MS = 15_000;
/** A step short of disk waits at most this long in all before it gives up (nothing recorded as failed). */
const MAX_DISK_WAIT_MS = 6 * 3600_000;
/** A step waits at most this long for the ingestion log (the backlog's default age bound). */
const MAX_LOG_WAIT_MS = 3600_000;
const LOG_RECHECK_MS = 1_000;

export interface ManagerOptions {
  pool: pg.Pool;
  analytics: ClickHouseClient;
  dialect: Dialect;
  settings: ModeSettings;
  workerId: string;
  /** Tuning from the environment, written into each step's row as it starts. */
  tuning?: BackfillTuning;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

export class BackfillManager {
  readonly #o: ManagerOptions;

  constructor(options: ManagerOptions) {
    this.#o = options;
  }

  #gateOpen(s: ChainStep): boolean {
    return s.envGate === ENV.dropPidTidSortingTables
      ? this.#o.settings.dropPidTidSortingTables
      : this.#o.settings.enableHistoricBackfill;
  }

  async #row(name: string): Promise<Row | undefined> {
    const r = await this.#o.pool.query<Row>('SELECT * FROM background_migrations WHERE name = $1', [name]);
    return r.rows[0];
  }

  /** Resets the steps whose output is gone (proof.ts), so no report or run trusts them. */
  async #invalidate(): Promise<void> {
    const reset = await invalidateUnproven(this.#o.pool, this.#o.analytics);
    if (reset.length > 0) this.#o.log?.('backfill steps reset: their output is gone', { steps: reset });
  }

  async status(): Promise<StepStatus[]> {
    await this.#invalidate();
    const out: StepStatus[] = [];
    for (const s of BACKFILL_CHAIN) {
      const row = await this.#row(s.name);
      const chunks = row?.state.chunks ?? [];
      const live =
        row?.locked_at && row.worker_id && Date.now() - row.locked_at.getTime() < LOCK_STALE_SECONDS * 1000;
      out.push({
        step: s.step,
        name: s.name,
        status: row?.finished_at
          ? 'finished'
          : row?.failed_at
            ? 'failed'
            : live
              ? 'running'
              : this.#gateOpen(s) && behaviourOf(this.#o.settings).writesEventsTables
                ? 'pending'
                : 'dormant',
        chunksDone: chunks.filter((c) => c.done).length,
        chunksTotal: chunks.length,
        finishedAt: row?.finished_at?.toISOString() ?? null,
        failedAt: row?.failed_at?.toISOString() ?? null,
        failedReason: row?.failed_reason ?? null,
        lockedBy: live ? row.worker_id : null,
      });
    }
    return out;
  }

  /** Clears a failure so the step can run again from its checkpoint. */
  async retry(step: number): Promise<void> {
    const s = stepOf(step);
    const r = await this.#o.pool.query(
      'UPDATE background_migrations SET failed_at = NULL, failed_reason = NULL WHERE name = $1 AND failed_at IS NOT NULL',
      [s.name],
    );
    if (r.rowCount === 0) throw new BackfillRefusal(`backfill step ${step} has not failed; nothing to retry`);
  }

  /** Why the step may not start, or undefined when it may. */
  async #refusal(s: ChainStep, row: Row | undefined): Promise<string | undefined> {
    if (!row)
      return `backfill step ${s.step} is not recorded in background_migrations; run the migrations first`;
    if (row.failed_at) {
      return `backfill step ${s.step} failed at ${row.failed_at.toISOString()}: ${row.failed_reason}; retry it with \`${backfillRetryCommand(s.step)}\``;
    }
    if (!behaviourOf(this.#o.settings).writesEventsTables) {
      return `the historic backfill runs only once dual write is active (${ENV.writeMode} is ${this.#o.settings.writeMode}): data written before it would be missing from the events tables`;
    }
    if (!this.#gateOpen(s)) return `backfill step ${s.step} is gated off: set ${s.envGate}=true`;
    const prev = BACKFILL_CHAIN[s.step - 2];
    if (prev) {
      const p = await this.#row(prev.name);
      if (!p?.finished_at) return `backfill step ${s.step} waits for step ${prev.step} to finish`;
    }
    return undefined;
  }

  /**
   * Takes the step's lock: a session-level advisory lock on a dedicated connection, which
   * PostgreSQL releases the moment this process dies, so a killed Job's successor can resume at
   * once. `worker_id` and `locked_at` are recorded for people and refreshed as a heartbeat.
   */
  async #claim(s: ChainStep): Promise<pg.PoolClient | undefined> {
    const client = await this.#o.pool.connect();
    const r = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [
      s.name,
    ]);
    if (!r.rows[0]?.ok) {
      client.release();
      return undefined;
    }
    await client.query('UPDATE background_migrations SET worker_id = $2, locked_at = now() WHERE name = $1', [
      s.name,
      this.#o.workerId,
    ]);
    return client;
  }

  static async #unlock(client: pg.PoolClient, s: ChainStep): Promise<void> {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [s.name]).catch(() => {});
    client.release();
  }

  /** Saves the checkpoint through the lock's own connection. */
  static async #save(client: pg.PoolClient, s: ChainStep, state: StepState): Promise<void> {
    await client.query('UPDATE background_migrations SET state = $2, locked_at = now() WHERE name = $1', [
      s.name,
      JSON.stringify(state),
    ]);
  }

  /**
   * The chunks of a source table: its partitions, newest first, cut into key ranges (chunks.ts); a
   * partition larger than one chunk is sampled on its own, so the sample's memory stays bounded.
   */
  async #enumerate(table: string, key: readonly KeyColumn[], chunkRows: number): Promise<ChunkState[]> {
    const { analytics } = this.#o;
    const rs = await analytics.query({
      query: partitionsQuery(),
      query_params: { table },
      format: 'JSONEachRow',
    });
    const partitions: PartitionSample[] = [];
    for (const p of await rs.json<{ partition: string; rows: string | number }>()) {
      const rows = Number(p.rows);
      let sample: PartitionSample['sample'] = [];
      if (rows > chunkRows) {
        const keys = await analytics.query({
          query: keySampleQuery(table, key, sampleSize(rows, chunkRows)),
          query_params: { partition: p.partition },
          format: 'JSONEachRow',
        });
        sample = (await keys.json<{ sample: PartitionSample['sample'] }>())[0]?.sample ?? [];
      }
      partitions.push({ partition: p.partition, rows, sample });
    }
    return planChunks(partitions, chunkRows).map((c) => ({ ...c, done: false }));
  }

  async #requireTables(tables: string[]): Promise<void> {
    if (tables.length === 0) return;
    const rs = await this.#o.analytics.query({
      query:
        'SELECT name FROM system.tables WHERE database = currentDatabase() AND name IN {t:Array(String)}',
      query_params: { t: tables },
      format: 'JSONEachRow',
    });
    const present = new Set((await rs.json<{ name: string }>()).map((r) => r.name));
    const missing = tables.filter((t) => !present.has(t));
    if (missing.length > 0) throw new Error(`required tables are missing: ${missing.join(', ')}`);
  }

  /** Runs one step to completion. Throws BackfillRefusal (nothing recorded) or BackfillFailure. */
  async runStep(
    step: number,
    shouldStop: () => boolean = () => false,
  ): Promise<'finished' | 'already-finished'> {
    const s = stepOf(step);
    const startedAt = Date.now();
    await this.#invalidate();
    const row = await this.#row(s.name);
    if (row?.finished_at) return 'already-finished';
    const refusal = await this.#refusal(s, row);
    if (refusal) throw new BackfillRefusal(refusal);
    const lock = await this.#claim(s);
    if (!lock) {
      throw new BackfillRefusal(
        `backfill step ${step} is being run by ${row!.worker_id ?? 'another process'}`,
      );
    }
    const heartbeat = setInterval(() => {
      lock
        .query('UPDATE background_migrations SET locked_at = now() WHERE name = $1', [s.name])
        .catch(() => {});
    }, HEARTBEAT_MS);
    try {
      const logBehind = await awaitLogDrained({
        // Through the step's own connection: the embedded PostgreSQL's pool has only that one.
        pending: () => pendingBefore(lock, startedAt),
        shouldStop,
        maxWaitMs: MAX_LOG_WAIT_MS,
        recheckMs: LOG_RECHECK_MS,
        onWait: (pending) => this.#o.log?.('backfill waits for the ingestion log', { step, pending }),
      });
      if (logBehind) throw new BackfillRefusal(`backfill step ${step} paused: ${logBehind}`);
      const args = await this.#applyTuning(lock, s, row!.args);
      const state = await this.#execute(s, { ...row!, args }, lock, shouldStop);
      const output = await proofOf(this.#o.analytics, s.step);
      await lock.query(
        'UPDATE background_migrations SET finished_at = now(), state = $2, worker_id = NULL, locked_at = NULL WHERE name = $1',
        [s.name, JSON.stringify({ ...state, ...(output ? { output } : {}) })],
      );
      this.#o.log?.('backfill step finished', { step });
      return 'finished';
    } catch (err) {
      if (err instanceof BackfillRefusal || shouldStop()) {
        // Interrupted (shutdown): not a failure. The checkpoint stays; the lock is freed.
        await lock
          .query('UPDATE background_migrations SET worker_id = NULL, locked_at = NULL WHERE name = $1', [
            s.name,
          ])
          .catch(() => {});
        throw err instanceof BackfillRefusal
          ? err
          : new BackfillRefusal(`backfill step ${step} interrupted by shutdown`);
      }
      const reason = (err as Error).message.slice(0, 1000);
      await lock.query(
        'UPDATE background_migrations SET failed_at = now(), failed_reason = $2, worker_id = NULL, locked_at = NULL WHERE name = $1',
        [s.name, reason],
      );
      throw new BackfillFailure(`backfill step ${step} failed: ${reason}`);
    } finally {
      clearInterval(heartbeat);
      await BackfillManager.#unlock(lock, s);
    }
  }

  /** Writes the tuning the environment sets into the step's row, so the row shows what runs. */
  async #applyTuning(lock: pg.PoolClient, s: ChainStep, args: Row['args']): Promise<Row['args']> {
    const tuning = this.#o.tuning ?? {};
    if (Object.entries(tuning).every(([k, v]) => args[k as keyof BackfillTuning] === v)) return args;
    const r = await lock.query<{ args: Row['args'] }>(
      'UPDATE background_migrations SET args = args || $2::jsonb WHERE name = $1 RETURNING args',
      [s.name, JSON.stringify(tuning)],
    );
    this.#o.log?.('backfill tuning applied', { step: s.step, ...tuning });
    return r.rows[0]?.args ?? { ...args, ...tuning };
  }

  async #execute(s: ChainStep, row: Row, lock: pg.PoolClient, shouldStop: () => boolean): Promise<StepState> {
    const plan = planOf(s.step);
    const { analytics, dialect } = this.#o;
    const { chunkRows, throttleMs, concurrency } = effectiveTuning(row.args);
    for (const query of plan.before?.(dialect) ?? []) await analytics.command({ query });
    await this.#requireTables(plan.requires);
    const state: StepState = { ...row.state };
    const planned =
      state.phase === 'completed' || (state.phase === 'chunks_loaded' && state.chunking === CHUNKING);
    if (plan.source && !planned) {
      state.chunks = await this.#enumerate(plan.source.table, plan.source.key, chunkRows);
      state.phase = 'chunks_loaded';
      state.chunking = CHUNKING;
      state.startedAt = new Date().toISOString();
      await BackfillManager.#save(lock, s, state);
    }
    // `concurrency` runners take the next pending chunk each; a chunk is marked done only once its
    // statement returned, so a kill re-runs at most the chunks in flight (which write identical rows).
    const pending = (state.chunks ?? []).filter((c) => !c.done);
    // Deleted traces stay out of every chunk, also those deleted while it runs (the guard's note).
    // It reads on the step's own connection: `dev`'s database serves one connection at a time.
    const guard = new TombstoneGuard(
      lock,
      { analytics, release: '4', dialect },
      plan.output?.table === SCRATCH_TABLE ? [SCRATCH_TABLE] : [],
    );
    let halted = false;
    const runner = async (): Promise<void> => {
      for (let chunk = pending.shift(); chunk && !halted; chunk = pending.shift()) {
        if (shouldStop()) throw new BackfillRefusal(`backfill step ${s.step} interrupted by shutdown`);
        await this.#awaitDisk(s.step, plan.source!.table, state, shouldStop);
        const { query, params } = plan.chunkStatement!(chunk);
        try {
          await guard.run((tombstones) =>
            this.#withRetries(s.step, () =>
              analytics.command({
                query,
                query_params: { ...params, ...tombstones },
                clickhouse_settings: CHUNK_SETTINGS,
              }),
            ),
          );
        } catch (err) {
          halted = true; // the other runners finish their chunk and take no new one
          throw err;
        }
        chunk.done = true;
        state.checkpointAt = new Date().toISOString();
        await BackfillManager.#save(lock, s, state);
        if (throttleMs > 0) await sleep(throttleMs);
      }
    };
    const runners = await Promise.allSettled(
      Array.from({ length: Math.min(concurrency, Math.max(1, pending.length)) }, runner),
    );
    const failed = runners.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    for (const query of plan.after?.(dialect) ?? []) await analytics.command({ query });
    state.phase = 'completed';
    await BackfillManager.#save(lock, s, state);
    return state;
  }

  /** Waits while the store has less free disk than the step still needs; refuses after MAX_DISK_WAIT_MS. */
  async #awaitDisk(step: number, table: string, state: StepState, shouldStop: () => boolean): Promise<void> {
    const started = Date.now();
    for (let checks = 0; ; checks++) {
      const [free, size] = await Promise.all([
        readFreeBytes(this.#o.analytics),
        readTableSize(this.#o.analytics, table),
      ]);
      const chunks = state.chunks ?? [];
      const reason = diskPressure(
        {
          step,
          bytes: size.bytes,
          chunksDone: chunks.filter((c) => c.done).length,
          chunksTotal: chunks.length,
        },
        free,
      );
      if (!reason) return;
      if (shouldStop() || Date.now() - started > MAX_DISK_WAIT_MS)
        throw new BackfillRefusal(`backfill step ${step} paused: ${reason}`);
      const pause = diskRecheckMs(checks);
      this.#o.log?.('backfill paused: analytics store pressure', { step, reason, recheckInMs: pause });
      await sleep(pause);
    }
  }

  async #withRetries<T>(step: number, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        const delay = chunkRetryDelayMs(err, attempt);
        if (delay === undefined) throw err;
        if (isMemoryLimit(err))
          this.#o.log?.('backfill paused: the analytics store is short of memory', {
            step,
            retryInMs: delay,
          });
        await sleep(delay);
      }
    }
  }

  /**
   * The store as the estimates and the operator see it: free disk, each chunked step's source size
   * and timing, and the first unfinished step's disk pressure (null: none).
   */
  async storeReport(steps: readonly StepStatus[]): Promise<StoreReport> {
    const { analytics } = this.#o;
    const freeBytes = await readFreeBytes(analytics);
    const sources: StoreReport['sources'] = [];
    let pressure: StoreReport['pressure'] = null;
    for (const s of BACKFILL_CHAIN) {
      const table = planOf(s.step).source?.table;
      const status = steps.find((x) => x.step === s.step);
      if (!table || !status) continue;
      const [size, row] = await Promise.all([readTableSize(analytics, table), this.#row(s.name)]);
      sources.push({
        step: s.step,
        rows: size.rows,
        bytes: size.bytes,
        startedAt: row?.state.startedAt ?? null,
        checkpointAt: row?.state.checkpointAt ?? null,
      });
      if (pressure || (status.status !== 'pending' && status.status !== 'running')) continue;
      const reason = diskPressure(
        { step: s.step, bytes: size.bytes, chunksDone: status.chunksDone, chunksTotal: status.chunksTotal },
        freeBytes,
      );
      if (reason) pressure = { step: s.step, reason };
    }
    return { freeBytes, sources, pressure };
  }

  /** The chain inside the worker: runs the next runnable step until none is left. */
  async runChain(shouldStop: () => boolean): Promise<void> {
    await this.#invalidate();
    for (const s of BACKFILL_CHAIN) {
      if (shouldStop()) return;
      const row = await this.#row(s.name);
      if (row?.finished_at) continue;
      if (row?.failed_at || (await this.#refusal(s, row))) return;
      try {
        await this.runStep(s.step, shouldStop);
      } catch (err) {
        this.#o.log?.('backfill chain halted', { step: s.step, reason: (err as Error).message });
        return;
      }
    }
  }
}

function stepOf(step: number): ChainStep {
  const s = BACKFILL_CHAIN.find((c) => c.step === step);
  if (!s) throw new BackfillRefusal(`no backfill step ${step}: steps are 1-${BACKFILL_CHAIN.length}`);
  return s;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
