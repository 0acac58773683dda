/**
 * The OpenAI Python client instrumented by `opentelemetry-instrumentation-openai-v2` (unchanged,
 * configured by the environment only) against the real judge model behind llama.cpp's
 * OpenAI-compatible server, exporting spans, log records and metrics over OTLP http/protobuf to `observatory
 * web` in events_only. Content capture is in the log events, in both of the instrumentation's
 * modes: the legacy per-message events (`gen_ai.user.message`, `gen_ai.choice`) and, under
 * `gen_ai_latest_experimental`, `gen_ai.client.inference.operation.details` (EVENT_ONLY). The
 * generation's input, output, usage and cost are read back through Observations API v2; the
 * prices are the project's definition for the model, $1 and $2 per million tokens. The app's
 * GenAI metrics (token usage, operation duration) are read back through Metrics API v2 and agree
 * with the generations' usage.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../conformance/env.ts';
import { ensureHashedVenv } from '../fixtures/hashed-venv.ts';
import { JUDGE_MODEL, type Judge, startJudge } from '../fixtures/judge.ts';
import { type Body, callApi } from '../fixtures/mode-webs.ts';
import { runCommand } from '../fixtures/processes.ts';
import { basicAuth, MODE_ENV, ROOT } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';

const HERE = join(ROOT, 'test/fixtures/otel-genai');
let suite: ServiceSuite;
let judge: Judge;
let python: string;

beforeAll(async () => {
  [suite, judge, python] = await Promise.all([
    startServiceSuite({ project: 'otel-genai-logs', env: MODE_ENV.events_only }),
    startJudge(),
    ensureHashedVenv(
      'otel-genai-venv',
      join(HERE, 'requirements.txt'),
      'openai + opentelemetry-instrumentation-openai-v2 2.4b0 + the OTLP http exporter',
    ),
  ]);
  const model = await callApi(suite.web, suite.project, 'POST', '/api/public/models', {
    modelName: 'smollm2-135m',
    // The request's model name and the server's answer (the GGUF's name) both match.
    matchPattern: '(?i).*smollm2.*',
    unit: 'TOKENS',
    inputPrice: 0.000001,
    outputPrice: 0.000002,
  });
  expect(model.status, JSON.stringify(model.body)).toBe(200);
}, 900_000);

afterAll(async () => {
  await stopServiceSuite(suite, judge);
});

const QUESTION = 'What is the capital of France?';
const SYSTEM = 'Answer in one word.';

/** Runs the app once; the trace and span id of its chat call. */
async function chat(env: Record<string, string>): Promise<{ traceId: string; spanId: string }> {
  const out = await runCommand('openai-app', python, [join(HERE, 'chat.py'), QUESTION], {
    env: {
      PATH: process.env['PATH'] ?? '',
      OPENAI_BASE_URL: judge.baseUrl,
      OPENAI_API_KEY: 'sk-no-key-needed',
      MODEL: JUDGE_MODEL,
      OTEL_EXPORTER_OTLP_ENDPOINT: `${suite.web.url}/api/public/otel`,
      OTEL_EXPORTER_OTLP_HEADERS: `Authorization=${encodeURIComponent(basicAuth(suite.project))}`,
      ...env,
    },
    timeoutMs: 120_000,
  });
  const ids = /^([0-9a-f]{32}) ([0-9a-f]{16})$/m.exec(out);
  if (!ids) throw new Error(`the app printed no ids:\n${out}`);
  return { traceId: ids[1]!, spanId: ids[2]! };
}

/** The trace's observations once the generation has its output. */
function observations(traceId: string, spanId: string): Promise<Body[]> {
  return eventually(
    `observations of ${traceId}`,
    async () => {
      const r = await callApi(
        suite.web,
        suite.project,
        'GET',
        `/api/public/v2/observations?traceId=${traceId}&fields=core,basic,io,model,usage`,
      );
      const data = (r.body.data ?? []) as Body[];
      return data.find((o) => o['id'] === spanId)?.['output'] ? data : undefined;
    },
    30_000,
  );
}

const parsed = (v: unknown) => JSON.parse(String(v)) as unknown;

describe.each<{ mode: string; env: Record<string, string> }>([
  {
    mode: 'legacy events (gen_ai.*.message, gen_ai.choice)',
    env: { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' },
  },
  {
    mode: 'latest conventions, EVENT_ONLY (gen_ai.client.inference.operation.details)',
    env: {
      OTEL_SEMCONV_STABILITY_OPT_IN: 'gen_ai_latest_experimental',
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'EVENT_ONLY',
    },
  },
])('opentelemetry-instrumentation-openai-v2, content in log events: $mode', ({ env }) => {
  let generation: Body;
  let events: Body[];
  beforeAll(async () => {
    const { traceId, spanId } = await chat(env);
    const data = await observations(traceId, spanId);
    generation = data.find((o) => o['id'] === spanId)!;
    events = data.filter((o) => o['type'] === 'EVENT');
  }, 180_000);

  it('fills the generation from the log events, which are its events', () => {
    expect(generation).toMatchObject({ type: 'GENERATION' });
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) expect(e['parentObservationId']).toBe(generation['id']);
    expect(events.every((e) => String(e['name']).startsWith('gen_ai.'))).toBe(true);
  });

  it('has the system instructions and the question as input', () => {
    const input = parsed(generation['input']) as Record<string, unknown>[];
    expect(input[0]).toMatchObject({ role: 'system' });
    expect(JSON.stringify(input[0])).toContain(SYSTEM);
    expect(input.at(-1)).toMatchObject({ role: 'user' });
    expect(JSON.stringify(input.at(-1))).toContain(QUESTION);
  });

  it("has the model's answer as output", () => {
    const output = parsed(generation['output']);
    const message = (Array.isArray(output) ? output[0] : output) as Record<string, unknown>;
    expect(message).toMatchObject({ role: 'assistant' });
    expect(JSON.stringify(message).length).toBeGreaterThan(JSON.stringify({ role: 'assistant' }).length);
  });

  it("has the call's usage, priced by the project's definition", () => {
    const usage = generation['usageDetails'] as Record<string, number>;
    expect(usage['input']).toBeGreaterThan(0);
    expect(usage['output']).toBeGreaterThan(0);
    expect(usage['total']).toBe(usage['input']! + usage['output']!);
    const cost = generation['costDetails'] as Record<string, number>;
    expect(cost['input']).toBeCloseTo(usage['input']! * 1e-6, 12);
    expect(cost['output']).toBeCloseTo(usage['output']! * 2e-6, 12);
    expect(generation['totalCost']).toBeCloseTo(usage['input']! * 1e-6 + usage['output']! * 2e-6, 12);
  });
});

describe("the same app's GenAI metrics (the instrumentation's own, over OTLP http/protobuf)", () => {
  it('are read back through Metrics API v2: token usage equal to the generations’ usage, one duration per call', async () => {
    const query = {
      view: 'genai-metrics',
      dimensions: [{ field: 'metricName' }, { field: 'tokenType' }, { field: 'operation' }],
      metrics: [
        { measure: 'value', aggregation: 'sum' },
        { measure: 'measurements', aggregation: 'sum' },
      ],
      orderBy: [
        { field: 'metricName', direction: 'asc' },
        { field: 'tokenType', direction: 'asc' },
      ],
      fromTimestamp: new Date(Date.now() - 3_600_000).toISOString(),
      toTimestamp: new Date(Date.now() + 60_000).toISOString(),
    };
    const rows = await eventually(
      'the GenAI metrics of both calls',
      async () => {
        const r = await callApi(
          suite.web,
          suite.project,
          'GET',
          `/api/public/v2/metrics?query=${encodeURIComponent(JSON.stringify(query))}`,
        );
        const data = (r.body.data ?? []) as Body[];
        return data.length >= 3 ? data : undefined;
      },
      30_000,
    );
    const all = await callApi(
      suite.web,
      suite.project,
      'GET',
      '/api/public/v2/observations?fields=core,usage&limit=100',
    );
    const generations = ((all.body.data ?? []) as Body[]).filter((o) => o['type'] === 'GENERATION');
    expect(generations.length).toBe(2);
    const usage = (k: string) =>
      generations.reduce((a, g) => a + ((g['usageDetails'] as Record<string, number>)[k] ?? 0), 0);
    expect(rows.map((r) => [r['metricName'], r['tokenType'], r['operation'], r['sum_measurements']])).toEqual(
      [
        ['gen_ai.client.operation.duration', '', 'chat', 2],
        ['gen_ai.client.token.usage', 'input', 'chat', 2],
        ['gen_ai.client.token.usage', 'output', 'chat', 2],
      ],
    );
    expect(rows[1]!['sum_value']).toBe(usage('input'));
    expect(rows[2]!['sum_value']).toBe(usage('output'));
    expect(rows[0]!['sum_value']).toBeGreaterThan(0);
  });
});
