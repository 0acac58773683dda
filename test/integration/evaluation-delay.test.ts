/**
 * An evaluation rule's `delay`, as the reference's job configurations have it (`delay`, an Int in
 * milliseconds, 10 000 unless given, never negative): the unstable API keeps it, refuses what the
 * reference's column cannot hold, and the worker's scan does not enqueue a matching observation
 * for judging before `delay` has passed since it arrived, while a rule without delay takes it at
 * once. In process (events_only) over real PostgreSQL and the embedded ClickHouse engine; the
 * scan is the worker's own function, run pass by pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanRules } from '../../server/features/evaluation/scan.ts';
import { createProject } from '../../server/features/projects/keys.ts';
import { booleanEvaluator } from '../fixtures/judge.ts';
import { llmConnectionEnv, UNCALLED_CONNECTION } from '../fixtures/llm-connection-env.ts';
import { type InProcessWeb, type Stores, serveWeb, startStores } from '../fixtures/web-in-process.ts';

let stores: Stores;
let web: InProcessWeb;
let auth: string;

beforeAll(async () => {
  stores = await startStores();
  web = await serveWeb(stores, {
    SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only',
    ...llmConnectionEnv(),
  });
  const project = await createProject(stores.pool, 'evaluation-delay');
  auth = `Basic ${Buffer.from(`${project.publicKey}:${project.secretKey}`).toString('base64')}`;
  // An evaluator that passes the preflight (a connection offering its model); nothing calls it here.
  for (const [path, body] of [
    ['/llm-connections', UNCALLED_CONNECTION],
    [
      '/unstable/evaluators',
      booleanEvaluator('delay-check', 'Answer: {{output}}', 'Is it right?', {
        provider: 'judge',
        model: 'smollm2',
      }),
    ],
  ] as const) {
    const res = await call(path === '/llm-connections' ? 'PUT' : 'POST', path, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
}, 120_000);

afterAll(async () => {
  await web?.app.close();
  await stores?.stop();
});

type Body = Record<string, unknown>;
async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${web.url}/api/public${path}`, {
    method,
    headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, body: (await res.json()) as Body };
}

const rule = (name: string, extra: Body = {}) => ({
  name,
  evaluator: { name: 'delay-check' },
  target: 'observation',
  enabled: true,
  filter: [{ type: 'stringOptions', column: 'name', operator: 'any of', value: ['delayed-generation'] }],
  mapping: [{ variable: 'output', source: 'output' }],
  ...extra,
});

describe('the unstable API', () => {
  it('gives a rule the reference default of 10000 ms and keeps what is sent, on create and update', async () => {
    const created = await call(
      'POST',
      '/unstable/evaluation-rules',
      rule('default-delay', { enabled: false }),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body['delay']).toBe(10_000);
    const id = String(created.body['id']);
    const updated = await call('PATCH', `/unstable/evaluation-rules/${id}`, { delay: 0 });
    expect(updated.body['delay']).toBe(0);
    expect((await call('GET', `/unstable/evaluation-rules/${id}`)).body['delay']).toBe(0);
    // Another change leaves the delay as it was.
    expect((await call('PATCH', `/unstable/evaluation-rules/${id}`, { sampling: 0.5 })).body['delay']).toBe(
      0,
    );
  });

  it.each([
    ['negative', -1],
    ['fractional', 1.5],
    ['past a 32-bit Int', 2 ** 31],
    ['text', '10s'],
  ])('refuses a %s delay: 400 invalid_body naming delay', async (_, delay) => {
    const res = await call('POST', '/unstable/evaluation-rules', rule('bad-delay', { delay }));
    expect(res.status).toBe(400);
    expect(res.body['code']).toBe('invalid_body');
    const issues = (res.body['details'] as { issues: { path: unknown[] }[] }).issues;
    expect(issues.map((i) => i.path)).toContainEqual(['delay']);
  });
});

describe('the worker', () => {
  it('judges an observation no sooner than the delay after it arrived; a rule without delay at once', async () => {
    const DELAY_MS = 4_000;
    const LAG_MS = 1_000;
    const delayed = await call('POST', '/unstable/evaluation-rules', rule('delayed', { delay: DELAY_MS }));
    const immediate = await call('POST', '/unstable/evaluation-rules', rule('immediate', { delay: 0 }));
    expect([delayed.status, immediate.status]).toEqual([200, 200]);

    const spanId = 'c3'.repeat(8);
    const nanos = `${BigInt(Date.now()) * 1_000_000n}`;
    const exported = await call('POST', '/otel/v1/traces', {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: 'c3'.repeat(16),
                  spanId,
                  name: 'delayed-generation',
                  startTimeUnixNano: nanos,
                  endTimeUnixNano: nanos,
                  attributes: [{ key: 'langfuse.observation.type', value: { stringValue: 'generation' } }],
                },
              ],
            },
          ],
        },
      ],
    });
    expect(exported.status).toBe(200);
    const arrived = await stores.ch
      .query({
        query: 'SELECT toUnixTimestamp64Milli(created_at) AS at FROM events_full WHERE span_id = {id:String}',
        query_params: { id: spanId },
        format: 'JSONEachRow',
      })
      .then((r) => r.json<{ at: string }>());
    expect(arrived).toHaveLength(1);
    const arrivedAt = Number(arrived[0]!.at);

    const enqueuedAt: Record<string, number> = {};
    const deadline = Date.now() + 30_000;
    while (Object.keys(enqueuedAt).length < 2 && Date.now() < deadline) {
      await scanRules(stores.pool, stores.ch, LAG_MS, ['observation']);
      const seenAt = Date.now();
      const { rows } = await stores.pool.query<{ rule_id: string }>(
        'SELECT rule_id FROM evaluation_executions WHERE observation_id = $1',
        [spanId],
      );
      for (const r of rows) enqueuedAt[r.rule_id] ??= seenAt;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const immediateAt = enqueuedAt[String(immediate.body['id'])];
    const delayedAt = enqueuedAt[String(delayed.body['id'])];
    expect(immediateAt, 'the rule without delay enqueued it').toBeDefined();
    expect(delayedAt, 'the delayed rule enqueued it in the end').toBeDefined();
    expect(delayedAt! - arrivedAt).toBeGreaterThanOrEqual(DELAY_MS);
    // The rule without delay took it once the scan lag had passed, well before the delay.
    expect(immediateAt! - arrivedAt).toBeLessThan(DELAY_MS);
  }, 60_000);
});
