/**
 * Cost across the version 4 migration: generations the release 3 SDK (`langfuse` 3.x) sends with a
 * known model and usage but no cost must carry the right cost into the events tables on both
 * roads there, read back through `GET /api/public/v2/observations` and Metrics v2 by an
 * `events_only` web. (a) Sent in `legacy`, then the historic backfill run as the operator's Jobs run
 * it (`observatory backfill run --step N`, steps 1-5 in `dual`). (b) Sent in `dual`, staged, and
 * copied by the worker's propagation when its 3-minute staging partition closes (interval 1 s,
 * grace 0). Expected prices are OpenAI's published ones (gpt-4o $2.50 / $10, gpt-4o-mini $0.15 /
 * $0.60 per million input / output tokens), not read from the server; a cost the SDK sent wins.
 */
import { Langfuse } from 'langfuse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bounded, eventually } from '../conformance/env.ts';
import { backfillStep } from '../fixtures/backfill.ts';
import { type Body, callApi } from '../fixtures/mode-webs.ts';
import {
  createProject,
  DUAL_ENV,
  LEGACY_ENV,
  MODE_ENV,
  type Project,
  startWeb,
  startWorker,
  type WebServer,
} from '../fixtures/service.ts';
import { type Given, type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';

const GPT_4O_ID = 'b9854a5c92dc496b997d99d20';
const PER_TOKEN = {
  'gpt-4o': { input: 2.5e-6, output: 10e-6 },
  'gpt-4o-mini': { input: 0.15e-6, output: 0.6e-6 },
};
type Model = keyof typeof PER_TOKEN;

/** What the SDK sends: priced generations (usage, no cost) and one whose cost it sent. */
const PRICED: { model: Model; input: number; output: number }[] = [
  { model: 'gpt-4o', input: 2000, output: 1000 },
  { model: 'gpt-4o', input: 300, output: 70 },
  { model: 'gpt-4o-mini', input: 1000, output: 2000 },
];
const SENT_COST = 9;

interface Sent {
  traceId: string;
  priced: { id: string; model: Model; input: number; output: number }[];
  sent: string;
}

let stores: Stores & Given<{ redis: true }>;
let reader: WebServer;
let miniId: string;

/** Sends one trace through the release 3 SDK: the PRICED generations and one with its own cost. */
async function sendRelease3(url: string, p: Project, name: string): Promise<Sent> {
  const lf = new Langfuse({ publicKey: p.publicKey, secretKey: p.secretKey, baseUrl: url });
  const trace = lf.trace({ name });
  const priced = PRICED.map((g) => {
    const gen = trace.generation({
      name: 'llm',
      model: g.model,
      usage: { input: g.input, output: g.output },
    });
    gen.end({ output: 'ok' });
    return { id: gen.id, ...g };
  });
  const sent = trace.generation({
    name: 'llm',
    model: 'gpt-4o',
    usage: { input: 10, output: 10, totalCost: SENT_COST },
  });
  sent.end();
  await bounded('langfuse 3.x shutdown', lf.shutdownAsync(), 30_000);
  return { traceId: trace.id, priced, sent: sent.id };
}

const read = (p: Project, path: string) => callApi(reader, p, 'GET', path);

/** The trace's observations on the events_only web, once all `n` of them are there. */
const observations = (p: Project, traceId: string, n: number, within: number) =>
  eventually(
    `${n} observations of ${traceId} in the events tables`,
    async () => {
      const r = await read(p, `/api/public/v2/observations?traceId=${traceId}&fields=core,basic,model,usage`);
      const data = (r.body['data'] ?? []) as Body[];
      return data.filter((o) => o['type'] === 'GENERATION').length >= n ? data : undefined;
    },
    within,
  );

const close = (actual: unknown, expected: Record<string, number>) => {
  const a = actual as Record<string, number>;
  expect(Object.keys(a).sort()).toEqual(Object.keys(expected).sort());
  for (const [k, v] of Object.entries(expected)) expect(a[k], k).toBeCloseTo(v, 10);
};

/** Every generation's model, usage and cost field by field, and the Metrics v2 sums by model. */
async function expectCosts(p: Project, s: Sent, within: number) {
  const data = await observations(p, s.traceId, PRICED.length + 1, within);
  const byId = new Map(data.map((o) => [o['id'], o]));
  for (const g of s.priced) {
    const o = byId.get(g.id)!;
    const price = PER_TOKEN[g.model];
    const cost = { input: g.input * price.input, output: g.output * price.output };
    expect(o['modelId'], g.id).toBe(g.model === 'gpt-4o' ? GPT_4O_ID : miniId);
    expect(o['providedModelName']).toBe(g.model);
    expect(o['usageDetails']).toEqual({ input: g.input, output: g.output, total: g.input + g.output });
    close(o['costDetails'], { ...cost, total: cost.input + cost.output });
    expect(Number(o['totalCost'])).toBeCloseTo(cost.input + cost.output, 10);
  }
  const sent = byId.get(s.sent)!;
  close(sent['costDetails'], { total: SENT_COST });
  expect(Number(sent['totalCost'])).toBeCloseTo(SENT_COST, 10);

  const day = 86_400_000;
  const query = {
    view: 'observations',
    dimensions: [{ field: 'providedModelName' }],
    metrics: ['inputTokens', 'outputTokens', 'inputCost', 'outputCost', 'totalCost'].map((measure) => ({
      measure,
      aggregation: 'sum',
    })),
    filters: [{ type: 'string', column: 'traceId', operator: '=', value: s.traceId }],
    fromTimestamp: new Date(Date.now() - day).toISOString(),
    toTimestamp: new Date(Date.now() + day).toISOString(),
  };
  const m = await read(p, `/api/public/v2/metrics?query=${encodeURIComponent(JSON.stringify(query))}`);
  expect(m.status, JSON.stringify(m.body)).toBe(200);
  const rows = new Map(((m.body['data'] ?? []) as Body[]).map((r) => [r['providedModelName'], r]));
  for (const model of Object.keys(PER_TOKEN) as Model[]) {
    const gens = s.priced.filter((g) => g.model === model);
    const extra = model === 'gpt-4o' ? { tokens: 10, cost: SENT_COST } : { tokens: 0, cost: 0 };
    const input = gens.reduce((n, g) => n + g.input, 0);
    const output = gens.reduce((n, g) => n + g.output, 0);
    const inputCost = input * PER_TOKEN[model].input;
    const outputCost = output * PER_TOKEN[model].output;
    const row = rows.get(model)!;
    expect(row, model).toBeDefined();
    expect(Number(row['sum_inputTokens']), model).toBe(input + extra.tokens);
    expect(Number(row['sum_outputTokens']), model).toBe(output + extra.tokens);
    expect(Number(row['sum_inputCost']), model).toBeCloseTo(inputCost, 10);
    expect(Number(row['sum_outputCost']), model).toBeCloseTo(outputCost, 10);
    expect(Number(row['sum_totalCost']), model).toBeCloseTo(inputCost + outputCost + extra.cost, 10);
  }
}

beforeAll(async () => {
  stores = await startStores({ redis: true });
  // The legacy web applies the migrations; the reader on the same stores serves the events tables.
  const legacy = await startWeb({ ...stores.env, ...LEGACY_ENV });
  await legacy.stop();
  reader = await startWeb({ ...stores.env, ...MODE_ENV.events_only });
  const p = await createProject(stores.env, 'cost-models');
  const models = await callApi(reader, p, 'GET', '/api/public/models?page=1&limit=500');
  miniId = String(
    ((models.body['data'] ?? []) as Body[]).find((m) => m['modelName'] === 'gpt-4o-mini')!['id'],
  );
}, 240_000);

afterAll(async () => {
  await stopStores(stores, reader);
});

describe('release 3 SDK generations with a known model and no cost', () => {
  it('sent in legacy: the historic backfill carries their cost into the events tables', async () => {
    const p = await createProject(stores.env, 'cost-backfill');
    const legacy = await startWeb({ ...stores.env, ...LEGACY_ENV });
    const sent = await sendRelease3(legacy.url, p, 'historic');
    // Written to the legacy tables (read there first, so the backfill finds them).
    await eventually(
      'the legacy rows',
      async () => {
        const r = await callApi(legacy, p, 'GET', `/api/public/observations?traceId=${sent.traceId}`);
        return ((r.body['data'] ?? []) as Body[]).length === PRICED.length + 1 ? true : undefined;
      },
      30_000,
    );
    await legacy.stop();
    for (const step of [1, 2, 3, 4, 5]) {
      const run = await backfillStep(
        { ...stores.env, SERVICE_BACKGROUND_MIGRATION_V4_DROP_PID_TID_SORTING_TABLES: 'true' },
        step,
      );
      expect(run.code, run.stderr).toBe(0);
    }
    await expectCosts(p, sent, 30_000);
  }, 300_000);

  it('sent in dual: the propagation of their staging partition carries their cost', async () => {
    const p = await createProject(stores.env, 'cost-propagation');
    const dual = {
      ...stores.env,
      ...DUAL_ENV,
      SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL: 'false',
      SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS: '1',
      SERVICE_EVENT_PROPAGATION_GRACE_SECONDS: '0',
    };
    const web = await startWeb(dual);
    const worker = await startWorker(dual);
    try {
      const sent = await sendRelease3(web.url, p, 'staged');
      // Staged rows reach events_full when their 3-minute partition closes (bounded wait).
      await expectCosts(p, sent, 300_000);
    } finally {
      await Promise.all([web.stop(), worker.stop()]);
    }
  }, 330_000);
});
