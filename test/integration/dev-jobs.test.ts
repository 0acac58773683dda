/**
 * `observatory dev` is the whole service: in `dual` it runs the worker's jobs in its one process.
 * A trace the npm `langfuse` 3.x SDK sends in `legacy` is carried into the version 4 tables by the
 * historic backfill chain once the same data directory runs in `dual`; a trace it sends in `dual`
 * is staged and carried by the propagation job. Both are read back through the v2 observations API,
 * with the cost computed at ingestion into the legacy tables for a generation that sent usage and
 * no cost (OpenAI's published gpt-4o prices: $2.50 / $10 per million tokens).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Langfuse } from 'langfuse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevService, devAuth, startDev } from '../fixtures/dev.ts';
import { removeDirSync } from '../fixtures/processes.ts';
import { DUAL_ENV, LEGACY_ENV } from '../fixtures/service.ts';

const FAST_PROPAGATION = {
  SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS: '2',
  SERVICE_EVENT_PROPAGATION_GRACE_SECONDS: '2',
};

let dir: string;
let dev: DevService | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'obs-dev-jobs-'));
});
afterAll(async () => {
  await dev?.stop();
  removeDirSync(dir);
});

async function sendTrace(d: DevService, id: string): Promise<void> {
  const sdk = new Langfuse({ publicKey: d.publicKey, secretKey: d.secretKey, baseUrl: d.url });
  const trace = sdk.trace({ id, name: `trace-${id}`, userId: `user-${id}`, sessionId: `session-${id}` });
  trace.span({ id: `${id}-span`, name: 'step' }).end();
  trace
    .generation({ id: `${id}-gen`, name: 'llm', model: 'gpt-4o', usage: { input: 1000, output: 500 } })
    .end();
  await sdk.shutdownAsync();
}

interface ObservationV2 {
  id: string;
  traceId: string;
  parentObservationId: string | null;
  type: string;
  name: string;
  userId?: string | null;
  sessionId?: string | null;
  modelId?: string | null;
  costDetails?: Record<string, number>;
}

async function observationsOf(d: DevService, traceId: string): Promise<ObservationV2[]> {
  const res = await fetch(
    `${d.url}/api/public/v2/observations?traceId=${traceId}&fields=core,basic,trace_context,model,usage`,
    { headers: { authorization: devAuth(d) } },
  );
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: ObservationV2[] }).data;
}

/** Polls the v2 API until the trace has `n` observations; bounded by `withinMs`. */
async function waitForObservations(d: DevService, traceId: string, n: number, withinMs: number) {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const rows = await observationsOf(d, traceId);
    if (rows.length >= n) return rows.sort((a, b) => a.id.localeCompare(b.id));
    if (Date.now() > deadline) {
      throw new Error(`trace ${traceId}: ${rows.length} of ${n} observations after ${withinMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 2_000));
  }
}

describe('observatory dev runs the worker jobs in dual', () => {
  it('carries historic traces (backfill chain) and staged traces (propagation) into the v2 API', async () => {
    dev = await startDev(dir, { ...LEGACY_ENV });
    await sendTrace(dev, 'historic');
    await dev.stop();

    dev = await startDev(dir, { ...DUAL_ENV, ...FAST_PROPAGATION });
    await sendTrace(dev, 'staged');
    // Nothing reaches the version 4 tables directly from this SDK in dual.
    expect(await observationsOf(dev, 'staged')).toEqual([]);

    // The staging partition (3 minutes) must close before propagation takes it; the chain runs
    // its first pass 30 s after start.
    const [historic, staged] = await Promise.all([
      waitForObservations(dev, 'historic', 3, 240_000),
      waitForObservations(dev, 'staged', 3, 300_000),
    ]);
    for (const [rows, id] of [
      [historic, 'historic'],
      [staged, 'staged'],
    ] as const) {
      expect(rows.map((r) => [r.id, r.parentObservationId, r.type, r.name])).toEqual([
        [`${id}-gen`, `t-${id}`, 'GENERATION', 'llm'],
        [`${id}-span`, `t-${id}`, 'SPAN', 'step'],
        [`t-${id}`, null, 'SPAN', `trace-${id}`],
      ]);
      expect(rows[0]).toMatchObject({
        modelId: 'b9854a5c92dc496b997d99d20',
        costDetails: { input: 0.0025, output: 0.005, total: 0.0075 },
      });
      expect(rows.every((r) => r.traceId === id)).toBe(true);
    }
    // Propagation carries user and session onto the child span.
    expect(staged[1]).toMatchObject({ userId: 'user-staged', sessionId: 'session-staged' });
  }, 600_000);
});
