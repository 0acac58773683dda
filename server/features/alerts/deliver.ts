/**
 * Sends one notification attempt to its channel through the LLM connections' address guard (the
 * same SSRF policy and whitelist variables), and records it: delivered, failed, or pending with
 * its retry time (notify.ts decides which).
 */
import type pg from 'pg';
import type { AddressPolicy } from '../llm-connections/address-policy.ts';
import { postJsonText } from '../llm-connections/guarded-http.ts';
import { type AttemptResult, settle, slackRequest, webhookRequest } from './notify.ts';
import { type AttemptRecord, type Notification, recordAttempt, type UsableChannel } from './store.ts';

const TIMEOUT_MS = 10_000;

/** One POST of the notification to the channel; the receiver's status, or why there is none. */
export async function attempt(
  policy: AddressPolicy,
  channel: UsableChannel,
  n: Notification,
  nowMs: number,
): Promise<AttemptResult> {
  const req =
    channel.type === 'slack' ? slackRequest(n.event) : webhookRequest(n.event, channel.signingSecret!, nowMs);
  try {
    const res = await postJsonText(policy, new URL(channel.target), req.headers, req.body, TIMEOUT_MS);
    return { responseCode: res.status };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** Attempts the notification and records the attempt; returns what was recorded. */
export async function deliver(
  pool: pg.Pool,
  policy: AddressPolicy,
  channel: UsableChannel,
  n: Notification,
  retryBaseMs: number,
): Promise<AttemptRecord> {
  const result = await attempt(policy, channel, n, Date.now());
  // A test notification is tried once: the caller sees its outcome at once.
  const s = settle(result, n.kind === 'test' ? Number.POSITIVE_INFINITY : n.attempt, retryBaseMs);
  const record: AttemptRecord = {
    status: s.status,
    responseCode: 'responseCode' in result ? result.responseCode : null,
    error: s.status === 'delivered' ? null : s.reason,
    retryInMs: s.status === 'retry' ? s.delayMs : null,
  };
  await recordAttempt(pool, n, record);
  return record;
}
