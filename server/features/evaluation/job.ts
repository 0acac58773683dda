/**
 * The worker's evaluation job: each pass scans the active rules of the sources the write mode
 * serves for new matching rows (scan.ts: observations where the events tables are written, traces
 * where the legacy tables are, experiment items in every mode), then claims due executions and judges them (judge.ts) with at most
 * `perConnection` calls in flight per LLM connection.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { LlmSettings } from '../../kernel/config/env.ts';
import { PassTimer, waitAtMost } from '../../kernel/passes.ts';
import type { IngestionStore } from '../write-model/store.ts';
import { claimExecutions, type Outcome, settleExecution } from './executions.ts';
import { judgeReady, oncePerPass, prepare, type Ready } from './judge.ts';
import { readJudgedMany } from './judged.ts';
import { type ScanSource, scanRules } from './scan.ts';

export interface EvaluationJobOptions {
  pool: pg.Pool;
  analytics: ClickHouseClient;
  store: IngestionStore;
  llm: LlmSettings;
  log: Logger;
  workerId: string;
  /** What the write mode lets the job scan (scan.ts); without `trace`, trace-level executions are cancelled. */
  sources: readonly ScanSource[];
  intervalMs?: number;
  perConnection?: number;
  maxAttempts?: number;
  backoffBaseMs?: number;
}

const DEFAULTS = { intervalMs: 2_000, perConnection: 2, maxAttempts: 4, backoffBaseMs: 2_000 };
/** Rows become visible to the scan this long after they were written. */
const SCAN_LAG_MS = 1_000;
const CLAIM_BATCH = 8;
const LEASE_MS = 5 * 60_000;
const CALL_TIMEOUT_MS = 120_000;

/** At most `size` runs at once per key; the others wait in order. */
export function keyedLimiter(size: number) {
  const state = new Map<string, { running: number; waiting: (() => void)[] }>();
  return async <T>(key: string, run: () => Promise<T>): Promise<T> => {
    const slot = state.get(key) ?? { running: 0, waiting: [] };
    state.set(key, slot);
    if (slot.running >= size) await new Promise<void>((resolve) => slot.waiting.push(resolve));
    else slot.running++;
    try {
      return await run();
    } finally {
      const next = slot.waiting.shift();
      if (next) next();
      else if (--slot.running === 0) state.delete(key);
    }
  };
}

export class EvaluationJob {
  readonly #o: EvaluationJobOptions & typeof DEFAULTS;
  #timer: PassTimer | undefined;
  #inFlight = new Set<Promise<void>>();
  #stopping = false;
  readonly #limit: ReturnType<typeof keyedLimiter>;

  constructor(o: EvaluationJobOptions) {
    this.#o = { ...DEFAULTS, ...o };
    this.#limit = keyedLimiter(this.#o.perConnection);
  }

  start(): void {
    this.#timer = new PassTimer('evaluation pass', this.#o.intervalMs, () => this.runPass(), this.#o.log);
  }

  async runPass(): Promise<void> {
    if (this.#stopping) return;
    const o = this.#o;
    const enqueued = await scanRules(o.pool, o.analytics, SCAN_LAG_MS, o.sources);
    if (enqueued > 0) o.log.info({ enqueued }, 'evaluations enqueued');
    const free = CLAIM_BATCH - this.#inFlight.size;
    if (free <= 0) return;
    const claimed = await claimExecutions(o.pool, o.workerId, free, LEASE_MS);
    if (claimed.length === 0) return;
    const deps = { ...o, timeoutMs: CALL_TIMEOUT_MS, legacyTargetsRun: o.sources.includes('trace') };
    const workerError = (err: Error): Outcome => ({
      status: 'RETRY',
      error: `worker error: ${err.message}`,
      delayMs: o.backoffBaseMs,
    });
    const once = oncePerPass();
    const prepared = await Promise.all(claimed.map((e) => prepare(deps, e, once).catch(workerError)));
    const ready = prepared.filter((p): p is Ready => 'rule' in p);
    // The batch's rows in one read: what the judgments cost the store does not grow with the batch.
    const rows = await readJudgedMany(
      o.analytics,
      ready.map((r) => ({ key: r.e, source: r.source })),
    ).catch((err: Error) => err);
    claimed.forEach((e, i) => {
      const p = prepared[i]!;
      const outcome: Promise<Outcome> = !('rule' in p)
        ? Promise.resolve(p)
        : rows instanceof Error
          ? Promise.resolve(workerError(rows))
          : judgeReady(deps, p, rows[ready.indexOf(p)], (key, fn) => this.#limit<Outcome>(key, fn)).catch(
              workerError,
            );
      const run: Promise<void> = outcome
        .then(async (settled) => {
          await settleExecution(o.pool, e.id, settled);
          o.log.info(
            { execution: e.id, rule: e.ruleId, status: settled.status, attempt: e.attempts },
            'evaluation',
          );
        })
        .catch((err: Error) =>
          o.log.error({ err: err.message, execution: e.id }, 'evaluation not settled; its lease will expire'),
        )
        .finally(() => this.#inFlight.delete(run));
      this.#inFlight.add(run);
    });
  }

  /** Stops scanning and claiming; judgments under way finish or are left to their lease. */
  async stop(waitMs: number): Promise<void> {
    this.#stopping = true;
    const pass = this.#timer?.stop() ?? Promise.resolve();
    await waitAtMost(Promise.all([pass, ...this.#inFlight]), waitMs);
  }
}
