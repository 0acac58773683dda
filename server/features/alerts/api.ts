/**
 * The alerts API's request shapes and rules (`/api/public/unstable/alert-rules` and
 * `alert-channels`), the response shapes, and the one Metrics v2 query a rule's evaluation runs.
 * A rule's metric is checked by compiling it with the compiler of `GET /api/public/v2/metrics`, so
 * a rule the API accepts is a query that endpoint answers. Pure: no I/O.
 */
import { z } from 'zod';
import { DURATION_EXAMPLES, parseDuration } from '../../contract/duration.ts';
import { HttpError } from '../../kernel/errors.ts';
import { PublicApiError } from '../evaluation/errors.ts';
import { AGGREGATIONS, type Aggregation } from '../reads/aggregations.ts';
import { filterList } from '../reads/filters.ts';
import { own } from '../reads/lookup.ts';
import { buildMetrics, type MetricsQuery } from '../reads/metrics.ts';
import { METRICS_V2_VIEWS } from '../reads/metrics-views.ts';
import { type AlertState, NO_DATA_MODES, type NoDataMode, OPERATORS, type Operator } from './state.ts';

/** The Metrics v2 views a rule may watch: observations and numeric scores. */
export const ALERT_VIEWS = ['observations', 'scores-numeric'] as const;
/** Every aggregation to one number (a histogram is not one). */
export const ALERT_AGGREGATIONS = AGGREGATIONS.filter((a) => a !== 'histogram') as Exclude<
  Aggregation,
  'histogram'
>[];
const MAX_WINDOW_SECONDS = 31 * 86_400;

const duration = (minSeconds: number, maxSeconds: number) =>
  z
    .string()
    .refine((s) => parseDuration(s) !== undefined, `expected a duration such as ${DURATION_EXAMPLES}`)
    .transform((s) => parseDuration(s)! / 1000)
    .refine((n) => n >= minSeconds && n <= maxSeconds, `must be between ${minSeconds}s and ${maxSeconds}s`);

const metric = z.object({
  view: z.enum(ALERT_VIEWS),
  measure: z.string().min(1),
  aggregation: z.enum(ALERT_AGGREGATIONS as [string, ...string[]]),
  filters: filterList.optional().default([]),
});
export type AlertMetric = z.infer<typeof metric>;

const ruleFields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).nullish(),
  metric,
  operator: z.enum(OPERATORS),
  warningThreshold: z.number().finite().nullish(),
  alertThreshold: z.number().finite(),
  window: duration(1, MAX_WINDOW_SECONDS),
  frequency: duration(1, 86_400),
  noDataMode: z.enum(NO_DATA_MODES),
  renotifyInterval: duration(1, MAX_WINDOW_SECONDS).nullish(),
  paused: z.boolean(),
  channelIds: z.array(z.string().min(1)).max(20),
};

export const createRuleRequest = z.object({
  ...ruleFields,
  noDataMode: ruleFields.noDataMode.optional().default('ok'),
  paused: ruleFields.paused.optional().default(false),
  channelIds: ruleFields.channelIds.optional().default([]),
});
export type CreateRuleRequest = z.infer<typeof createRuleRequest>;
export const updateRuleRequest = z.object(ruleFields).partial();
export type UpdateRuleRequest = z.infer<typeof updateRuleRequest>;

/** A rule's definition as stored (durations in seconds). */
export interface RuleDefinition {
  name: string;
  description: string | null;
  metric: AlertMetric;
  operator: Operator;
  warningThreshold: number | null;
  alertThreshold: number;
  windowSeconds: number;
  frequencySeconds: number;
  noDataMode: NoDataMode;
  renotifySeconds: number | null;
  paused: boolean;
  channelIds: string[];
}

export interface AlertRule extends RuleDefinition {
  id: string;
  projectId: string;
  state: AlertState | null;
  stateSince: string | null;
  lastValue: number | null;
  lastEvaluatedAt: string | null;
  lastNotifiedAt: string | null;
  nextEvaluationAt: string;
  createdAt: string;
  updatedAt: string;
}

/** A 400 naming the field, in the unstable API's envelope (`invalid_body`). */
export const invalidField = (field: string, message: string) =>
  new PublicApiError('invalid_body', `${field}: ${message}`, { field });

export function definitionOf(req: CreateRuleRequest): RuleDefinition {
  return {
    name: req.name,
    description: req.description ?? null,
    metric: req.metric,
    operator: req.operator,
    warningThreshold: req.warningThreshold ?? null,
    alertThreshold: req.alertThreshold,
    windowSeconds: req.window,
    frequencySeconds: req.frequency,
    noDataMode: req.noDataMode,
    renotifySeconds: req.renotifyInterval ?? null,
    paused: req.paused,
    channelIds: [...new Set(req.channelIds)],
  };
}

/** The stored definition with the fields a PATCH sent. */
export function mergeDefinition(current: RuleDefinition, patch: UpdateRuleRequest): RuleDefinition {
  const pick = <K extends keyof UpdateRuleRequest>(k: K) => patch[k] !== undefined;
  return {
    name: patch.name ?? current.name,
    description: patch.description === undefined ? current.description : patch.description,
    metric: patch.metric ?? current.metric,
    operator: patch.operator ?? current.operator,
    warningThreshold: pick('warningThreshold') ? (patch.warningThreshold ?? null) : current.warningThreshold,
    alertThreshold: patch.alertThreshold ?? current.alertThreshold,
    windowSeconds: patch.window ?? current.windowSeconds,
    frequencySeconds: patch.frequency ?? current.frequencySeconds,
    noDataMode: patch.noDataMode ?? current.noDataMode,
    renotifySeconds: pick('renotifyInterval') ? (patch.renotifyInterval ?? null) : current.renotifySeconds,
    paused: patch.paused ?? current.paused,
    channelIds: patch.channelIds ? [...new Set(patch.channelIds)] : current.channelIds,
  };
}

/**
 * The one Metrics v2 query of an evaluation: the rule's measure and a row count (no rows is "no
 * data" whatever the aggregation returns on an empty set), over `[now - window, now)`.
 */
export function evaluationQuery(
  d: Pick<RuleDefinition, 'metric' | 'windowSeconds'>,
  nowMs: number,
): MetricsQuery {
  return {
    view: d.metric.view,
    dimensions: [],
    metrics: [
      {
        measure: d.metric.measure,
        aggregation: d.metric.aggregation as MetricsQuery['metrics'][0]['aggregation'],
      },
      { measure: 'count', aggregation: 'count' },
    ],
    filters: d.metric.filters,
    fromTimestamp: new Date(nowMs - d.windowSeconds * 1000).toISOString(),
    toTimestamp: new Date(nowMs).toISOString(),
    timeDimension: null,
    orderBy: null,
    config: { row_limit: 1 },
  };
}

/** Compiles the evaluation query as `GET /api/public/v2/metrics` would; throws naming the field. */
export function compileEvaluation(
  d: Pick<RuleDefinition, 'metric' | 'windowSeconds'>,
  projectId: string,
  nowMs: number,
) {
  const view = own(METRICS_V2_VIEWS, d.metric.view)!;
  if (own(view.measures, d.metric.measure) === undefined)
    throw invalidField(
      'metric.measure',
      `unknown measure ${d.metric.measure} for view ${d.metric.view} (available: ${Object.keys(view.measures).join(', ')})`,
    );
  try {
    return buildMetrics(view, projectId, evaluationQuery(d, nowMs));
  } catch (err) {
    if (err instanceof HttpError) throw invalidField('metric.filters', err.message.replace(/^query: /, ''));
    throw err;
  }
}

/** Why the definition cannot be stored (beyond its shape); throws a 400 naming the field. */
export function checkDefinition(d: RuleDefinition): void {
  compileEvaluation(d, 'validation', Date.now());
  if (d.warningThreshold !== null) {
    const upward = d.operator === '>' || d.operator === '>=';
    if (upward ? d.warningThreshold > d.alertThreshold : d.warningThreshold < d.alertThreshold)
      throw invalidField(
        'warningThreshold',
        `must be reached before alertThreshold: ${upward ? 'at most' : 'at least'} ${d.alertThreshold} for operator ${d.operator}`,
      );
  }
}

const seconds = (n: number | null) => (n === null ? null : `${n}s`);

export function publicRule(r: AlertRule) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    metric: r.metric,
    operator: r.operator,
    warningThreshold: r.warningThreshold,
    alertThreshold: r.alertThreshold,
    window: seconds(r.windowSeconds),
    frequency: seconds(r.frequencySeconds),
    noDataMode: r.noDataMode,
    renotifyInterval: seconds(r.renotifySeconds),
    paused: r.paused,
    channelIds: r.channelIds,
    state: r.state,
    stateSince: r.stateSince,
    lastValue: r.lastValue,
    lastEvaluatedAt: r.lastEvaluatedAt,
    lastNotifiedAt: r.lastNotifiedAt,
    nextEvaluationAt: r.nextEvaluationAt,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export const CHANNEL_TYPES = ['webhook', 'slack'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

const channelName = z.string().trim().min(1).max(200);
const httpUrl = z.string().min(1).max(2000);
export const createChannelRequest = z.object({
  name: channelName,
  type: z.enum(CHANNEL_TYPES),
  /** The webhook's endpoint, or Slack's incoming-webhook URL (a secret: stored encrypted). */
  url: httpUrl,
});
export const updateChannelRequest = z.object({
  name: channelName.optional(),
  url: httpUrl.optional(),
  /** A new signing secret for a webhook, returned in this response only. */
  rotateSecret: z.boolean().optional(),
});

export interface AlertChannel {
  id: string;
  projectId: string;
  name: string;
  type: ChannelType;
  /** The webhook's URL; null for Slack, whose URL is the secret. */
  url: string | null;
  displaySecret: string;
  createdAt: string;
  updatedAt: string;
}

/** The response shape: the signing secret and Slack's URL never leave the server after creation. */
export function publicChannel(c: AlertChannel, shownOnce?: { signingSecret: string }) {
  return {
    id: c.id,
    name: c.name,
    type: c.type,
    url: c.url,
    displaySecret: c.displaySecret,
    ...(shownOnce ?? {}),
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
}
