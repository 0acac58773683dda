/**
 * The analytics store dies (SIGKILL) while the web is writing concurrent requests whose rows share
 * inserts (group commit): every request in flight at that moment fails with a non-2xx answer, and
 * after a restart on the same data directory every event that was acknowledged is stored, in the
 * legacy table and in the staging table of dual mode.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, DUAL_ENV, startAnalyticsServer } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';

let suite: ServiceSuite;

beforeAll(async () => {
  suite = await startServiceSuite({ project: 'store-killed', env: DUAL_ENV });
});
afterAll(async () => {
  await stopServiceSuite(suite);
});

/** One trace with `n` generations of a few KB each, so an insert takes long enough to be cut. */
const batch = (prefix: string, n: number) => {
  const now = new Date().toISOString();
  return {
    batch: [
      { id: `${prefix}-t`, type: 'trace-create', timestamp: now, body: { id: prefix, name: 'kill' } },
      ...Array.from({ length: n }, (_, i) => ({
        id: `${prefix}-e${i}`,
        type: 'generation-create',
        timestamp: now,
        body: {
          id: `${prefix}-g${i}`,
          traceId: prefix,
          name: 'llm',
          input: 'q'.repeat(3000),
          output: 'a'.repeat(3000),
        },
      })),
    ],
  };
};

interface Outcome {
  prefix: string;
  status: number;
  sentAt: number;
  answeredAt: number;
}

/** Concurrent senders, each sending its next request once the previous one is answered. */
const LANES = 8;

describe('store killed between accept and acknowledgement', () => {
  it('fails the requests in flight and keeps every acknowledged event', async () => {
    const outcomes: Outcome[] = [];
    let killedAt = Number.POSITIVE_INFINITY;
    let sent = 0;
    const sender = async (lane: number) => {
      // Until the store is dead and each lane has seen at least one answer after that.
      for (let k = 0; performance.now() < killedAt + 500 && k < 400; k++) {
        const prefix = `kill-${lane}-${k}`;
        const sentAt = performance.now();
        sent++;
        const res = await fetch(`${suite.web.url}/api/public/ingestion`, {
          method: 'POST',
          headers: { authorization: basicAuth(suite.project), 'content-type': 'application/json' },
          body: JSON.stringify(batch(prefix, 20)),
          signal: AbortSignal.timeout(60_000),
        });
        const body = (await res.json()) as { successes?: unknown[]; errors?: unknown[] };
        if (res.status === 207) expect(body.errors).toEqual([]);
        else expect(body.successes).toBeUndefined();
        outcomes.push({ prefix, status: res.status, sentAt, answeredAt: performance.now() });
      }
    };
    const killer = (async () => {
      // Kill once the traffic is flowing: a few requests acknowledged, and every lane waiting for an
      // answer to its next request, so most requests are in flight at the kill.
      const acked = () => outcomes.filter((o) => o.status === 207).length;
      while (acked() < 6 || sent - outcomes.length < LANES) await new Promise((r) => setTimeout(r, 10));
      killedAt = performance.now();
      await suite.ch.kill();
    })();
    await Promise.all([killer, ...Array.from({ length: LANES }, (_, lane) => sender(lane))]);

    expect(outcomes).toHaveLength(sent);
    for (const o of outcomes) expect([207, 500, 502, 503, 504]).toContain(o.status);
    // In flight at the kill: most wait for the store and fail. One may read a 207 the web sent just
    // before the kill (the client's clock is not the server's); its events are checked below.
    const inFlightAtKill = outcomes.filter((o) => o.sentAt < killedAt && o.answeredAt > killedAt);
    expect(inFlightAtKill.filter((o) => o.status !== 207).length).toBeGreaterThan(0);
    // Sent after the store died: nothing can acknowledge them.
    const sentAfterKill = outcomes.filter((o) => o.sentAt > killedAt);
    expect(sentAfterKill.length).toBeGreaterThan(0);
    for (const o of sentAfterKill) expect(o.status).not.toBe(207);
    const acked = outcomes.filter((o) => o.status === 207).map((o) => o.prefix);
    expect(acked.length).toBeGreaterThanOrEqual(6);

    suite.ch = await startAnalyticsServer({ dir: suite.ch.dir });
    const expected = acked.flatMap((p) => Array.from({ length: 20 }, (_, i) => `${p}-g${i}`)).sort();
    for (const table of ['observations', 'observations_batch_staging']) {
      const rs = await suite.ch.client.query({
        query: `SELECT DISTINCT id FROM ${table} WHERE project_id = {p:String} AND id IN {ids:Array(String)} ORDER BY id`,
        query_params: { p: suite.project.projectId, ids: expected },
        format: 'JSONEachRow',
      });
      expect((await rs.json<{ id: string }>()).map((r) => r.id)).toEqual(expected);
    }
  });
});
