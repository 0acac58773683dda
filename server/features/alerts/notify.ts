/**
 * What a notification says and how it travels: the event recorded when a rule notifies, the signed
 * webhook request (`sha256=` HMAC-SHA256 over `${timestamp}.${body}`), the Slack incoming-webhook
 * message, and the retry policy. Pure: no I/O (the HMAC is computed, not sent).
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { AlertState, Operator } from './state.ts';

const SIGNATURE_HEADER = 'x-observatory-signature';
const TIMESTAMP_HEADER = 'x-observatory-timestamp';
const EVENT_HEADER = 'x-observatory-event';
const DELIVERY_HEADER = 'x-observatory-delivery';
/** How far from its clock a receiver accepts a signed timestamp (docs/alerts.md's recipe). */
export const REPLAY_WINDOW_SECONDS = 300;
/** Tries of one notification before it is given up, the first included. */
export const MAX_ATTEMPTS = 5;
/** No retry waits longer than this. */
const MAX_RETRY_DELAY_MS = 3_600_000;

export type NotificationKind = 'transition' | 'reminder' | 'test';

/** The body a webhook receives, also stored with the notification so every retry sends the same. */
export interface AlertEvent {
  /** The notification's id: the same on every retry, for receivers to drop duplicates. */
  id: string;
  type: `alert.${NotificationKind}`;
  projectId: string;
  rule: {
    id: string;
    name: string;
    view: string;
    measure: string;
    aggregation: string;
    operator: Operator;
    warningThreshold: number | null;
    alertThreshold: number;
    windowSeconds: number;
  } | null;
  state: AlertState | null;
  previousState: AlertState | null;
  value: number | null;
  evaluatedAt: string;
}

/** A new webhook signing secret, shown once at creation. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('hex')}`;
}

export function sign(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export interface OutgoingRequest {
  body: string;
  headers: Record<string, string>;
}

export function webhookRequest(event: AlertEvent, secret: string, nowMs: number): OutgoingRequest {
  const body = JSON.stringify(event);
  const timestamp = Math.floor(nowMs / 1000);
  return {
    body,
    headers: {
      [SIGNATURE_HEADER]: sign(secret, timestamp, body),
      [TIMESTAMP_HEADER]: String(timestamp),
      [EVENT_HEADER]: event.type,
      [DELIVERY_HEADER]: event.id,
    },
  };
}

const STATE_LABEL: Record<AlertState, string> = {
  ok: 'OK',
  warning: 'WARNING',
  alerting: 'ALERTING',
  no_data: 'NO DATA',
};

/** One line saying what happened, for chat messages. */
export function summaryOf(e: AlertEvent): string {
  if (e.type === 'alert.test' || !e.rule || !e.state) return 'Test notification from Observatory';
  const metric = `${e.rule.aggregation}(${e.rule.measure}) over ${e.rule.view}`;
  const value = e.value === null ? 'no data' : String(e.value);
  const prefix = e.type === 'alert.reminder' ? 'Still ' : '';
  const from =
    e.type === 'alert.transition' && e.previousState ? ` (was ${STATE_LABEL[e.previousState]})` : '';
  return `${prefix}${STATE_LABEL[e.state]}${from}: ${e.rule.name}: ${metric} = ${value} (alert ${e.rule.operator} ${e.rule.alertThreshold})`;
}

/** Slack's incoming-webhook payload: `text` for notifications, blocks for the channel. */
export function slackRequest(event: AlertEvent): OutgoingRequest {
  const text = summaryOf(event);
  const fields = event.rule
    ? [
        { type: 'mrkdwn', text: `*Rule*\n${event.rule.name}` },
        { type: 'mrkdwn', text: `*State*\n${event.state ? STATE_LABEL[event.state] : '-'}` },
        { type: 'mrkdwn', text: `*Value*\n${event.value ?? 'no data'}` },
        { type: 'mrkdwn', text: `*Evaluated at*\n${event.evaluatedAt}` },
      ]
    : undefined;
  const blocks = [
    { type: 'section', text: { type: 'mrkdwn', text } },
    ...(fields ? [{ type: 'section', fields }] : []),
  ];
  return { body: JSON.stringify({ text, blocks }), headers: {} };
}

export type AttemptResult = { responseCode: number } | { error: string };

export type Settlement =
  | { status: 'delivered' }
  | { status: 'retry'; delayMs: number; reason: string }
  | { status: 'failed'; reason: string };

/**
 * What one attempt makes of the notification: 2xx delivers it; a network error, 408, 429 or 5xx
 * is retried after `base * 2^(attempt-1)` until MAX_ATTEMPTS; any other answer is final.
 */
export function settle(result: AttemptResult, attempt: number, baseMs: number): Settlement {
  let reason: string;
  if ('error' in result) reason = result.error;
  else {
    const code = result.responseCode;
    if (code >= 200 && code < 300) return { status: 'delivered' };
    reason = `receiver answered ${code}`;
    if (!(code === 408 || code === 429 || code >= 500)) return { status: 'failed', reason };
  }
  if (attempt >= MAX_ATTEMPTS) return { status: 'failed', reason };
  return { status: 'retry', delayMs: Math.min(baseMs * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS), reason };
}
