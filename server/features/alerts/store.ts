/**
 * Alert rules, channels, state history and notifications in PostgreSQL; every API statement is
 * scoped by the caller's project. The worker claims due rules by advancing `next_evaluation_at`
 * under `FOR UPDATE SKIP LOCKED`, so of several replicas exactly one evaluates a rule per due time,
 * and claims due notifications the same way under a lease.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { deleteProjectRow, projectRecords } from '../../platform/datastores/project-page.ts';
import { inTransaction } from '../../platform/datastores/transaction.ts';
import { decryptSecret, encryptSecret, maskSecret } from '../llm-connections/secrets.ts';
import type { AlertChannel, AlertMetric, AlertRule, ChannelType, RuleDefinition } from './api.ts';
import type { AlertEvent, NotificationKind } from './notify.ts';
import type { AlertState, NoDataMode, Operator } from './state.ts';

interface RuleRow {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  view: string;
  measure: string;
  aggregation: string;
  filters: AlertMetric['filters'];
  operator: Operator;
  warning_threshold: number | null;
  alert_threshold: number;
  window_seconds: number;
  frequency_seconds: number;
  no_data_mode: NoDataMode;
  renotify_seconds: number | null;
  paused: boolean;
  state: AlertState | null;
  state_since: Date | null;
  last_value: number | null;
  last_evaluated_at: Date | null;
  last_notified_at: Date | null;
  next_evaluation_at: Date;
  created_at: Date;
  updated_at: Date;
  channel_ids: string[];
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

const toRule = (r: RuleRow): AlertRule => ({
  id: r.id,
  projectId: r.project_id,
  name: r.name,
  description: r.description,
  metric: {
    view: r.view as AlertMetric['view'],
    measure: r.measure,
    aggregation: r.aggregation,
    filters: r.filters,
  },
  operator: r.operator,
  warningThreshold: r.warning_threshold,
  alertThreshold: r.alert_threshold,
  windowSeconds: r.window_seconds,
  frequencySeconds: r.frequency_seconds,
  noDataMode: r.no_data_mode,
  renotifySeconds: r.renotify_seconds,
  paused: r.paused,
  channelIds: r.channel_ids ?? [],
  state: r.state,
  stateSince: iso(r.state_since),
  lastValue: r.last_value,
  lastEvaluatedAt: iso(r.last_evaluated_at),
  lastNotifiedAt: iso(r.last_notified_at),
  nextEvaluationAt: r.next_evaluation_at.toISOString(),
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

const RULE_SELECT = `SELECT r.*, COALESCE((SELECT array_agg(c.channel_id ORDER BY c.channel_id)
  FROM alert_rule_channels c WHERE c.rule_id = r.id), '{}') AS channel_ids FROM alert_rules r`;
const RULES = { table: 'alert_rules', select: RULE_SELECT, alias: 'r' };
const RULES_ORDER = 'r.created_at, r.id';

/** The ids among `ids` that are not channels of the project. */
export async function unknownChannels(pool: pg.Pool, projectId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await pool.query<{ id: string }>(
    'SELECT id FROM alert_channels WHERE project_id = $1 AND id = ANY($2::text[])',
    [projectId, ids],
  );
  const found = new Set(rows.map((r) => r.id));
  return ids.filter((id) => !found.has(id));
}

const definitionParams = (d: RuleDefinition) => [
  d.name,
  d.description,
  d.metric.view,
  d.metric.measure,
  d.metric.aggregation,
  JSON.stringify(d.metric.filters),
  d.operator,
  d.warningThreshold,
  d.alertThreshold,
  d.windowSeconds,
  d.frequencySeconds,
  d.noDataMode,
  d.renotifySeconds,
  d.paused,
];

async function setChannels(client: pg.PoolClient, ruleId: string, ids: string[]): Promise<void> {
  await client.query('DELETE FROM alert_rule_channels WHERE rule_id = $1', [ruleId]);
  if (ids.length > 0)
    await client.query(
      'INSERT INTO alert_rule_channels (rule_id, channel_id) SELECT $1, unnest($2::text[])',
      [ruleId, ids],
    );
}

/** Creates the rule; undefined when the project has a rule of that name. */
export async function createRule(
  pool: pg.Pool,
  projectId: string,
  d: RuleDefinition,
): Promise<string | undefined> {
  const id = randomUUID();
  return inTransaction(pool, async (c) => {
    const { rowCount } = await c.query(
      `INSERT INTO alert_rules (id, project_id, name, description, view, measure, aggregation, filters, operator,
         warning_threshold, alert_threshold, window_seconds, frequency_seconds, no_data_mode, renotify_seconds, paused)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13, $14, $15, $16)
       ON CONFLICT (project_id, name) DO NOTHING`,
      [id, projectId, ...definitionParams(d)],
    );
    if (rowCount === 0) return undefined;
    await setChannels(c, id, d.channelIds);
    return id;
  });
}

/**
 * Replaces the rule's definition; false when the name is another rule's. A changed metric, window
 * or threshold is evaluated at the next tick; resuming a paused rule too.
 */
export async function updateRule(pool: pg.Pool, rule: AlertRule, d: RuleDefinition): Promise<boolean> {
  return inTransaction(pool, async (c) => {
    const clash = await c.query(
      'SELECT 1 FROM alert_rules WHERE project_id = $1 AND name = $2 AND id <> $3',
      [rule.projectId, d.name, rule.id],
    );
    if (clash.rows.length > 0) return false;
    await c.query(
      `UPDATE alert_rules SET name = $3, description = $4, view = $5, measure = $6, aggregation = $7,
         filters = $8::jsonb, operator = $9, warning_threshold = $10, alert_threshold = $11, window_seconds = $12,
         frequency_seconds = $13, no_data_mode = $14, renotify_seconds = $15, paused = $16,
         next_evaluation_at = now(), updated_at = now()
       WHERE project_id = $1 AND id = $2`,
      [rule.projectId, rule.id, ...definitionParams(d)],
    );
    await setChannels(c, rule.id, d.channelIds);
    return true;
  });
}

const rules = projectRecords(RULES, RULES_ORDER, toRule);
export const findRule = rules.find;

export const listRules = rules.page;

export function deleteRule(pool: pg.Pool, projectId: string, id: string): Promise<boolean> {
  return deleteProjectRow(pool, 'alert_rules', projectId, id);
}

export interface HistoryEntry {
  fromState: AlertState | null;
  toState: AlertState;
  value: number | null;
  evaluatedAt: string;
}

export async function ruleHistory(pool: pg.Pool, ruleId: string, limit: number, offset: number) {
  const [list, count] = await Promise.all([
    pool.query<{
      from_state: AlertState | null;
      to_state: AlertState;
      value: number | null;
      evaluated_at: Date;
    }>(
      `SELECT from_state, to_state, value, evaluated_at FROM alert_state_history WHERE rule_id = $1
       ORDER BY evaluated_at DESC, id LIMIT $2 OFFSET $3`,
      [ruleId, limit, offset],
    ),
    pool.query<{ n: number }>('SELECT count(*)::int AS n FROM alert_state_history WHERE rule_id = $1', [
      ruleId,
    ]),
  ]);
  const entries: HistoryEntry[] = list.rows.map((r) => ({
    fromState: r.from_state,
    toState: r.to_state,
    value: r.value,
    evaluatedAt: r.evaluated_at.toISOString(),
  }));
  return { items: entries, total: count.rows[0]!.n };
}

/** Claims up to `limit` due, unpaused rules and moves each one's due time a frequency ahead. */
export async function claimDueRules(pool: pg.Pool, limit: number): Promise<AlertRule[]> {
  const { rows } = await pool.query<RuleRow>(
    `WITH due AS (
       SELECT id FROM alert_rules WHERE NOT paused AND next_evaluation_at <= now()
       ORDER BY next_evaluation_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     UPDATE alert_rules r SET next_evaluation_at = now() + make_interval(secs => r.frequency_seconds)
     FROM due WHERE r.id = due.id
     RETURNING r.*, COALESCE((SELECT array_agg(c.channel_id ORDER BY c.channel_id)
       FROM alert_rule_channels c WHERE c.rule_id = r.id), '{}') AS channel_ids`,
    [limit],
  );
  return rows.map(toRule);
}

export interface EvaluationRecord {
  rule: AlertRule;
  value: number | null;
  state: AlertState;
  changed: boolean;
  notify: NotificationKind | null;
  evaluatedAt: Date;
  /** The event each channel is sent, its id filled per notification. */
  event: Omit<AlertEvent, 'id'>;
}

/**
 * Stores one evaluation: the rule's state, a history row on a change, a notification per channel
 * when it notifies. Skipped (the update finds no row) when the rule was paused or deleted
 * meanwhile, or when another evaluation was stored since this one's claim (a PATCH or a slow query
 * can let two overlap): each state is acted on once.
 */
export async function recordEvaluation(pool: pg.Pool, e: EvaluationRecord): Promise<number> {
  return inTransaction(pool, async (c) => {
    const notifying = e.notify !== null && e.rule.channelIds.length > 0;
    const { rowCount } = await c.query(
      `UPDATE alert_rules SET state = $2, last_value = $3, last_evaluated_at = $4,
         state_since = CASE WHEN $5::boolean THEN $4 ELSE state_since END,
         last_notified_at = CASE WHEN $6::boolean THEN $4 ELSE last_notified_at END
       WHERE id = $1 AND NOT paused AND last_evaluated_at IS NOT DISTINCT FROM $7::timestamptz`,
      [e.rule.id, e.state, e.value, e.evaluatedAt, e.changed, notifying, e.rule.lastEvaluatedAt],
    );
    if (rowCount === 0) return 0;
    if (e.changed)
      await c.query(
        `INSERT INTO alert_state_history (id, rule_id, from_state, to_state, value, evaluated_at)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [randomUUID(), e.rule.id, e.rule.state, e.state, e.value, e.evaluatedAt],
      );
    if (!notifying) return 0;
    const ids = e.rule.channelIds.map(() => randomUUID());
    await c.query(
      `INSERT INTO alert_notifications (id, project_id, rule_id, channel_id, kind, event)
       SELECT t.id, $1, $2, t.channel_id, $3, jsonb_set($4::jsonb, '{id}', to_jsonb(t.id))
       FROM unnest($5::text[], $6::text[]) AS t(id, channel_id)
       JOIN alert_channels ch ON ch.id = t.channel_id`,
      [e.rule.projectId, e.rule.id, e.notify, JSON.stringify({ id: '', ...e.event }), ids, e.rule.channelIds],
    );
    return ids.length;
  });
}

interface ChannelRow {
  id: string;
  project_id: string;
  name: string;
  type: ChannelType;
  url: string | null;
  secret: string;
  display_secret: string;
  created_at: Date;
  updated_at: Date;
}

const toChannel = (r: ChannelRow): AlertChannel => ({
  id: r.id,
  projectId: r.project_id,
  name: r.name,
  type: r.type,
  url: r.url,
  displaySecret: r.display_secret,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

/** A channel with its secret, for sending. */
export interface UsableChannel extends AlertChannel {
  /** The URL to POST to (Slack's is the secret). */
  target: string;
  /** The webhook's signing secret; undefined for Slack. */
  signingSecret: string | undefined;
}

function usable(key: Buffer, r: ChannelRow): UsableChannel {
  const secret = decryptSecret(key, r.secret);
  return r.type === 'slack'
    ? { ...toChannel(r), target: secret, signingSecret: undefined }
    : { ...toChannel(r), target: r.url!, signingSecret: secret };
}

/** Seals the channel's secret: the webhook's signing secret, or Slack's URL. */
function secretColumns(key: Buffer, type: ChannelType, url: string, signingSecret: string | undefined) {
  return type === 'slack'
    ? { url: null, secret: encryptSecret(key, url), display: maskSecret(url) }
    : { url, secret: encryptSecret(key, signingSecret!), display: maskSecret(signingSecret!) };
}

/** Creates the channel; undefined when the project has a channel of that name. */
export async function createChannel(
  pool: pg.Pool,
  key: Buffer,
  projectId: string,
  req: { name: string; type: ChannelType; url: string },
  signingSecret: string | undefined,
): Promise<AlertChannel | undefined> {
  const s = secretColumns(key, req.type, req.url, signingSecret);
  const { rows } = await pool.query<ChannelRow>(
    `INSERT INTO alert_channels (id, project_id, name, type, url, secret, display_secret)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (project_id, name) DO NOTHING RETURNING *`,
    [randomUUID(), projectId, req.name, req.type, s.url, s.secret, s.display],
  );
  return rows[0] && toChannel(rows[0]);
}

/** Applies a change; 'conflict' when the name is another channel's. */
export async function updateChannel(
  pool: pg.Pool,
  key: Buffer,
  current: UsableChannel,
  change: { name?: string | undefined; url?: string | undefined; signingSecret?: string | undefined },
): Promise<AlertChannel | 'conflict'> {
  const s = secretColumns(
    key,
    current.type,
    change.url ?? current.target,
    change.signingSecret ?? current.signingSecret,
  );
  const { rows } = await pool.query<ChannelRow>(
    `UPDATE alert_channels SET name = $3, url = $4, secret = $5, display_secret = $6, updated_at = now()
     WHERE project_id = $1 AND id = $2
       AND NOT EXISTS (SELECT 1 FROM alert_channels o WHERE o.project_id = $1 AND o.name = $3 AND o.id <> $2)
     RETURNING *`,
    [current.projectId, current.id, change.name ?? current.name, s.url, s.secret, s.display],
  );
  return rows[0] ? toChannel(rows[0]) : 'conflict';
}

async function channelRow(pool: pg.Pool, projectId: string, id: string) {
  const { rows } = await pool.query<ChannelRow>(
    'SELECT * FROM alert_channels WHERE project_id = $1 AND id = $2',
    [projectId, id],
  );
  return rows[0];
}

export async function findChannel(pool: pg.Pool, projectId: string, id: string) {
  const r = await channelRow(pool, projectId, id);
  return r && toChannel(r);
}

export async function findUsableChannel(pool: pg.Pool, key: Buffer, projectId: string, id: string) {
  const r = await channelRow(pool, projectId, id);
  return r && usable(key, r);
}

const channels = projectRecords('alert_channels', 'created_at, id', toChannel);

export const listChannels = channels.page;

export function deleteChannel(pool: pg.Pool, projectId: string, id: string): Promise<boolean> {
  return deleteProjectRow(pool, 'alert_channels', projectId, id);
}

/** Whether any channel is stored (then the encryption key is required at start). */
export async function anyChannelExists(pool: pg.Pool): Promise<boolean> {
  const { rows } = await pool.query('SELECT 1 FROM alert_channels LIMIT 1');
  return rows.length > 0;
}

export interface Notification {
  id: string;
  projectId: string;
  ruleId: string | null;
  channelId: string;
  kind: NotificationKind;
  event: AlertEvent;
  /** This attempt's number (the claim counts it). */
  attempt: number;
}

interface NotificationRow {
  id: string;
  project_id: string;
  rule_id: string | null;
  channel_id: string;
  kind: NotificationKind;
  event: AlertEvent;
  attempts: number;
}

const toNotification = (r: NotificationRow): Notification => ({
  id: r.id,
  projectId: r.project_id,
  ruleId: r.rule_id,
  channelId: r.channel_id,
  kind: r.kind,
  event: r.event,
  attempt: r.attempts,
});

/** Records a test notification, claimed for this caller's immediate attempt. */
export async function createTestNotification(
  pool: pg.Pool,
  channel: AlertChannel,
  event: Omit<AlertEvent, 'id'>,
  leaseMs: number,
): Promise<Notification> {
  const id = randomUUID();
  const { rows } = await pool.query<NotificationRow>(
    `INSERT INTO alert_notifications (id, project_id, channel_id, kind, event, attempts, locked_until)
     VALUES ($1, $2, $3, 'test', $4::jsonb, 1, now() + make_interval(secs => $5::double precision / 1000)) RETURNING *`,
    [id, channel.projectId, channel.id, JSON.stringify({ ...event, id }), leaseMs],
  );
  return toNotification(rows[0]!);
}

/** Claims up to `limit` pending notifications that are due, for `leaseMs`; each claim is an attempt. */
export async function claimNotifications(
  pool: pg.Pool,
  limit: number,
  leaseMs: number,
): Promise<Notification[]> {
  const { rows } = await pool.query<NotificationRow>(
    `UPDATE alert_notifications SET attempts = attempts + 1, updated_at = now(),
       locked_until = now() + make_interval(secs => $2::double precision / 1000)
     WHERE id IN (SELECT id FROM alert_notifications
       WHERE status = 'pending' AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until < now())
       ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING *`,
    [limit, leaseMs],
  );
  return rows.map(toNotification);
}

export interface AttemptRecord {
  status: 'delivered' | 'failed' | 'retry';
  responseCode: number | null;
  error: string | null;
  retryInMs: number | null;
}

/** Records the attempt and settles the notification: delivered, failed, or pending until its retry. */
export async function recordAttempt(pool: pg.Pool, n: Notification, a: AttemptRecord): Promise<void> {
  await inTransaction(pool, async (c) => {
    const { rows } = await c.query<{ next: Date | null }>(
      `UPDATE alert_notifications SET status = $2, locked_until = NULL, updated_at = now(),
         next_attempt_at = CASE WHEN $3::double precision IS NULL THEN next_attempt_at
           ELSE now() + make_interval(secs => $3::double precision / 1000) END
       WHERE id = $1 RETURNING CASE WHEN $3::double precision IS NULL THEN NULL ELSE next_attempt_at END AS next`,
      [n.id, a.status === 'retry' ? 'pending' : a.status, a.retryInMs],
    );
    await c.query(
      `INSERT INTO alert_notification_attempts (notification_id, attempt, status, response_code, error, next_retry_at)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (notification_id, attempt) DO NOTHING`,
      [
        n.id,
        n.attempt,
        a.status === 'delivered' ? 'delivered' : 'failed',
        a.responseCode,
        a.error,
        rows[0]?.next ?? null,
      ],
    );
  });
}

export interface NotificationView {
  id: string;
  ruleId: string | null;
  channelId: string;
  kind: NotificationKind;
  status: string;
  event: AlertEvent;
  createdAt: string;
  attempts: {
    attempt: number;
    status: string;
    responseCode: number | null;
    error: string | null;
    nextRetryAt: string | null;
    attemptedAt: string;
  }[];
}

/** The project's notifications, newest first, each with its attempts. */
export async function listNotifications(
  pool: pg.Pool,
  projectId: string,
  filter: { ruleId?: string | undefined; channelId?: string | undefined },
  limit: number,
  offset: number,
) {
  const where =
    'n.project_id = $1 AND ($2::text IS NULL OR n.rule_id = $2) AND ($3::text IS NULL OR n.channel_id = $3)';
  const args = [projectId, filter.ruleId ?? null, filter.channelId ?? null];
  const [list, count] = await Promise.all([
    pool.query<
      NotificationRow & { status: string; created_at: Date; attempt_list: NotificationView['attempts'] }
    >(
      `SELECT n.*, COALESCE((SELECT json_agg(json_build_object('attempt', a.attempt, 'status', a.status,
           'responseCode', a.response_code, 'error', a.error, 'nextRetryAt', a.next_retry_at,
           'attemptedAt', a.attempted_at) ORDER BY a.attempt)
         FROM alert_notification_attempts a WHERE a.notification_id = n.id), '[]') AS attempt_list
       FROM alert_notifications n WHERE ${where} ORDER BY n.created_at DESC, n.id LIMIT $4 OFFSET $5`,
      [...args, limit, offset],
    ),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM alert_notifications n WHERE ${where}`, args),
  ]);
  const views: NotificationView[] = list.rows.map((r) => ({
    id: r.id,
    ruleId: r.rule_id,
    channelId: r.channel_id,
    kind: r.kind,
    status: r.status,
    event: r.event,
    createdAt: r.created_at.toISOString(),
    attempts: r.attempt_list,
  }));
  return { items: views, total: count.rows[0]!.n };
}
