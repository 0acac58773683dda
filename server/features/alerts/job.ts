/**
 * The worker's alert scheduler. Each tick claims the rules that are due (store.ts: one replica per
 * rule per due time), measures each with ONE Metrics v2 query bounded by its window (compiled by
 * the compiler of `GET /api/public/v2/metrics`), applies the state machine (state.ts), stores the
 * state, its history and the notifications; then sends the notifications that are due, retrying
 * failed ones with backoff.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { Logger } from 'pino';
import { LLM_ENV } from '../../contract/env.ts';
import type { LlmSettings } from '../../kernel/config/env.ts';
import { PassTimer, waitAtMost } from '../../kernel/passes.ts';
import { select } from '../reads/select.ts';
import { type AlertRule, compileEvaluation } from './api.ts';
import { deliver } from './deliver.ts';
import type { AlertEvent } from './notify.ts';
import { nextState } from './state.ts';
import {
  claimDueRules,
  claimNotifications,
  findUsableChannel,
  type Notification,
  recordAttempt,
  recordEvaluation,
} from './store.ts';

export interface AlertJobOptions {
  pool: pg.Pool;
  analytics: ClickHouseClient;
  /** The encryption key of channel secrets and the address policy of their URLs. */
  llm: LlmSettings;
  log: Logger;
  tickMs: number;
  retryBaseMs: number;
}

export interface TickReport {
  evaluated: number;
  failed: number;
  notificationsQueued: number;
  attempts: number;
}

const CLAIM_BATCH = 50;
/** Evaluation queries in flight at once per worker. */
export const CONCURRENT_QUERIES = 8;
const NOTIFICATION_BATCH = 20;
const CONCURRENT_SENDS = 4;
/** Longer than one attempt's timeout: a notification whose sender died is claimed again after it. */
const SEND_LEASE_MS = 60_000;

/** Runs `fn` over `items` with at most `size` at once. */
async function eachLimited<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** The value one evaluation measured: null when the window held no rows or the aggregate is undefined. */
export async function measure(
  analytics: ClickHouseClient,
  rule: AlertRule,
  nowMs: number,
): Promise<number | null> {
  const built = compileEvaluation(rule, rule.projectId, nowMs);
  const [row] = await select({ analytics }, built);
  if (!row || Number(row['m1']) === 0) return null;
  const value = row['m0'] === null ? Number.NaN : Number(row['m0']);
  return Number.isFinite(value) ? value : null;
}

export function eventOf(
  rule: AlertRule,
  value: number | null,
  state: AlertEvent['state'],
  kind: 'transition' | 'reminder',
  at: Date,
): Omit<AlertEvent, 'id'> {
  return {
    type: `alert.${kind}`,
    projectId: rule.projectId,
    rule: {
      id: rule.id,
      name: rule.name,
      view: rule.metric.view,
      measure: rule.metric.measure,
      aggregation: rule.metric.aggregation,
      operator: rule.operator,
      warningThreshold: rule.warningThreshold,
      alertThreshold: rule.alertThreshold,
      windowSeconds: rule.windowSeconds,
    },
    state,
    previousState: rule.state,
    value,
    evaluatedAt: at.toISOString(),
  };
}

export class AlertJob {
  readonly #o: AlertJobOptions;
  #timer: PassTimer | undefined;
  #stopping = false;

  constructor(o: AlertJobOptions) {
    this.#o = o;
  }

  start(): void {
    this.#timer = new PassTimer('alert tick', this.#o.tickMs, () => this.tick(), this.#o.log);
  }

  /** Evaluates every due rule, then sends every due notification. */
  async tick(): Promise<TickReport> {
    const report: TickReport = { evaluated: 0, failed: 0, notificationsQueued: 0, attempts: 0 };
    for (;;) {
      if (this.#stopping) return report;
      const rules = await claimDueRules(this.#o.pool, CLAIM_BATCH);
      await eachLimited(rules, CONCURRENT_QUERIES, async (rule) => {
        try {
          report.notificationsQueued += await this.evaluate(rule);
          report.evaluated++;
        } catch (err) {
          // The state stays as it was; the rule is measured again at its next due time.
          report.failed++;
          this.#o.log.error({ err: (err as Error).message, rule: rule.id }, 'alert evaluation failed');
        }
      });
      if (rules.length < CLAIM_BATCH) break;
    }
    for (;;) {
      if (this.#stopping) return report;
      const due = await claimNotifications(this.#o.pool, NOTIFICATION_BATCH, SEND_LEASE_MS);
      await eachLimited(due, CONCURRENT_SENDS, async (n) => {
        await this.send(n).catch((err: Error) =>
          this.#o.log.error(
            { err: err.message, notification: n.id },
            'alert notification not settled; its lease will expire',
          ),
        );
        report.attempts++;
      });
      if (due.length < NOTIFICATION_BATCH) break;
    }
    return report;
  }

  /** Measures the rule and stores the outcome; returns how many notifications it queued. */
  async evaluate(rule: AlertRule): Promise<number> {
    const now = new Date();
    const value = await measure(this.#o.analytics, rule, now.getTime());
    const next = nextState({
      value,
      operator: rule.operator,
      warningThreshold: rule.warningThreshold,
      alertThreshold: rule.alertThreshold,
      noDataMode: rule.noDataMode,
      previous: rule.state,
      lastNotifiedAt: rule.lastNotifiedAt === null ? null : Date.parse(rule.lastNotifiedAt),
      renotifyMs: rule.renotifySeconds === null ? null : rule.renotifySeconds * 1000,
      now: now.getTime(),
    });
    const queued = await recordEvaluation(this.#o.pool, {
      rule,
      value,
      state: next.state,
      changed: next.changed,
      notify: next.notify,
      evaluatedAt: now,
      event: eventOf(rule, value, next.state, next.notify ?? 'transition', now),
    });
    if (next.changed || next.notify)
      this.#o.log.info(
        { rule: rule.id, state: next.state, value, notify: next.notify, queued },
        'alert rule evaluated',
      );
    return queued;
  }

  async send(n: Notification): Promise<void> {
    const key = this.#o.llm.encryptionKey;
    const channel = key ? await findUsableChannel(this.#o.pool, key, n.projectId, n.channelId) : undefined;
    if (!channel) {
      // No key (the start check allows it only when no channel was stored before) or a deleted channel.
      await recordAttempt(this.#o.pool, n, {
        status: 'failed',
        responseCode: null,
        error: key ? 'channel no longer exists' : `${LLM_ENV.encryptionKey} is not set`,
        retryInMs: null,
      });
      return;
    }
    const r = await deliver(this.#o.pool, this.#o.llm, channel, n, this.#o.retryBaseMs);
    this.#o.log.info(
      {
        notification: n.id,
        channel: n.channelId,
        attempt: n.attempt,
        status: r.status,
        code: r.responseCode,
      },
      'alert notification attempt',
    );
  }

  /** Stops claiming; a tick under way finishes or is left (claimed rules are due again next time). */
  async stop(waitMs: number): Promise<void> {
    this.#stopping = true;
    await waitAtMost(this.#timer?.stop() ?? Promise.resolve(), waitMs);
  }
}
