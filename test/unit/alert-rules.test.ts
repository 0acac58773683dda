import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkDefinition,
  compileEvaluation,
  createRuleRequest,
  definitionOf,
  mergeDefinition,
} from '../../server/features/alerts/api.ts';
import {
  type AlertEvent,
  MAX_ATTEMPTS,
  settle,
  sign,
  slackRequest,
  webhookRequest,
} from '../../server/features/alerts/notify.ts';
import { nextState, type StateInput } from '../../server/features/alerts/state.ts';
import { verifySignature } from '../fixtures/webhook-receiver.ts';

const base: StateInput = {
  value: 0,
  operator: '>',
  warningThreshold: 5,
  alertThreshold: 10,
  noDataMode: 'ok',
  previous: 'ok',
  lastNotifiedAt: null,
  renotifyMs: null,
  now: 1_000_000,
};

describe('the alert state machine', () => {
  /** What one evaluation does: a notified transition, a silent stay, or a reminder while it stays. */
  const moved = (state: string) => ({ state, changed: true, notify: 'transition' });
  const stays = (state: string) => ({ state, changed: false, notify: null });
  const reminds = (state: string) => ({ state, changed: false, notify: 'reminder' });
  it.each<[string, Partial<StateInput>, { state: string; changed: boolean; notify: string | null }]>([
    [
      'first evaluation, ok: stored, no notification',
      { previous: null, value: 1 },
      { state: 'ok', changed: true, notify: null },
    ],
    ['first evaluation, alerting: notifies', { previous: null, value: 11 }, moved('alerting')],
    ['stays ok', { value: 5 }, stays('ok')],
    ['ok to warning above the warning threshold', { value: 6 }, moved('warning')],
    ['warning to alerting', { previous: 'warning', value: 10.5 }, moved('alerting')],
    ['equal to the threshold does not breach >', { value: 10 }, moved('warning')],
    ['equal to the threshold breaches >=', { operator: '>=', value: 10 }, moved('alerting')],
    ['alerting resolves to ok', { previous: 'alerting', value: 1 }, moved('ok')],
    ['no warning threshold: straight to alerting', { warningThreshold: null, value: 11 }, moved('alerting')],
    ['no warning threshold: below alert is ok', { warningThreshold: null, value: 9 }, stays('ok')],
    [
      '< : below the alert threshold alerts',
      { operator: '<', warningThreshold: 0.8, alertThreshold: 0.5, value: 0.4 },
      moved('alerting'),
    ],
    [
      '<= : at the warning threshold warns',
      { operator: '<=', warningThreshold: 0.8, alertThreshold: 0.5, value: 0.8 },
      moved('warning'),
    ],
    [
      '< : above both is ok',
      { operator: '<', warningThreshold: 0.8, alertThreshold: 0.5, value: 0.9 },
      stays('ok'),
    ],
    ['no data, mode ok', { value: null }, stays('ok')],
    ['no data, mode no_data', { value: null, noDataMode: 'no_data' }, moved('no_data')],
    ['no data, mode alerting', { value: null, noDataMode: 'alerting' }, moved('alerting')],
    ['NaN counts as no data', { value: Number.NaN, noDataMode: 'no_data' }, moved('no_data')],
    ['no data to data resolves', { previous: 'no_data', noDataMode: 'no_data', value: 1 }, moved('ok')],
    [
      'still alerting, no re-notification interval',
      { previous: 'alerting', value: 20, lastNotifiedAt: 0 },
      stays('alerting'),
    ],
    [
      'still alerting, inside the interval',
      { previous: 'alerting', value: 20, renotifyMs: 60_000, lastNotifiedAt: 990_000 },
      stays('alerting'),
    ],
    [
      'still alerting, the interval passed: reminder',
      { previous: 'alerting', value: 20, renotifyMs: 60_000, lastNotifiedAt: 940_000 },
      reminds('alerting'),
    ],
    [
      'still alerting, never notified: reminder',
      { previous: 'alerting', value: 20, renotifyMs: 60_000 },
      reminds('alerting'),
    ],
    [
      'still warning, the interval passed: reminder',
      { previous: 'warning', value: 7, renotifyMs: 1, lastNotifiedAt: 0 },
      reminds('warning'),
    ],
    [
      'still ok: never a reminder',
      { previous: 'ok', value: 1, renotifyMs: 1, lastNotifiedAt: 0 },
      stays('ok'),
    ],
  ])('%s', (_name, input, expected) => {
    expect(nextState({ ...base, ...input })).toEqual(expected);
  });
});

const event: AlertEvent = {
  id: 'n-1',
  type: 'alert.transition',
  projectId: 'p',
  rule: {
    id: 'r',
    name: 'cost',
    view: 'observations',
    measure: 'totalCost',
    aggregation: 'sum',
    operator: '>',
    warningThreshold: 1,
    alertThreshold: 2,
    windowSeconds: 300,
  },
  state: 'alerting',
  previousState: 'ok',
  value: 3,
  evaluatedAt: '2026-01-01T00:00:00.000Z',
};

describe('signed webhooks', () => {
  it('sign HMAC-SHA256 over "timestamp.body" with the timestamp in seconds', () => {
    const req = webhookRequest(event, 'whsec_x', 1_700_000_000_999);
    expect(req.headers['x-observatory-timestamp']).toBe('1700000000');
    const expected = createHmac('sha256', 'whsec_x').update(`1700000000.${req.body}`).digest('hex');
    expect(req.headers['x-observatory-signature']).toBe(`sha256=${expected}`);
    expect(JSON.parse(req.body)).toEqual(event);
    expect(req.headers['x-observatory-delivery']).toBe('n-1');
  });
  it.each([
    ['valid', 'whsec_x', 1_700_000_000, 'body', 1_700_000_100, true],
    ['another secret', 'whsec_y', 1_700_000_000, 'body', 1_700_000_100, false],
    ['another body', 'whsec_x', 1_700_000_000, 'body2', 1_700_000_100, false],
    ['older than the replay window', 'whsec_x', 1_700_000_000, 'body', 1_700_000_301, false],
    ['from the future past the window', 'whsec_x', 1_700_000_400, 'body', 1_700_000_000, false],
  ])('the receiver recipe: %s', (_n, secret, ts, body, now, ok) => {
    expect(verifySignature(secret, String(ts), body, sign('whsec_x', 1_700_000_000, 'body'), now)).toBe(ok);
  });
  it('Slack messages carry a text line and the rule', () => {
    const body = JSON.parse(slackRequest(event).body);
    expect(body.text).toBe('ALERTING (was OK): cost: sum(totalCost) over observations = 3 (alert > 2)');
    expect(JSON.stringify(body.blocks)).toContain('*Rule*\\ncost');
  });
});

describe('retries', () => {
  it.each<[string, Parameters<typeof settle>[0], number, ReturnType<typeof settle>]>([
    ['2xx delivers', { responseCode: 204 }, 1, { status: 'delivered' }],
    [
      '5xx retries after the base',
      { responseCode: 503 },
      1,
      { status: 'retry', delayMs: 1000, reason: 'receiver answered 503' },
    ],
    [
      'then twice as long',
      { responseCode: 500 },
      3,
      { status: 'retry', delayMs: 4000, reason: 'receiver answered 500' },
    ],
    [
      '429 retries',
      { responseCode: 429 },
      2,
      { status: 'retry', delayMs: 2000, reason: 'receiver answered 429' },
    ],
    [
      'network errors retry',
      { error: 'ECONNREFUSED' },
      1,
      { status: 'retry', delayMs: 1000, reason: 'ECONNREFUSED' },
    ],
    ['other 4xx are final', { responseCode: 404 }, 1, { status: 'failed', reason: 'receiver answered 404' }],
    [
      'the last attempt is final',
      { responseCode: 500 },
      MAX_ATTEMPTS,
      { status: 'failed', reason: 'receiver answered 500' },
    ],
  ])('%s', (_n, result, attempt, expected) => {
    expect(settle(result, attempt, 1000)).toEqual(expected);
  });
});

describe('rule definitions', () => {
  const request = {
    name: 'latency',
    metric: { view: 'observations', measure: 'latency', aggregation: 'p95' },
    operator: '>',
    warningThreshold: 500,
    alertThreshold: 1000,
    window: '5m',
    frequency: '1m',
  };
  it('parse durations to seconds with defaults', () => {
    const d = definitionOf(createRuleRequest.parse(request));
    expect(d).toMatchObject({
      windowSeconds: 300,
      frequencySeconds: 60,
      noDataMode: 'ok',
      paused: false,
      renotifySeconds: null,
    });
  });
  it.each([
    [{ window: '5 minutes' }, 'window'],
    [{ metric: { view: 'traces', measure: 'count', aggregation: 'count' } }, 'metric.view'],
    [
      { metric: { view: 'observations', measure: 'latency', aggregation: 'histogram' } },
      'metric.aggregation',
    ],
    [{ operator: '==' }, 'operator'],
  ])('refuse a bad shape naming the field (%o)', (patch, field) => {
    const parsed = createRuleRequest.safeParse({ ...request, ...patch });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues[0]!.path.join('.')).toBe(field);
  });
  it.each([
    [
      { metric: { view: 'observations', measure: 'nope', aggregation: 'sum' } },
      /^metric\.measure: unknown measure nope/,
    ],
    [
      { metric: { view: 'scores-numeric', measure: 'latency', aggregation: 'sum' } },
      /^metric\.measure: unknown measure latency/,
    ],
    [
      {
        metric: {
          view: 'observations',
          measure: 'count',
          aggregation: 'count',
          filters: [{ column: 'nope', operator: '=', value: 'x', type: 'string' }],
        },
      },
      /^metric\.filters: /,
    ],
    [{ warningThreshold: 2000 }, /^warningThreshold: must be reached before alertThreshold: at most 1000/],
    [{ operator: '<' }, /^warningThreshold: must be reached before alertThreshold: at least 1000/],
  ])('refuse a definition that cannot be evaluated (%o)', (patch, message) => {
    const d = definitionOf(createRuleRequest.parse({ ...request, ...patch }));
    expect(() => checkDefinition(d)).toThrow(message);
  });
  it('a PATCH changes only what it sends; null clears a threshold', () => {
    const d = definitionOf(createRuleRequest.parse(request));
    expect(mergeDefinition(d, { warningThreshold: null, frequency: 30 })).toEqual({
      ...d,
      warningThreshold: null,
      frequencySeconds: 30,
    });
  });
  it('compile to one Metrics v2 query over the window, with a row count beside the measure', () => {
    const d = definitionOf(createRuleRequest.parse(request));
    const built = compileEvaluation(d, 'proj', Date.parse('2026-01-01T00:05:00Z'));
    expect(built.sql).toMatch(
      /^SELECT quantile\(0\.95\)\(.*\) AS m0, count\(\) AS m1\nFROM events_core FINAL/,
    );
    expect(built.sql).not.toContain('GROUP BY');
    expect(Object.values(built.params)).toEqual(expect.arrayContaining(['proj']));
    expect(built.keys).toEqual({ m0: 'p95_latency', m1: 'count_count' });
  });
});
