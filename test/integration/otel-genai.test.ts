/**
 * Spans written as the OpenTelemetry GenAI conventions describe them (docs/otel-genai.md), sent by
 * the real OTLP protobuf exporter to `observatory web` in the version 4 default mode (real
 * PostgreSQL, the ClickHouse engine behind `analytics-server`), and read back through the public
 * observations API. The expected costs are the providers' published prices per million tokens:
 * Anthropic Claude Sonnet 4.5 $3 input, $15 output, $3.75 cache write (5 minutes), $0.30 cache
 * read; OpenAI o3 $2 input, $0.50 cached input, $8 output (reasoning tokens are billed as output).
 */
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../conformance/env.ts';
import { type Body, callApi } from '../fixtures/mode-webs.ts';
import { basicAuth, MODE_ENV } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';

let suite: ServiceSuite;

beforeAll(async () => {
  suite = await startServiceSuite({ project: 'otel-genai', env: MODE_ENV.events_only });
});

afterAll(async () => {
  await stopServiceSuite(suite);
});

const CONVERSATION = 'conv_5j66UpCpwteGg4YSxUnt7lPY';
const START = Date.parse('2026-03-02T10:00:00.000Z');
const at = (ms: number) => new Date(START + ms);

/** An agent run: the agent, its two model calls (Anthropic with cache, OpenAI with reasoning) and a tool. */
async function sendAgentRun(): Promise<string> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'genai-app' }),
    spanProcessors: [
      new SimpleSpanProcessor(
        new OTLPTraceExporter({
          url: `${suite.web.url}/api/public/otel/v1/traces`,
          headers: { Authorization: basicAuth(suite.project) },
        }),
      ),
    ],
  });
  const tracer = provider.getTracer('genai-app');
  const agent = tracer.startSpan('invoke_agent Travel Planner', {
    startTime: at(0),
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.agent.name': 'Travel Planner',
      'gen_ai.conversation.id': CONVERSATION,
      'gen_ai.request.model': 'claude-sonnet-4-5',
      // The sum of the calls below, which the agent must not be charged for a second time.
      'gen_ai.usage.input_tokens': 3000,
      'gen_ai.usage.output_tokens': 600,
    },
  });
  const inAgent = trace.setSpan(ROOT_CONTEXT, agent);
  const child = (name: string, attributes: Record<string, string | number>, from: number, to: number) =>
    tracer.startSpan(name, { startTime: at(from), attributes }, inAgent).end(at(to));
  child(
    'chat claude-sonnet-4-5',
    {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-sonnet-4-5',
      'gen_ai.conversation.id': CONVERSATION,
      'gen_ai.usage.input_tokens': 1000,
      'gen_ai.usage.cache_read.input_tokens': 600,
      'gen_ai.usage.cache_creation.input_tokens': 200,
      'gen_ai.usage.output_tokens': 100,
      'gen_ai.response.time_to_first_chunk': 0.25,
    },
    10,
    900,
  );
  child(
    'execute_tool get_weather',
    {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_weather',
      'gen_ai.tool.call.id': 'call_VSPygqKTWdrhaFErNvMV18Yl',
      'gen_ai.conversation.id': CONVERSATION,
      'gen_ai.tool.call.arguments': '{"location":"Paris"}',
    },
    900,
    950,
  );
  child(
    'chat o3',
    {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'o3',
      'gen_ai.conversation.id': CONVERSATION,
      'gen_ai.usage.input_tokens': 2000,
      'gen_ai.usage.cache_read.input_tokens': 1000,
      'gen_ai.usage.output_tokens': 500,
      'gen_ai.usage.reasoning.output_tokens': 300,
    },
    1000,
    3000,
  );
  agent.end(at(3100));
  await provider.forceFlush();
  await provider.shutdown();
  return agent.spanContext().traceId;
}

/** The trace's observations, by name, once all four are readable. */
async function readObservations(traceId: string): Promise<Record<string, Body>> {
  return eventually(
    `observations of trace ${traceId}`,
    async () => {
      const r = await callApi(
        suite.web,
        suite.project,
        'GET',
        // The list shortens metadata values; `expandMetadata` asks for `attributes` in full.
        `/api/public/v2/observations?traceId=${traceId}&fields=core,basic,time,model,usage,metadata,metrics&expandMetadata=attributes`,
      );
      const data = (r.body.data ?? []) as Body[];
      return data.length === 4 ? Object.fromEntries(data.map((o) => [o['name'], o])) : undefined;
    },
    30_000,
  );
}

describe('OTel GenAI conventions through OTLP', () => {
  let traceId: string;
  let byName: Record<string, Body>;
  beforeAll(async () => {
    traceId = await sendAgentRun();
    byName = await readObservations(traceId);
  });

  it('types agent, model calls and tool by gen_ai.operation.name', () => {
    expect(byName['invoke_agent Travel Planner']).toMatchObject({ type: 'AGENT' });
    expect(byName['chat claude-sonnet-4-5']).toMatchObject({ type: 'GENERATION' });
    expect(byName['chat o3']).toMatchObject({ type: 'GENERATION' });
    expect(byName['get_weather']).toMatchObject({ type: 'TOOL' });
  });

  it('does not charge the agent for its calls', () => {
    expect(byName['invoke_agent Travel Planner']).toMatchObject({
      providedModelName: null,
      usageDetails: {},
      costDetails: {},
      totalCost: null,
    });
  });

  it('stores cache tokens apart from input and prices them at the cache prices', () => {
    const o = byName['chat claude-sonnet-4-5']!;
    expect(o['usageDetails']).toEqual({
      input: 200,
      input_cached_tokens: 600,
      input_cache_creation: 200,
      output: 100,
      total: 1100,
    });
    const cost = o['costDetails'] as Record<string, number>;
    expect(cost['input']).toBeCloseTo(200 * 3e-6, 12);
    expect(cost['input_cached_tokens']).toBeCloseTo(600 * 0.3e-6, 12);
    expect(cost['input_cache_creation']).toBeCloseTo(200 * 3.75e-6, 12);
    expect(cost['output']).toBeCloseTo(100 * 15e-6, 12);
    expect(o['totalCost']).toBeCloseTo(0.0006 + 0.00018 + 0.00075 + 0.0015, 12);
  });

  it('stores reasoning tokens apart from output and prices them', () => {
    const o = byName['chat o3']!;
    expect(o['usageDetails']).toEqual({
      input: 1000,
      input_cached_tokens: 1000,
      output: 200,
      output_reasoning_tokens: 300,
      total: 2500,
    });
    const cost = o['costDetails'] as Record<string, number>;
    expect(cost['output_reasoning_tokens']).toBeCloseTo(300 * 8e-6, 12);
    expect(o['totalCost']).toBeCloseTo(1000 * 2e-6 + 1000 * 0.5e-6 + 200 * 8e-6 + 300 * 8e-6, 12);
  });

  it('takes the time to first token from gen_ai.response.time_to_first_chunk', () => {
    expect(byName['chat claude-sonnet-4-5']).toMatchObject({
      startTime: '2026-03-02T10:00:00.010Z',
      completionStartTime: '2026-03-02T10:00:00.260Z',
      timeToFirstToken: 0.25,
    });
  });

  it('keeps the provider in the metadata attributes', () => {
    const metadata = byName['chat o3']!['metadata'] as Record<string, unknown>;
    expect(metadata['attributes']).toMatchObject({ 'gen_ai.provider.name': 'openai' });
  });

  it('makes gen_ai.conversation.id the session', async () => {
    const r = await callApi(
      suite.web,
      suite.project,
      'GET',
      `/api/public/v2/observations?sessionId=${CONVERSATION}`,
    );
    expect(r.status).toBe(200);
    expect(((r.body.data ?? []) as Body[]).map((o) => o['traceId'])).toEqual([
      traceId,
      traceId,
      traceId,
      traceId,
    ]);
  });
});
