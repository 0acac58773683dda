/**
 * Nothing is acknowledged that the analytics store has not acknowledged: under overload the web
 * answers 429 and every acknowledged event is stored; with the store down it answers 503 and
 * acknowledges nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';

let suite: ServiceSuite;

beforeAll(async () => {
  suite = await startServiceSuite({ project: 'durability', env: { SERVICE_INGESTION_MAX_IN_FLIGHT: '2' } });
});
afterAll(async () => {
  await stopServiceSuite(suite);
});

const scoreBatch = (prefix: string, n: number) => ({
  batch: Array.from({ length: n }, (_, i) => ({
    id: `${prefix}-${i}`,
    type: 'score-create',
    timestamp: new Date().toISOString(),
    body: { id: `${prefix}-${i}`, traceId: 'durability', name: 'n', value: i },
  })),
});

const send = (body: object) =>
  fetch(`${suite.web.url}/api/public/ingestion`, {
    method: 'POST',
    headers: { authorization: basicAuth(suite.project), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('durability', () => {
  it('sheds load with 429 and stores every acknowledged event', async () => {
    const responses = await Promise.all(
      Array.from({ length: 24 }, (_, i) => send(scoreBatch(`load-${i}`, 50))),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 207 || s === 429)).toBe(true);
    expect(statuses).toContain(429);
    expect(responses.find((r) => r.status === 429)!.headers.get('retry-after')).toBe('1');
    const acked: string[] = [];
    for (const r of responses.filter((x) => x.status === 207)) {
      const body = (await r.json()) as { successes: { id: string }[] };
      acked.push(...body.successes.map((s) => s.id));
    }
    expect(acked.length).toBeGreaterThan(0);
    const rs = await suite.ch.client.query({
      query: 'SELECT id FROM scores FINAL WHERE project_id = {p:String} AND id IN {ids:Array(String)}',
      query_params: { p: suite.project.projectId, ids: acked },
      format: 'JSONEachRow',
    });
    expect((await rs.json<{ id: string }>()).map((r) => r.id).sort()).toEqual([...acked].sort());
  });

  it('answers 503 and acknowledges nothing while the analytics store is down', async () => {
    await suite.ch.stop();
    const res = await send(scoreBatch('down', 3));
    expect(res.status).toBe(503);
    const body = (await res.json()) as { message: string; successes?: unknown };
    expect(body.successes).toBeUndefined();
    expect(body.message).toContain('nothing was acknowledged');
    expect(res.headers.get('retry-after')).toBeTruthy();
  });
});
