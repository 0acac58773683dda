/**
 * The OpenTelemetry Collector (built from its own modules, test/tools/otelcol.ts) between an app
 * and the service, as deployments run it: the app exports over OTLP/HTTP to the Collector, whose
 * OTLP exporter forwards over gRPC (gzip) to the web's port with the project's key in its headers.
 * The spans and the GenAI metrics are read back through the public APIs.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../conformance/env.ts';
import { type Body, callApi } from '../fixtures/mode-webs.ts';
import { freePort } from '../fixtures/ports.ts';
import { type ManagedProcess, startProcess, waitUntilReady } from '../fixtures/processes.ts';
import { basicAuth, MODE_ENV } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';
import { ensureOtelcol } from '../tools/otelcol.ts';

let suite: ServiceSuite;
let collector: ManagedProcess;
let collectorUrl: string;
let dir: string;
const started = Date.now();

beforeAll(async () => {
  let binary: string;
  [binary, suite] = await Promise.all([
    ensureOtelcol((line) => process.stderr.write(`${line}\n`)),
    startServiceSuite({ project: 'collector', env: MODE_ENV.events_only }),
  ]);
  const httpPort = await freePort();
  collectorUrl = `http://127.0.0.1:${httpPort}`;
  dir = mkdtempSync(join(tmpdir(), 'otelcol-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${httpPort}
processors:
  batch:
    timeout: 200ms
exporters:
  otlp_grpc:
    endpoint: ${suite.web.grpcAddress}
    compression: gzip
    tls:
      insecure: true
    headers:
      authorization: "${basicAuth(suite.project)}"
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [otlp_grpc]
    metrics:
      receivers: [otlp]
      processors: [batch]
      exporters: [otlp_grpc]
`,
  );
  collector = startProcess('otelcol', binary, ['--config', config]);
  // The receiver answers 405 to a GET once it listens.
  await waitUntilReady(collector, async () => (await fetch(`${collectorUrl}/v1/traces`)).status === 405, {
    timeoutMs: 30_000,
  });
}, 1_800_000);

afterAll(async () => {
  await collector?.kill('SIGTERM');
  await stopServiceSuite(suite);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('an app behind the OpenTelemetry Collector, forwarding over gRPC', () => {
  it('its spans arrive in the project whose key the Collector sends', async () => {
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'behind-collector' }),
      spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${collectorUrl}/v1/traces` }))],
    });
    const span = provider.getTracer('app').startSpan('chat via collector', {
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini' },
    });
    span.end();
    await provider.forceFlush();
    await provider.shutdown();
    const traceId = span.spanContext().traceId;
    const [o] = await eventually(
      'the span, forwarded',
      async () => {
        const r = await callApi(
          suite.web,
          suite.project,
          'GET',
          `/api/public/v2/observations?traceId=${traceId}&fields=core,basic`,
        );
        const data = (r.body.data ?? []) as Body[];
        return data.length === 1 ? data : undefined;
      },
      30_000,
    );
    expect(o).toMatchObject({ traceId, name: 'chat via collector', type: 'GENERATION' });
  });

  it('its GenAI metrics arrive too, readable through Metrics API v2', async () => {
    const provider = new MeterProvider({
      resource: resourceFromAttributes({ 'service.name': 'behind-collector' }),
      readers: [
        new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter({ url: `${collectorUrl}/v1/metrics` }),
          exportIntervalMillis: 3_600_000,
        }),
      ],
    });
    const tokens = provider.getMeter('app').createHistogram('gen_ai.client.token.usage', { unit: '{token}' });
    tokens.record(64, { 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.token.type': 'input' });
    await provider.shutdown();
    const query = encodeURIComponent(
      JSON.stringify({
        view: 'genai-metrics',
        dimensions: [
          { field: 'metricName' },
          { field: 'model' },
          { field: 'tokenType' },
          { field: 'serviceName' },
        ],
        metrics: [{ measure: 'value', aggregation: 'sum' }],
        fromTimestamp: new Date(started - 60_000).toISOString(),
        toTimestamp: new Date(Date.now() + 60_000).toISOString(),
      }),
    );
    const rows = await eventually(
      'the metric, forwarded',
      async () => {
        const r = await callApi(suite.web, suite.project, 'GET', `/api/public/v2/metrics?query=${query}`);
        const data = r.body.data ?? [];
        return data.length > 0 ? data : undefined;
      },
      30_000,
    );
    expect(rows).toEqual([
      {
        metricName: 'gen_ai.client.token.usage',
        model: 'gpt-4o-mini',
        tokenType: 'input',
        serviceName: 'behind-collector',
        sum_value: 64,
      },
    ]);
  });
});
