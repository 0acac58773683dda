/**
 * The OTel GenAI metrics over OTLP, from real producers: the OpenTelemetry JS metrics SDK with its
 * gRPC exporter (MetricsService on the web's gRPC port) and its http/protobuf exporter
 * (`/api/public/otel/v1/metrics`), unchanged. What was stored is read back through Metrics API v2
 * (the `genai-metrics` view), per project; other metrics are counted on `/metrics`, not stored.
 */
import { status } from '@grpc/grpc-js';
import { OTLPMetricExporter as GrpcMetricExporter } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  exportMetricsServiceRequestType,
  exportMetricsServiceResponseType,
} from '../../server/features/otel/otlp-proto.ts';
import { grpcAuth, rawGrpcExport } from '../fixtures/grpc-export.ts';
import { callApi } from '../fixtures/mode-webs.ts';
import { basicAuth, MODE_ENV, type Project } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';

let suite: ServiceSuite;
let viaGrpc: Project;
let viaHttp: Project;
let bystander: Project;
const started = Date.now();

beforeAll(async () => {
  suite = await startServiceSuite({
    project: 'metrics-grpc',
    others: ['metrics-http', 'metrics-none'],
    env: MODE_ENV.events_only,
  });
  [viaGrpc, viaHttp, bystander] = [suite.project, ...suite.others] as [Project, Project, Project];
});

afterAll(() => stopServiceSuite(suite));

/**
 * An app instrumented as opentelemetry-instrumentation-openai-v2 is: two chat calls, their token
 * usage and durations, and a metric of its own; exported (cumulative, the SDK default) twice, as a
 * periodic reader does, the second time with one call more.
 */
async function runApp(exporter: PushMetricExporter) {
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': 'chat-app', 'deployment.environment.name': 'prod' }),
    readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })],
  });
  const meter = provider.getMeter('opentelemetry.instrumentation.openai_v2');
  const tokens = meter.createHistogram('gen_ai.client.token.usage', {
    unit: '{token}',
    advice: { explicitBucketBoundaries: [1, 4, 16, 64, 256, 1024, 4096, 16384] },
  });
  const duration = meter.createHistogram('gen_ai.client.operation.duration', {
    unit: 's',
    advice: { explicitBucketBoundaries: [0.01, 0.1, 1, 10] },
  });
  const own = meter.createCounter('app.requests');
  const call = (model: string, input: number, output: number, seconds: number) => {
    const attrs = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': model,
      'gen_ai.response.model': `${model}-2024-07-18`,
    };
    tokens.record(input, { ...attrs, 'gen_ai.token.type': 'input' });
    tokens.record(output, { ...attrs, 'gen_ai.token.type': 'output' });
    duration.record(seconds, attrs);
    own.add(1);
  };
  call('gpt-4o-mini', 120, 30, 0.5);
  call('gpt-4o-mini', 80, 20, 1.5);
  await provider.forceFlush();
  call('gpt-4o-mini', 100, 50, 2);
  await provider.forceFlush();
  await provider.shutdown();
}

const QUERY = {
  view: 'genai-metrics',
  dimensions: [
    { field: 'metricName' },
    { field: 'model' },
    { field: 'tokenType' },
    { field: 'provider' },
    { field: 'operation' },
    { field: 'environment' },
  ],
  metrics: [
    { measure: 'value', aggregation: 'sum' },
    { measure: 'measurements', aggregation: 'sum' },
    { measure: 'min', aggregation: 'min' },
    { measure: 'max', aggregation: 'max' },
  ],
  orderBy: [
    { field: 'metricName', direction: 'asc' },
    { field: 'tokenType', direction: 'asc' },
  ],
};

async function storedMetrics(p: Project) {
  const query = {
    ...QUERY,
    fromTimestamp: new Date(started - 60_000).toISOString(),
    toTimestamp: new Date(Date.now() + 60_000).toISOString(),
  };
  const r = await callApi(
    suite.web,
    p,
    'GET',
    `/api/public/v2/metrics?query=${encodeURIComponent(JSON.stringify(query))}`,
  );
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data;
}

/** Three calls in all: the second, cumulative export's points replaced the first's. */
const row = (metricName: string, tokenType: string, sum: number, min: number, max: number) => ({
  metricName,
  model: 'gpt-4o-mini-2024-07-18',
  tokenType,
  provider: 'openai',
  operation: 'chat',
  environment: 'prod',
  sum_value: sum,
  sum_measurements: 3,
  min_min: min,
  max_max: max,
});
const EXPECTED = [
  row('gen_ai.client.operation.duration', '', 4, 0.5, 2),
  row('gen_ai.client.token.usage', 'input', 300, 80, 120),
  row('gen_ai.client.token.usage', 'output', 100, 20, 50),
];

async function pointsCounted(): Promise<Record<string, number>> {
  const text = await (await fetch(`${suite.web.url}/metrics`)).text();
  return Object.fromEntries(
    [...text.matchAll(/^observatory_web_otlp_metric_points_total\{outcome="(\w+)"\} (\d+)$/gm)].map((m) => [
      m[1]!,
      Number(m[2]),
    ]),
  );
}

describe('the GenAI metrics over OTLP', () => {
  it('MetricsService over gRPC (gzip): stored in the key’s project, read through Metrics API v2', async () => {
    const before = await pointsCounted();
    await runApp(
      new GrpcMetricExporter({
        url: `http://${suite.web.grpcAddress}`,
        metadata: grpcAuth(basicAuth(viaGrpc)),
        compression: 'gzip' as NonNullable<
          ConstructorParameters<typeof GrpcMetricExporter>[0]
        >['compression'],
      }),
    );
    expect(await storedMetrics(viaGrpc)).toEqual(EXPECTED);
    expect(await storedMetrics(bystander)).toEqual([]);
    // Three exports (two flushes, then the shutdown's), each with its three token and duration
    // series stored and the app's own counter counted only.
    const after = await pointsCounted();
    expect((after['stored'] ?? 0) - (before['stored'] ?? 0)).toBe(9);
    expect((after['not_stored'] ?? 0) - (before['not_stored'] ?? 0)).toBe(3);
  });

  it('/api/public/otel/v1/metrics over http/protobuf: the same rows, in its own project', async () => {
    await runApp(
      new ProtoMetricExporter({
        url: `${suite.web.url}/api/public/otel/v1/metrics`,
        headers: { Authorization: basicAuth(viaHttp) },
      }),
    );
    expect(await storedMetrics(viaHttp)).toEqual(EXPECTED);
    expect(await storedMetrics(viaGrpc)).toEqual(EXPECTED);
    expect(await storedMetrics(bystander)).toEqual([]);
  });
});

/** A raw MetricsService/Export call with an export built here. */
const rawMetricsExport = (authorization: string | undefined, body: Uint8Array) =>
  rawGrpcExport(
    suite.web.grpcAddress,
    '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
    exportMetricsServiceResponseType(),
    authorization,
    body,
  );

function tokenExport(points: { model: string; bucketCounts: number[] }[]): Uint8Array {
  const type = exportMetricsServiceRequestType();
  const now = BigInt(Date.now()) * 1_000_000n;
  return type
    .encode(
      type.fromObject({
        resourceMetrics: [
          {
            scopeMetrics: [
              {
                metrics: [
                  {
                    name: 'gen_ai.client.token.usage',
                    histogram: {
                      aggregationTemporality: 1,
                      dataPoints: points.map((p) => ({
                        attributes: [{ key: 'gen_ai.request.model', value: { stringValue: p.model } }],
                        startTimeUnixNano: String(now - 1_000_000_000n),
                        timeUnixNano: String(now),
                        count: 1,
                        sum: 10,
                        bucketCounts: p.bucketCounts,
                        explicitBounds: [100],
                      })),
                    },
                  },
                ],
              },
            ],
          },
        ],
      }),
    )
    .finish();
}

describe('MetricsService refusals', () => {
  it('refuses a missing or wrong key with UNAUTHENTICATED', async () => {
    const body = tokenExport([{ model: 'never-stored', bucketCounts: [1, 0] }]);
    expect((await rawMetricsExport(undefined, body)).code).toBe(status.UNAUTHENTICATED);
    expect(await rawMetricsExport(basicAuth({ ...bystander, secretKey: 'sk-wrong' }), body)).toMatchObject({
      code: status.UNAUTHENTICATED,
      details: 'Authentication error: invalid API key',
    });
    expect(await storedMetrics(bystander)).toEqual([]);
  });

  it('answers partial success for a point refused on its own and stores the others', async () => {
    const answer = await rawMetricsExport(
      basicAuth(bystander),
      tokenExport([
        { model: 'kept', bucketCounts: [1, 0] },
        { model: 'refused', bucketCounts: [1] },
      ]),
    );
    expect(answer).toMatchObject({ code: status.OK });
    expect(answer.answer).toEqual({
      partialSuccess: {
        rejectedDataPoints: 1,
        errorMessage: expect.stringContaining('has 1 bucket counts for 1 explicit bounds (expected 2)'),
      },
    });
    const stored = await storedMetrics(bystander);
    expect((stored ?? []).map((r) => r['model'])).toEqual(['kept']);
  });

  it('refuses a malformed export with INVALID_ARGUMENT', async () => {
    const answer = await rawMetricsExport(basicAuth(bystander), Buffer.from([0xff, 0xff]));
    expect(answer.code).toBe(status.INVALID_ARGUMENT);
    expect(answer.details).toContain('Failed to parse OTel Protobuf Metrics');
  });
});
