/**
 * Cost users do not have to send, end to end: real SDKs send generations to `observatory web` in
 * each write mode (real PostgreSQL, the ClickHouse engine), and the cost is read back field by
 * field through the read APIs the mode serves (observations v1 where the legacy tables are
 * written, observations v2 where the events tables are). The expected prices are the providers'
 * published ones (OpenAI gpt-4o $2.50 / $10, gpt-4o-mini $0.15 / $0.60 per million tokens), the
 * expected token counts come from js-tiktoken's encoder and OpenAI's counting rule, not from the
 * server. The models API is driven through `@langfuse/client` 5.x's generated models client.
 */
import { LangfuseClient } from '@langfuse/client';
import { type LangfuseGenerationAttributes, startObservation } from '@langfuse/tracing';
import { Langfuse } from 'langfuse';
import { beforeAll, describe, expect, it } from 'vitest';
import { bounded, eventually, runPython } from '../conformance/env.ts';
import { ensurePythonSdk } from '../conformance/python-sdks.ts';
import { type Body, callApi, MODES, modeWebsForSuite } from '../fixtures/mode-webs.ts';
import { chatUsage } from '../fixtures/openai-usage.ts';
import { withSdkTracer } from '../fixtures/sdk-tracer.ts';
import type { Mode, Project } from '../fixtures/service.ts';

/** Which observation reads each mode serves (the legacy tables' v1, the events tables' v2). */
const READS: Record<Mode, ('v1' | 'v2')[]> = { legacy: ['v1'], dual: ['v1', 'v2'], events_only: ['v2'] };
const GPT_4O_ID = 'b9854a5c92dc496b997d99d20';
const PYTHON_SDK = '5.0.4';

const env = modeWebsForSuite('cost');
const { webs, projects } = env;
let other: Project;
beforeAll(() => {
  other = env.other;
});

const call = (mode: Mode, method: string, path: string, body?: unknown, p: Project = projects[mode]) =>
  callApi(webs[mode], p, method, path, body);
const client5 = (mode: Mode, p: Project = projects[mode]) =>
  new LangfuseClient({ publicKey: p.publicKey, secretKey: p.secretKey, baseUrl: webs[mode].url });

/** What a read API says about one observation's model, usage and cost. */
interface CostView {
  modelId: unknown;
  usageDetails: unknown;
  costDetails: unknown;
  totalCost: unknown;
}

async function readCost(mode: Mode, api: 'v1' | 'v2', traceId: string, id: string): Promise<CostView> {
  return eventually(
    `${mode} ${api} observation ${id}`,
    async () => {
      if (api === 'v1') {
        const r = await call(mode, 'GET', `/api/public/observations/${id}`);
        if (r.status !== 200) return undefined;
        const b = r.body;
        return {
          modelId: b['modelId'],
          usageDetails: b['usageDetails'],
          costDetails: b['costDetails'],
          totalCost: b['calculatedTotalCost'],
        };
      }
      const r = await call(
        mode,
        'GET',
        `/api/public/v2/observations?traceId=${traceId}&fields=core,basic,model,usage`,
      );
      const o = ((r.body['data'] ?? []) as Body[]).find((x) => x['id'] === id);
      if (!o) return undefined;
      return {
        modelId: o['modelId'],
        usageDetails: o['usageDetails'],
        costDetails: o['costDetails'],
        totalCost: o['totalCost'],
      };
    },
    30_000,
  );
}

/** A generation sent through `@langfuse/otel` 5.x; returns its trace and observation ids. */
async function sendGeneration(mode: Mode, attrs: LangfuseGenerationAttributes) {
  return withSdkTracer(projects[mode], webs[mode].url, () => {
    const root = startObservation('request');
    const gen = root.startObservation('llm', attrs, { asType: 'generation' });
    gen.end();
    root.end();
    return { traceId: gen.traceId, id: gen.id };
  });
}

const close = (actual: unknown, expected: Record<string, number>) => {
  const a = actual as Record<string, number>;
  expect(Object.keys(a).sort()).toEqual(Object.keys(expected).sort());
  for (const [k, v] of Object.entries(expected)) expect(a[k], k).toBeCloseTo(v, 10);
};

describe.each(MODES)('%s: generations from @langfuse/otel 5.x', (mode) => {
  it('a known model with usage and no cost gets the published price', async () => {
    const g = await sendGeneration(mode, {
      model: 'gpt-4o',
      usageDetails: { input: 1000, output: 500 },
      input: [{ role: 'user', content: 'hi' }],
      output: 'hello',
    });
    for (const api of READS[mode]) {
      const v = await readCost(mode, api, g.traceId, g.id);
      expect(v.modelId, api).toBe(GPT_4O_ID);
      close(v.costDetails, { input: 0.0025, output: 0.005, total: 0.0075 });
      expect(Number(v.totalCost)).toBeCloseTo(0.0075, 10);
      expect(v.usageDetails).toMatchObject({ input: 1000, output: 500 });
    }
  });

  it('neither usage nor cost: the usage is counted with the model tokenizer and priced', async () => {
    const messages = [
      { role: 'system', content: 'You translate corporate jargon into plain English.' },
      { role: 'user', content: 'Let us circle back when we have more bandwidth.' },
    ];
    const answer = 'We will talk later when we are less busy.';
    const g = await sendGeneration(mode, { model: 'gpt-4o-mini', input: messages, output: answer });
    const { input, output } = chatUsage(messages, answer);
    for (const api of READS[mode]) {
      const v = await readCost(mode, api, g.traceId, g.id);
      expect(v.usageDetails, api).toEqual({ input, output, total: input + output });
      close(v.costDetails, {
        input: input * 0.15e-6,
        output: output * 0.6e-6,
        total: input * 0.15e-6 + output * 0.6e-6,
      });
    }
  });

  it('a cost the SDK sent wins over the computed one', async () => {
    const g = await sendGeneration(mode, {
      model: 'gpt-4o',
      usageDetails: { input: 1000, output: 500 },
      costDetails: { input: 0.5, output: 0.25 },
    });
    for (const api of READS[mode]) {
      const v = await readCost(mode, api, g.traceId, g.id);
      close(v.costDetails, { input: 0.5, output: 0.25, total: 0.75 });
      expect(Number(v.totalCost), api).toBeCloseTo(0.75, 10);
    }
  });

  it("a project's own model prices its generations and overrides a built-in one", async () => {
    const lf = client5(mode);
    const own = await lf.api.models.create({
      modelName: `acme-llm-${mode}`,
      matchPattern: '(?i)^acme-llm$',
      unit: 'TOKENS',
      inputPrice: 0.001,
      outputPrice: 0.002,
    });
    const override = await lf.api.models.create({
      modelName: `my-gpt-4o-${mode}`,
      matchPattern: '(?i)^openai/gpt-4o$',
      unit: 'TOKENS',
      pricingTiers: [
        { name: 'Standard', isDefault: true, priority: 0, conditions: [], prices: { input: 1e-3 } },
        {
          name: 'Large',
          isDefault: false,
          priority: 1,
          conditions: [{ usageDetailPattern: 'input', operator: 'gt', value: 100, caseSensitive: false }],
          prices: { input: 2e-3 },
        },
      ],
    });
    const acme = await sendGeneration(mode, { model: 'ACME-LLM', usageDetails: { input: 10, output: 20 } });
    const small = await sendGeneration(mode, { model: 'openai/gpt-4o', usageDetails: { input: 100 } });
    const large = await sendGeneration(mode, { model: 'openai/gpt-4o', usageDetails: { input: 101 } });
    for (const api of READS[mode]) {
      const a = await readCost(mode, api, acme.traceId, acme.id);
      expect(a.modelId).toBe(own.id);
      close(a.costDetails, { input: 0.01, output: 0.04, total: 0.05 });
      const s = await readCost(mode, api, small.traceId, small.id);
      expect(s.modelId).toBe(override.id);
      close(s.costDetails, { input: 0.1, total: 0.1 });
      const l = await readCost(mode, api, large.traceId, large.id);
      close(l.costDetails, { input: 0.202, total: 0.202 });
    }
  });
});

describe.each(MODES)('%s: generations from the Python SDK (langfuse 5.0.4)', (mode) => {
  beforeAll(() => ensurePythonSdk(PYTHON_SDK, (line) => process.stderr.write(`${line}\n`)), 600_000);

  it('usage and no cost, a sent cost, and a model made through its models API, field by field', async () => {
    const p = projects[mode];
    const out = await runPython<{
      modelId: string;
      generations: Record<string, { traceId: string; id: string }>;
    }>(
      PYTHON_SDK,
      'cost',
      { url: webs[mode].url, ...p },
      { CONFORMANCE_CASE: `py-cost-${mode}`, CUSTOM_PATTERN: '(?i)^py-acme$', CUSTOM_MODEL: 'PY-ACME' },
    );
    const { usage, sent, custom } = out.generations;
    for (const api of READS[mode]) {
      const u = await readCost(mode, api, usage!.traceId, usage!.id);
      expect(u.modelId, api).toBe(GPT_4O_ID);
      expect(u.usageDetails, api).toMatchObject({ input: 1000, output: 500 });
      close(u.costDetails, { input: 0.0025, output: 0.005, total: 0.0075 });
      expect(Number(u.totalCost), api).toBeCloseTo(0.0075, 10);
      const s = await readCost(mode, api, sent!.traceId, sent!.id);
      close(s.costDetails, { input: 0.5, output: 0.25, total: 0.75 });
      expect(Number(s.totalCost), api).toBeCloseTo(0.75, 10);
      const c = await readCost(mode, api, custom!.traceId, custom!.id);
      expect(c.modelId, api).toBe(out.modelId);
      expect(c.usageDetails, api).toMatchObject({ input: 10, output: 20 });
      close(c.costDetails, { input: 0.01, output: 0.04, total: 0.05 });
      expect(Number(c.totalCost), api).toBeCloseTo(0.05, 10);
    }
  });
});

describe.each(['legacy', 'dual'] as const)('%s: batch ingestion from langfuse 3.x', (mode) => {
  it('a generation with usage and no cost is priced; one with a cost keeps it', async () => {
    const p = projects[mode];
    const lf = new Langfuse({ publicKey: p.publicKey, secretKey: p.secretKey, baseUrl: webs[mode].url });
    const trace = lf.trace({ name: 'batch-cost' });
    const priced = trace.generation({ name: 'llm', model: 'gpt-4o', usage: { input: 2000, output: 1000 } });
    priced.end();
    const sent = trace.generation({
      name: 'llm',
      model: 'gpt-4o',
      usage: { input: 2000, output: 1000, totalCost: 9 },
    });
    sent.end();
    await bounded('langfuse 3.x shutdown', lf.shutdownAsync(), 30_000);
    const v = await readCost(mode, 'v1', trace.id, priced.id);
    expect(v.modelId).toBe(GPT_4O_ID);
    close(v.costDetails, { input: 0.005, output: 0.01, total: 0.015 });
    const s = await readCost(mode, 'v1', trace.id, sent.id);
    close(s.costDetails, { total: 9 });
  });
});

describe('the models API', () => {
  const mode: Mode = 'events_only';

  it('lists built-in and own definitions in the reference shape, paginated', async () => {
    const lf = client5(mode);
    const page = await lf.api.models.list({ page: 1, limit: 500 });
    expect(page.meta.totalItems).toBe(page.data.length);
    const gpt4o = page.data.find((m) => m.id === GPT_4O_ID)!;
    expect(gpt4o).toMatchObject({
      modelName: 'gpt-4o',
      matchPattern: '(?i)^(openai/)?(gpt-4o)$',
      unit: 'TOKENS',
      inputPrice: 2.5e-6,
      outputPrice: 1e-5,
      totalPrice: null,
      tokenizerId: 'openai',
      isLangfuseManaged: true,
      startDate: null,
    });
    expect(gpt4o.prices['input']).toEqual({ price: 2.5e-6 });
    expect(gpt4o.pricingTiers.map((t) => [t.name, t.isDefault, t.priority])).toEqual([
      ['Standard', true, 0],
      ['Fast mode', false, 1],
    ]);
    const names = page.data.map((m) => m.modelName);
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const second = await lf.api.models.list({ page: 2, limit: 10 });
    expect(second.data.map((m) => m.id)).toEqual(page.data.slice(10, 20).map((m) => m.id));
    expect(second.meta).toEqual({
      page: 2,
      limit: 10,
      totalItems: page.meta.totalItems,
      totalPages: Math.ceil(page.meta.totalItems / 10),
    });
  });

  it('creates, gets and deletes an own definition; built-in ones cannot be deleted', async () => {
    const lf = client5(mode);
    const created = await lf.api.models.create({
      modelName: 'to-delete',
      matchPattern: '(?i)^to-delete$',
      unit: 'REQUESTS',
      totalPrice: 0.01,
      startDate: '2026-01-01T00:00:00.000Z',
      tokenizerId: 'openai',
      tokenizerConfig: { tokenizerModel: 'gpt-4o', tokensPerMessage: 3, tokensPerName: 1 },
    });
    expect(created).toMatchObject({
      modelName: 'to-delete',
      unit: 'REQUESTS',
      totalPrice: 0.01,
      inputPrice: null,
      isLangfuseManaged: false,
      startDate: '2026-01-01T00:00:00.000Z',
      tokenizerConfig: { tokenizerModel: 'gpt-4o', tokensPerMessage: 3, tokensPerName: 1 },
      prices: { total: { price: 0.01 } },
    });
    expect(created.pricingTiers).toEqual([
      {
        id: expect.any(String),
        name: 'Standard',
        isDefault: true,
        priority: 0,
        conditions: [],
        prices: { total: 0.01 },
      },
    ]);
    expect(await lf.api.models.get(created.id)).toEqual(created);
    expect((await call(mode, 'GET', `/api/public/models/${created.id}`, undefined, other)).status).toBe(404);
    expect((await call(mode, 'DELETE', `/api/public/models/${created.id}`, undefined, other)).status).toBe(
      404,
    );
    expect(await call(mode, 'DELETE', `/api/public/models/${created.id}`)).toEqual({
      status: 200,
      body: { message: 'Model successfully deleted' },
    });
    const gone = await call(mode, 'GET', `/api/public/models/${created.id}`);
    expect(gone).toEqual({ status: 404, body: { message: 'No model with this id found.' } });
    const builtIn = await call(mode, 'DELETE', `/api/public/models/${GPT_4O_ID}`);
    expect(builtIn.status).toBe(404);
    expect(String(builtIn.body['message'])).toMatch(/cannot delete built-in models/);
    expect((await call(mode, 'GET', `/api/public/models/${GPT_4O_ID}`)).status).toBe(200);
  });

  it.each([
    [{ modelName: 'x', matchPattern: '(a', unit: 'TOKENS', inputPrice: 1 }, /matchPattern/],
    [{ modelName: 'x', matchPattern: '(a)\\1', unit: 'TOKENS', inputPrice: 1 }, /matchPattern/],
    [{ modelName: 'x', matchPattern: 'x', unit: 'TOKENS' }, /pricingTiers/],
    [{ modelName: 'x', matchPattern: 'x', unit: 'LITRES', inputPrice: 1 }, /unit/],
    [{ modelName: 'x', matchPattern: 'x', unit: 'TOKENS', inputPrice: 1, totalPrice: 2 }, /totalPrice/],
    [
      { modelName: 'x', matchPattern: 'x', unit: 'TOKENS', tokenizerId: 'llama', inputPrice: 1 },
      /tokenizerId/,
    ],
  ])('refuses %j with 400 naming the field', async (body, field) => {
    const r = await call(mode, 'POST', '/api/public/models', body);
    expect(r.status).toBe(400);
    expect(String(r.body['error'])).toMatch(field);
  });

  it('refuses a second definition of the same name in a project, not in another project', async () => {
    const body = { modelName: 'twice', matchPattern: '^twice$', unit: 'TOKENS', inputPrice: 1 };
    expect((await call(mode, 'POST', '/api/public/models', body)).status).toBe(200);
    const again = await call(mode, 'POST', '/api/public/models', body);
    expect(again.status).toBe(400);
    expect(String(again.body['error'])).toMatch(/Model name 'twice' already exists in project/);
    expect((await call(mode, 'POST', '/api/public/models', body, other)).status).toBe(200);
  });
});
