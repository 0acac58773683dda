/**
 * Alerts end to end: observations sent by the JS SDK (`@langfuse/tracing` over OTLP) and scores
 * sent through the ingestion API to `observatory web` (events_only), alert rules and channels made
 * through the public API, TWO `observatory worker` processes evaluating on a one-second tick, and
 * a real HTTP receiver on 127.0.0.1 (reached only because 127.0.0.1 is whitelisted) that checks
 * every signature and body and counts notifications:
 * a rule driven from ok to warning to alerting and back by sending more data notifies once per
 * transition (no duplicate from the second worker), a paused rule never notifies, a reminder comes
 * after the re-notification interval, a failing receiver gets retries with backoff, each recorded.
 */
import { randomUUID } from 'node:crypto';
import { startObservation } from '@langfuse/tracing';
import pgLib from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventOf } from '../../server/features/alerts/job.ts';
import { findRule, recordEvaluation } from '../../server/features/alerts/store.ts';
import { callJson, type JsonBody } from '../fixtures/api-client.ts';
import { llmConnectionEnv } from '../fixtures/llm-connection-env.ts';
import { withSdkTracer } from '../fixtures/sdk-tracer.ts';
import { type Project, startWorker, type WebServer } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';
import { waitFor } from '../fixtures/wait.ts';
import {
  type Received,
  startWebhookReceiver,
  verifySignature,
  type WebhookReceiver,
} from '../fixtures/webhook-receiver.ts';

let suite: ServiceSuite;
/** The suite's worker and a second one: the rules are evaluated by whichever claims them. */
let workers: WebServer[] = [];
let project: Project;
let other: Project;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [suite, receiver] = await Promise.all([
    startServiceSuite({
      project: 'alerted',
      others: ['other'],
      worker: true,
      env: {
        SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only',
        ...llmConnectionEnv(),
        SERVICE_ALERT_TICK_SECONDS: '1',
        SERVICE_ALERT_RETRY_BASE_SECONDS: '1',
      },
    }),
    startWebhookReceiver(),
  ]);
  workers = [suite.worker!, await startWorker(suite.env)];
  [project, other] = [suite.project, suite.others[0]!];
}, 240_000);

afterAll(async () => {
  await stopServiceSuite(suite, ...workers, receiver);
});

const call = (method: string, path: string, body?: unknown, as = project) =>
  callJson(`${suite.web.url}/api/public`, as, method, path, body);

/** Sends one generation per latency with the JS SDK (OTLP), each ending a second ago. */
async function sendObservations(name: string, latenciesMs: number[]): Promise<void> {
  const end = Date.now() - 1000;
  await withSdkTracer(project, suite.web.url, () => {
    for (const ms of latenciesMs) {
      const gen = startObservation(
        name,
        { model: 'alert-model' },
        { asType: 'generation', startTime: new Date(end - ms) },
      );
      gen.end(new Date(end));
    }
  });
}

const rule = async (id: string) => (await call('GET', `/unstable/alert-rules/${id}`)).body;

async function createWebhook(name: string, path: string): Promise<{ id: string; secret: string }> {
  const res = await call('POST', '/unstable/alert-channels', {
    name,
    type: 'webhook',
    url: `${receiver.url}${path}`,
  });
  expect(res.status, res.text).toBe(200);
  expect(res.body.signingSecret).toMatch(/^whsec_[0-9a-f]{64}$/);
  return { id: res.body.id, secret: res.body.signingSecret };
}

/** Every request on `path` carries a valid signature over its exact body; their events. */
function verified(path: string, secret: string): JsonBody[] {
  return receiver.on(path).map((r: Received) => {
    const ts = r.headers['x-observatory-timestamp'] as string;
    const signature = r.headers['x-observatory-signature'] as string;
    expect(verifySignature(secret, ts, r.body, signature, Math.floor(r.at / 1000))).toBe(true);
    expect(r.headers['content-type']).toBe('application/json');
    const event = JSON.parse(r.body) as JsonBody;
    expect(r.headers['x-observatory-delivery']).toBe(event.id);
    expect(r.headers['x-observatory-event']).toBe(event.type);
    return event;
  });
}

/** Waits until the rule was evaluated at least `ticks` seconds after `since` (both workers had their turns). */
async function evaluatedPast(id: string, since: number, seconds: number): Promise<void> {
  await waitFor(`rule ${id} evaluated ${seconds} s after ${new Date(since).toISOString()}`, async () => {
    const r = await rule(id);
    return r.lastEvaluatedAt && Date.parse(r.lastEvaluatedAt) >= since + seconds * 1000 ? true : undefined;
  });
}

describe('an alert rule over observation latency', () => {
  let hook: { id: string; secret: string };
  let ruleId: string;

  it('is created through the API; the signing secret is shown once', async () => {
    hook = await createWebhook('ops-hook', '/latency');
    const got = await call('GET', `/unstable/alert-channels/${hook.id}`);
    expect(got.body).toMatchObject({ type: 'webhook', url: `${receiver.url}/latency` });
    expect(got.body.signingSecret).toBeUndefined();
    expect(got.body.displaySecret).toBe(`...${hook.secret.slice(-4)}`);
    const created = await call('POST', '/unstable/alert-rules', {
      name: 'slow generations',
      metric: {
        view: 'observations',
        measure: 'latency',
        aggregation: 'avg',
        filters: [{ type: 'string', column: 'name', operator: '=', value: 'probe-latency' }],
      },
      operator: '>',
      warningThreshold: 500,
      alertThreshold: 1000,
      window: '10m',
      frequency: '1s',
      channelIds: [hook.id],
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toMatchObject({ window: '600s', frequency: '1s', noDataMode: 'ok', state: null });
    ruleId = created.body.id;
    // No data counts as ok: the first evaluation stores ok and notifies nobody.
    await waitFor('the first evaluation', async () =>
      (await rule(ruleId)).state === 'ok' ? true : undefined,
    );
  });

  it('warns, then alerts as slower data arrives: one notification per transition across two workers', async () => {
    await sendObservations('probe-latency', [700]);
    await waitFor('the warning', async () => (receiver.on('/latency').length >= 1 ? true : undefined));
    await sendObservations('probe-latency', [3000]);
    await waitFor('the alert', async () => (receiver.on('/latency').length >= 2 ? true : undefined));
    // Both workers tick every second: three more seconds of evaluations add nothing.
    await evaluatedPast(ruleId, receiver.on('/latency')[1]!.at, 3);
    const events = verified('/latency', hook.secret);
    expect(events.map((e) => [e.type, e.previousState, e.state, e.value])).toEqual([
      ['alert.transition', 'ok', 'warning', 700],
      ['alert.transition', 'warning', 'alerting', 1850],
    ]);
    expect(events[1]).toMatchObject({
      projectId: project.projectId,
      rule: {
        id: ruleId,
        name: 'slow generations',
        measure: 'latency',
        aggregation: 'avg',
        alertThreshold: 1000,
      },
    });
    expect((await rule(ruleId)).state).toBe('alerting');
  });

  it('resolves when fast data brings the average back, and keeps the history', async () => {
    await sendObservations(
      'probe-latency',
      Array.from({ length: 20 }, () => 10),
    );
    await waitFor('the resolve', async () => (receiver.on('/latency').length >= 3 ? true : undefined));
    await evaluatedPast(ruleId, receiver.on('/latency')[2]!.at, 2);
    const events = verified('/latency', hook.secret);
    expect(events).toHaveLength(3);
    expect(events[2]).toMatchObject({ type: 'alert.transition', previousState: 'alerting', state: 'ok' });
    expect(events[2]!.value).toBeCloseTo((700 + 3000 + 20 * 10) / 22, 3);
    expect(new Set(events.map((e) => e.id)).size).toBe(3);
    const history = await call('GET', `/unstable/alert-rules/${ruleId}/history`);
    expect(history.body.data.map((h: JsonBody) => [h.fromState, h.toState])).toEqual([
      ['alerting', 'ok'],
      ['warning', 'alerting'],
      ['ok', 'warning'],
      [null, 'ok'],
    ]);
    const sent = await call('GET', `/unstable/alert-notifications?ruleId=${ruleId}`);
    expect(sent.body.data).toHaveLength(3);
    for (const n of sent.body.data)
      expect(n).toMatchObject({
        status: 'delivered',
        attempts: [{ attempt: 1, status: 'delivered', responseCode: 200 }],
      });
  });
});

describe('an alert rule over numeric scores', () => {
  it('reports no data, alerts on low scores, resolves as better scores arrive', async () => {
    const hook = await createWebhook('score-hook', '/scores');
    const created = await call('POST', '/unstable/alert-rules', {
      name: 'quality drops',
      metric: {
        view: 'scores-numeric',
        measure: 'value',
        aggregation: 'avg',
        filters: [{ type: 'string', column: 'name', operator: '=', value: 'quality' }],
      },
      operator: '<',
      alertThreshold: 0.5,
      window: '10m',
      frequency: '1s',
      noDataMode: 'no_data',
      channelIds: [hook.id],
    });
    expect(created.status, created.text).toBe(200);
    const sendScores = async (values: number[]) => {
      const timestamp = new Date(Date.now() - 1000).toISOString();
      const batch = values.map((value) => ({
        id: randomUUID(),
        type: 'score-create',
        timestamp,
        body: { id: randomUUID(), traceId: randomUUID(), name: 'quality', value, dataType: 'NUMERIC' },
      }));
      const res = await call('POST', '/ingestion', { batch });
      expect(res.status).toBe(207);
      expect(res.body.errors, res.text).toEqual([]);
    };
    const received = (n: number) => async () => (receiver.on('/scores').length >= n ? true : undefined);
    await waitFor('the no-data notification', received(1));
    await sendScores([0.2]);
    await waitFor('the alert', received(2));
    await sendScores([0.9, 0.9, 0.9, 0.9, 0.9]);
    await waitFor('the resolve', received(3));
    const events = verified('/scores', hook.secret);
    expect(events.map((e) => [e.previousState, e.state])).toEqual([
      [null, 'no_data'],
      ['no_data', 'alerting'],
      ['alerting', 'ok'],
    ]);
    expect(events.map((e) => e.value)).toEqual([null, 0.2, expect.closeTo((0.2 + 4.5) / 6, 6)]);
  });
});

describe('pause and re-notification', () => {
  let hook: { id: string; secret: string };
  let pausedId: string;
  let watchId: string;

  it('a paused rule is not evaluated and sends nothing', async () => {
    hook = await createWebhook('pause-hook', '/paused');
    await sendObservations('probe-count', [5]);
    const create = (name: string, paused: boolean) =>
      call('POST', '/unstable/alert-rules', {
        name,
        metric: {
          view: 'observations',
          measure: 'count',
          aggregation: 'count',
          filters: [{ type: 'string', column: 'name', operator: '=', value: 'probe-count' }],
        },
        operator: '>',
        alertThreshold: 0,
        window: '10m',
        frequency: '1s',
        renotifyInterval: '3s',
        paused,
        channelIds: paused ? [hook.id] : [],
      });
    const [paused, watch] = await Promise.all([create('paused count', true), create('watch count', false)]);
    pausedId = paused.body.id;
    watchId = watch.body.id;
    // The unpaused twin over the same data shows the workers ticking meanwhile.
    await waitFor('the twin alerting', async () =>
      (await rule(watchId)).state === 'alerting' ? true : undefined,
    );
    await evaluatedPast(watchId, Date.now(), 3);
    expect(receiver.on('/paused')).toEqual([]);
    expect(await rule(pausedId)).toMatchObject({ paused: true, state: null, lastEvaluatedAt: null });
  });

  it('resumed, it alerts once, then reminds after the re-notification interval', async () => {
    expect((await call('PATCH', `/unstable/alert-rules/${pausedId}`, { paused: false })).status).toBe(200);
    await waitFor(
      'the reminder',
      async () => (receiver.on('/paused').length >= 2 ? true : undefined),
      30_000,
    );
    const events = verified('/paused', hook.secret);
    expect(events.map((e) => [e.type, e.state])).toEqual([
      ['alert.transition', 'alerting'],
      ['alert.reminder', 'alerting'],
    ]);
    const [first, second] = receiver.on('/paused');
    expect(Date.parse(events[1]!.evaluatedAt) - Date.parse(events[0]!.evaluatedAt)).toBeGreaterThanOrEqual(
      3000,
    );
    expect(second!.at).toBeGreaterThan(first!.at);
  });

  it('paused again, it sends no reminder although its interval passes', async () => {
    expect((await call('PATCH', `/unstable/alert-rules/${pausedId}`, { paused: true })).status).toBe(200);
    const count = receiver.on('/paused').length;
    await evaluatedPast(watchId, Date.now(), 5);
    expect(receiver.on('/paused')).toHaveLength(count);
  });
});

describe('delivery failures', () => {
  it('a failing receiver gets retries with backoff, each attempt recorded', async () => {
    receiver.script('/flaky', [500, 503, 200]);
    const hook = await createWebhook('flaky-hook', '/flaky');
    await sendObservations('probe-flaky', [5]);
    const created = await call('POST', '/unstable/alert-rules', {
      name: 'flaky count',
      metric: {
        view: 'observations',
        measure: 'count',
        aggregation: 'count',
        filters: [{ type: 'string', column: 'name', operator: '=', value: 'probe-flaky' }],
      },
      operator: '>=',
      alertThreshold: 1,
      window: '10m',
      frequency: '1s',
      channelIds: [hook.id],
    });
    const ruleId = created.body.id;
    const n = await waitFor('the delivery after two failures', async () => {
      const list = await call('GET', `/unstable/alert-notifications?ruleId=${ruleId}`);
      const first = list.body.data[0];
      return first?.status === 'delivered' ? first : undefined;
    });
    expect(n.attempts.map((a: JsonBody) => [a.attempt, a.status, a.responseCode, a.error])).toEqual([
      [1, 'failed', 500, 'receiver answered 500'],
      [2, 'failed', 503, 'receiver answered 503'],
      [3, 'delivered', 200, null],
    ]);
    // Backoff: the second retry waits twice as long as the first (base 1 s).
    const [a1, a2, a3] = n.attempts as JsonBody[];
    expect(Date.parse(a1!.nextRetryAt) - Date.parse(a1!.attemptedAt)).toBeGreaterThanOrEqual(1000);
    expect(Date.parse(a2!.nextRetryAt) - Date.parse(a2!.attemptedAt)).toBeGreaterThanOrEqual(2000);
    expect(Date.parse(a3!.attemptedAt)).toBeGreaterThanOrEqual(Date.parse(a2!.nextRetryAt));
    // Every try carried the same event, signed afresh.
    const events = verified('/flaky', hook.secret);
    expect(events).toHaveLength(3);
    expect(new Set(receiver.on('/flaky').map((r) => r.body)).size).toBe(1);
  });
});

describe('overlapping evaluations', () => {
  it('of one rule store one outcome: the second finds the state moved on and is dropped', async () => {
    const hook = await createWebhook('overlap-hook', '/overlap');
    const created = await call('POST', '/unstable/alert-rules', {
      name: 'daily count',
      metric: { view: 'observations', measure: 'count', aggregation: 'count' },
      operator: '>',
      alertThreshold: 1_000_000,
      window: '1h',
      frequency: '1d',
      channelIds: [hook.id],
    });
    const id = created.body.id;
    // The workers' first evaluation stores ok; the next is due in a day.
    await waitFor('the first evaluation', async () => ((await rule(id)).state === 'ok' ? true : undefined));
    const pool = new pgLib.Pool({ connectionString: suite.pg.url, max: 2 });
    try {
      // Two evaluations of the same claimed snapshot (a PATCH or a slow query can let them overlap).
      const claimed = (await findRule(pool, project.projectId, id))!;
      const at = new Date();
      const record = () =>
        recordEvaluation(pool, {
          rule: claimed,
          value: 2_000_000,
          state: 'alerting',
          changed: true,
          notify: 'transition',
          evaluatedAt: at,
          event: eventOf(claimed, 2_000_000, 'alerting', 'transition', at),
        });
      expect((await Promise.all([record(), record()])).sort()).toEqual([0, 1]);
    } finally {
      await pool.end();
    }
    const history = await call('GET', `/unstable/alert-rules/${id}/history`);
    expect(history.body.data.map((h: JsonBody) => h.toState)).toEqual(['alerting', 'ok']);
    await waitFor('the one notification', async () =>
      receiver.on('/overlap').length === 1 ? true : undefined,
    );
    expect((await call('GET', `/unstable/alert-notifications?ruleId=${id}`)).body.data).toHaveLength(1);
  });
});

describe('channels and validation', () => {
  it('a Slack channel keeps its URL secret and sends the test message', async () => {
    const created = await call('POST', '/unstable/alert-channels', {
      name: 'team-slack',
      type: 'slack',
      url: `${receiver.url}/slack/T000/B000/XXXX`,
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toMatchObject({ type: 'slack', url: null, displaySecret: '...XXXX' });
    expect(created.text).not.toContain('/slack/T000');
    const test = await call('POST', `/unstable/alert-channels/${created.body.id}/test`);
    expect(test.body).toMatchObject({ status: 'delivered', responseCode: 200, error: null });
    const [msg] = receiver.on('/slack/T000/B000/XXXX');
    expect(JSON.parse(msg!.body)).toMatchObject({
      text: 'Test notification from Observatory',
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'Test notification from Observatory' } }],
    });
  });

  it('a webhook test send is signed and its failure is answered', async () => {
    receiver.script('/test-fail', [404]);
    const hook = await createWebhook('test-hook', '/test-fail');
    const test = await call('POST', `/unstable/alert-channels/${hook.id}/test`);
    expect(test.body).toMatchObject({ status: 'failed', responseCode: 404, error: 'receiver answered 404' });
    expect(verified('/test-fail', hook.secret).map((e) => e.type)).toEqual(['alert.test']);
  });

  it('bad input answers 400 naming the field', async () => {
    const base = {
      name: 'x',
      metric: { view: 'observations', measure: 'latency', aggregation: 'avg' },
      operator: '>',
      alertThreshold: 1,
      window: '5m',
      frequency: '1m',
    };
    for (const [patch, field] of [
      [{ metric: { ...base.metric, measure: 'nope' } }, 'metric.measure'],
      [{ metric: { ...base.metric, view: 'traces' } }, 'metric.view'],
      [{ window: 'soon' }, 'window'],
      [{ warningThreshold: 5 }, 'warningThreshold'],
      [{ channelIds: ['no-such-channel'] }, 'channelIds'],
    ] as const) {
      const res = await call('POST', '/unstable/alert-rules', { ...base, ...patch });
      expect(res.status, JSON.stringify(patch)).toBe(400);
      expect(res.body.message).toContain(field);
    }
    for (const url of ['http://10.0.0.1/hook', 'http://169.254.169.254/latest', 'ftp://example.com/x']) {
      const res = await call('POST', '/unstable/alert-channels', { name: 'bad', type: 'webhook', url });
      expect(res.status, url).toBe(400);
      expect(res.body.message).toMatch(/^url: /);
    }
  });

  it("another project's rules and channels are 404", async () => {
    const rules = (await call('GET', '/unstable/alert-rules')).body.data as JsonBody[];
    const channels = (await call('GET', '/unstable/alert-channels')).body.data as JsonBody[];
    expect(rules.length).toBeGreaterThan(0);
    for (const [method, path] of [
      ['GET', `/unstable/alert-rules/${rules[0]!.id}`],
      ['PATCH', `/unstable/alert-rules/${rules[0]!.id}`],
      ['DELETE', `/unstable/alert-rules/${rules[0]!.id}`],
      ['GET', `/unstable/alert-rules/${rules[0]!.id}/history`],
      ['GET', `/unstable/alert-channels/${channels[0]!.id}`],
      ['DELETE', `/unstable/alert-channels/${channels[0]!.id}`],
      ['POST', `/unstable/alert-channels/${channels[0]!.id}/test`],
    ] as const) {
      const res = await call(method, path, method === 'PATCH' ? { paused: true } : undefined, other);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('resource_not_found');
    }
    expect((await call('GET', '/unstable/alert-rules', undefined, other)).body.data).toEqual([]);
    // Nor can a rule of the other project name this project's channel.
    const res = await call(
      'POST',
      '/unstable/alert-rules',
      {
        name: 'sneaky',
        metric: { view: 'observations', measure: 'count', aggregation: 'count' },
        operator: '>',
        alertThreshold: 1,
        window: '5m',
        frequency: '1m',
        channelIds: [channels[0]!.id],
      },
      other,
    );
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^channelIds: /);
  });
});
