/**
 * The public JS/TS SDKs against the service in each write mode, checked on the server's read APIs.
 * The OpenTelemetry-based SDKs keep their tracer provider in one process-wide slot
 * (`Symbol.for('langfuse')`), so their cases run one after another; the modes' checks overlap.
 */
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { Langfuse } from 'langfuse';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import {
  checkComment,
  checkDataset,
  checkPrompts,
  checkScore,
  checkScoreConfig,
  checkTracing,
} from './checks.ts';
import {
  bounded as boundedBy,
  caseName,
  MODES,
  type Mode,
  type ModeServer,
  otlpTrace,
  shortName,
} from './env.ts';
import { LANGFUSE_V3_VERSION, OTEL_SDKS, type OtelSdk } from './js-sdks.ts';

const env = inject('conformance');
const FLUSH_MS = 30_000;

const bounded = <T>(what: string, p: Promise<T>, ms = FLUSH_MS) => boundedBy(what, p, ms);

/** One at a time: the SDKs share a process-wide tracer provider slot. */
let otelTurn: Promise<unknown> = Promise.resolve();
function oneAtATime<T>(fn: () => Promise<T>): Promise<T> {
  const run = otelTurn.then(fn, fn);
  otelTurn = run.catch(() => {});
  return run;
}

beforeAll(() => {
  // The global context manager, so that propagateAttributes reaches the spans started inside it.
  new NodeTracerProvider().register();
});

function v3Client(s: ModeServer) {
  return new Langfuse({ publicKey: s.publicKey, secretKey: s.secretKey, baseUrl: s.url });
}

async function traceWithV3(s: ModeServer, id: string): Promise<string> {
  const sdk = v3Client(s);
  const trace = sdk.trace({
    name: `${id}-root`,
    userId: `${id}-user`,
    sessionId: `${id}-session`,
    input: { q: id },
  });
  const span = trace.span({ name: 'step', input: 'step-in' });
  span.update({ output: 'step-out' });
  span.end();
  span
    .generation({ name: 'llm', model: 'gpt-4o-mini', input: 'prompt' })
    .end({ output: 'completion', usage: { input: 10, output: 20, total: 30 } });
  trace.update({ output: { a: id } });
  await bounded('langfuse 3.x shutdownAsync', sdk.shutdownAsync());
  return trace.id;
}

function traceWithOtelSdk(sdk: OtelSdk, s: ModeServer, id: string): Promise<string> {
  return oneAtATime(async () => {
    const processor = new sdk.otel.LangfuseSpanProcessor({
      publicKey: s.publicKey,
      secretKey: s.secretKey,
      baseUrl: s.url,
      exportMode: 'immediate',
      mediaUploadEnabled: false,
    });
    const provider = new NodeTracerProvider({ spanProcessors: [processor] });
    sdk.tracing.setLangfuseTracerProvider(provider);
    let traceId = '';
    try {
      sdk.tracing.propagateAttributes({ userId: `${id}-user`, sessionId: `${id}-session` }, () => {
        const root = sdk.tracing.startObservation(`${id}-root`, { input: { q: id } });
        traceId = root.traceId;
        const step = root.startObservation('step', { input: 'step-in' });
        step.update({ output: 'step-out' });
        const gen = step.startObservation(
          'llm',
          { model: 'gpt-4o-mini', input: 'prompt' },
          { asType: 'generation' },
        );
        gen.update({ output: 'completion', usageDetails: { input: 10, output: 20, total: 30 } });
        gen.end();
        step.end();
        root.update({ output: { a: id } });
        root.end();
      });
      await bounded(`${sdk.label} forceFlush`, processor.forceFlush());
    } finally {
      await bounded(`${sdk.label} shutdown`, provider.shutdown());
      sdk.tracing.setLangfuseTracerProvider(null);
    }
    return traceId;
  });
}

async function scoreWithOtelSdk(sdk: OtelSdk, s: ModeServer, traceId: string, name: string) {
  const client = new sdk.client.LangfuseClient({
    publicKey: s.publicKey,
    secretKey: s.secretKey,
    baseUrl: s.url,
  });
  client.score.create({ traceId, name, value: 0.75, comment: 'conformance' });
  await bounded(`${sdk.label} score flush`, client.score.flush());
  await bounded(`${sdk.label} shutdown`, client.shutdown());
}

describe.concurrent('langfuse 3.x (batch ingestion)', () => {
  for (const mode of MODES) {
    it(`tracing in ${mode}`, async () => {
      const id = caseName('js3', 'tracing', mode);
      const traceId = await traceWithV3(env.modes[mode], id);
      await checkTracing(env, mode, 'refused', traceId, id, {
        name: 'langfuse-js',
        version: LANGFUSE_V3_VERSION,
        propagatesClientSide: false,
      });
    });
    it(`score (batch score-create) in ${mode}`, async () => {
      const id = caseName('js3', 'score', mode);
      const sdk = v3Client(env.modes[mode]);
      sdk.score({ traceId: `${id}-trace`, name: `${id}-quality`, value: 0.75 });
      await bounded('langfuse 3.x shutdownAsync', sdk.shutdownAsync());
      await checkScore(env.modes[mode], `${id}-trace`, `${id}-quality`, 0.75);
    });
  }
});

for (const sdk of OTEL_SDKS) {
  describe.concurrent(`${sdk.label} (${sdk.version})`, () => {
    for (const mode of MODES) {
      it(`tracing in ${mode}`, async () => {
        const id = caseName('js', sdk.version, 'tracing', mode);
        const traceId = await traceWithOtelSdk(sdk, env.modes[mode], id);
        await checkTracing(env, mode as Mode, sdk.tier, traceId, id, {
          name: 'javascript',
          version: sdk.version,
          propagatesClientSide: true,
        });
      });
      it(`score (batch score-create) in ${mode}`, async () => {
        const id = caseName('js', sdk.version, 'score', mode);
        await scoreWithOtelSdk(sdk, env.modes[mode], `${id}-trace`, `${id}-quality`);
        await checkScore(env.modes[mode], `${id}-trace`, `${id}-quality`, 0.75);
      });
    }
  });
}

describe.concurrent('langfuse 3.x: datasets and prompts', () => {
  for (const mode of MODES) {
    it(`datasets in ${mode}`, async () => {
      const id = caseName('js3', 'datasets', mode);
      const s = env.modes[mode];
      const sdk = v3Client(s);
      const name = `${id}-dataset`;
      const itemIds = [`${id}-item-1`, `${id}-item-2`];
      await bounded('createDataset', sdk.createDataset({ name }));
      for (const [i, itemId] of itemIds.entries()) {
        await bounded(
          'createDatasetItem',
          sdk.createDatasetItem({ datasetName: name, id: itemId, input: { n: i } }),
        );
      }
      const dataset = await bounded('getDataset', sdk.getDataset(name));
      expect(dataset.items.map((i) => i.id).sort()).toEqual(itemIds);
      await bounded('shutdownAsync', sdk.shutdownAsync());
      await checkDataset(s, name, itemIds);
    });
    it(`prompts in ${mode}`, async () => {
      const id = caseName('js3', 'prompts', mode);
      const s = env.modes[mode];
      const sdk = v3Client(s);
      const [text, chat] = [`${id}-text`, `${id}-chat`];
      await bounded(
        'createPrompt',
        sdk.createPrompt({
          name: text,
          prompt: 'Hello {{name}}',
          labels: ['production'],
          config: { temperature: 0.1 },
        }),
      );
      await bounded(
        'createPrompt',
        sdk.createPrompt({ name: text, prompt: 'Hi {{name}}', labels: ['staging'] }),
      );
      await bounded(
        'createPrompt',
        sdk.createPrompt({
          name: chat,
          type: 'chat',
          prompt: [
            { role: 'system', content: 'You are {{role}}' },
            { role: 'user', content: '{{q}}' },
          ],
          labels: ['production'],
        }),
      );
      const production = await bounded('getPrompt', sdk.getPrompt(text, undefined, { cacheTtlSeconds: 0 }));
      expect([production.version, production.compile({ name: 'Ada' })]).toEqual([1, 'Hello Ada']);
      const staging = await bounded(
        'getPrompt',
        sdk.getPrompt(text, undefined, { label: 'staging', cacheTtlSeconds: 0 }),
      );
      expect(staging.version).toBe(2);
      await bounded('shutdownAsync', sdk.shutdownAsync());
      await checkPrompts(s, text, chat);
    });
  }
});

function otelClient(sdk: OtelSdk, s: ModeServer) {
  return new sdk.client.LangfuseClient({ publicKey: s.publicKey, secretKey: s.secretKey, baseUrl: s.url });
}

for (const sdk of OTEL_SDKS) {
  describe.concurrent(`${sdk.label} (${sdk.version}): datasets, prompts, comments, score configs`, () => {
    for (const mode of MODES) {
      it(`datasets in ${mode}`, async () => {
        const id = caseName('js', sdk.version, 'datasets', mode);
        const s = env.modes[mode];
        const client = otelClient(sdk, s);
        const name = `${id}-dataset`;
        const itemIds = [`${id}-item-1`, `${id}-item-2`];
        await bounded('datasets.create', client.api.datasets.create({ name }));
        for (const [i, itemId] of itemIds.entries()) {
          await bounded(
            'datasetItems.create',
            client.api.datasetItems.create({ datasetName: name, id: itemId, input: { n: i } }),
          );
        }
        const dataset = await bounded('dataset.get', client.dataset.get(name));
        expect(dataset.items.map((i) => i.id).sort()).toEqual(itemIds);
        await bounded('shutdown', client.shutdown());
        await checkDataset(s, name, itemIds);
      });
      it(`prompts in ${mode}`, async () => {
        const id = caseName('js', sdk.version, 'prompts', mode);
        const s = env.modes[mode];
        const client = otelClient(sdk, s);
        const [text, chat] = [`${id}-text`, `${id}-chat`];
        await bounded(
          'prompt.create',
          client.prompt.create({
            name: text,
            prompt: 'Hello {{name}}',
            labels: ['production'],
            config: { temperature: 0.1 },
          }),
        );
        await bounded(
          'prompt.create',
          client.prompt.create({ name: text, prompt: 'Hi {{name}}', labels: ['staging'] }),
        );
        await bounded(
          'prompt.create',
          client.prompt.create({
            name: chat,
            type: 'chat',
            prompt: [
              { role: 'system', content: 'You are {{role}}' },
              { role: 'user', content: '{{q}}' },
            ],
            labels: ['production'],
          }),
        );
        const production = await bounded('prompt.get', client.prompt.get(text, { cacheTtlSeconds: 0 }));
        expect([production.version, production.compile({ name: 'Ada' })]).toEqual([1, 'Hello Ada']);
        const v2 = await bounded('prompt.get', client.prompt.get(text, { version: 2, cacheTtlSeconds: 0 }));
        expect(v2.version).toBe(2);
        await bounded('shutdown', client.shutdown());
        await checkPrompts(s, text, chat);
      });
      it(`comments in ${mode}`, async () => {
        const id = caseName('js', sdk.version, 'comments', mode);
        const s = env.modes[mode];
        const traceId = await otlpTrace(s, `${id}-commented`);
        const client = otelClient(sdk, s);
        await bounded(
          'comments.create',
          client.api.comments.create({
            projectId: s.projectId,
            objectType: 'TRACE',
            objectId: traceId,
            content: `${id} comment`,
          }),
        );
        const listed = await bounded(
          'comments.get',
          client.api.comments.get({ objectType: 'TRACE', objectId: traceId }),
        );
        expect(listed.data.map((c) => c.content)).toEqual([`${id} comment`]);
        await bounded('shutdown', client.shutdown());
        await checkComment(s, traceId, `${id} comment`);
      });
      it(`score configs in ${mode}`, async () => {
        const name = shortName('cfg');
        const s = env.modes[mode];
        const client = otelClient(sdk, s);
        const config = await bounded(
          'scoreConfigs.create',
          client.api.scoreConfigs.create({
            name,
            dataType: 'NUMERIC',
            minValue: 0,
            maxValue: 1,
          }),
        );
        const fetched = await bounded('scoreConfigs.getById', client.api.scoreConfigs.getById(config.id));
        expect(fetched.name).toBe(name);
        await bounded('shutdown', client.shutdown());
        await checkScoreConfig(s, config.id, name);
      });
    }
  });
}
