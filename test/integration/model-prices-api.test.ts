/**
 * Model definitions and the prices the Observations API v2 shows, as the reference defines them:
 * `POST /api/public/models` takes `unit` as optional (models.yml, `CreateModelRequest`), and the
 * v2 model field group carries `inputPrice`, `outputPrice` and `totalPrice` as decimal strings of
 * the matched model's prices (commons.yml, `ObservationV2`: "serialized as a decimal string (e.g.
 * "0.0001")"), null when the group is not asked. The flat prices of a definition are its default
 * tier (models.yml). In process (events_only) over real PostgreSQL and the embedded ClickHouse
 * engine; the generation arrives over OTLP/JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject } from '../../server/features/projects/keys.ts';
import { waitFor } from '../fixtures/wait.ts';
import { type InProcessWeb, type Stores, serveWeb, startStores } from '../fixtures/web-in-process.ts';

let stores: Stores;
let web: InProcessWeb;
let auth: string;

beforeAll(async () => {
  stores = await startStores();
  web = await serveWeb(stores, { SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only' });
  const project = await createProject(stores.pool, 'model-prices');
  auth = `Basic ${Buffer.from(`${project.publicKey}:${project.secretKey}`).toString('base64')}`;
}, 120_000);

afterAll(async () => {
  await web?.app.close();
  await stores?.stop();
});

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${web.url}${path}`, {
    method,
    headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('POST /api/public/models', () => {
  it('takes a definition without unit (optional in CreateModelRequest); its unit reads back null', async () => {
    const created = await call('POST', '/api/public/models', {
      modelName: 'no-unit-model',
      matchPattern: '(?i)^no-unit-model$',
      inputPrice: 0.001,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ modelName: 'no-unit-model', unit: null, inputPrice: 0.001 });
    const read = await call('GET', `/api/public/models/${created.body['id']}`);
    expect(read.body).toMatchObject({ unit: null, inputPrice: 0.001 });
  });
});

describe('GET /api/public/v2/observations, model field group', () => {
  const TRACE = 'a1'.repeat(16);
  const SPAN = 'b2'.repeat(8);

  beforeAll(async () => {
    // A default tier (the flat prices) and a tier for long prompts, which must not be the one shown.
    const model = await call('POST', '/api/public/models', {
      modelName: 'priced-model',
      matchPattern: '(?i)^priced-model$',
      unit: 'TOKENS',
      pricingTiers: [
        {
          name: 'Standard',
          isDefault: true,
          priority: 0,
          conditions: [],
          prices: { input: 0.0001, output: 1.25e-7 },
        },
        {
          name: 'Long prompts',
          isDefault: false,
          priority: 1,
          conditions: [{ usageDetailPattern: 'input', operator: 'gt', value: 100_000 }],
          prices: { input: 0.5, output: 0.75 },
        },
      ],
    });
    expect(model.status, JSON.stringify(model.body)).toBe(200);
    const nanos = `${BigInt(Date.now()) * 1_000_000n}`;
    const exported = await call('POST', '/api/public/otel/v1/traces', {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: TRACE,
                  spanId: SPAN,
                  name: 'priced',
                  startTimeUnixNano: nanos,
                  endTimeUnixNano: nanos,
                  attributes: [
                    { key: 'langfuse.observation.type', value: { stringValue: 'generation' } },
                    { key: 'gen_ai.request.model', value: { stringValue: 'priced-model' } },
                  ],
                },
              ],
            },
          ],
        },
      ],
    });
    expect(exported.status, JSON.stringify(exported.body)).toBe(200);
  });

  const observation = (fields: string) =>
    waitFor(
      'the generation in observations v2',
      async () => {
        const res = await call('GET', `/api/public/v2/observations?traceId=${TRACE}&fields=${fields}`);
        return (res.body['data'] as Record<string, unknown>[] | undefined)?.[0];
      },
      30_000,
    );

  it('shows the default tier prices of the matched model as decimal strings', async () => {
    const o = await observation('core,model');
    expect(o).toMatchObject({
      id: SPAN,
      providedModelName: 'priced-model',
      inputPrice: '0.0001',
      outputPrice: '0.000000125',
      totalPrice: null,
    });
    expect(o['modelId']).toEqual(expect.any(String));
  });

  it('keeps them null when the model group is not asked', async () => {
    const o = await observation('core');
    expect(o).toMatchObject({ modelId: null, inputPrice: null, outputPrice: null, totalPrice: null });
  });
});
