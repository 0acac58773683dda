/**
 * OTLP/gRPC from Python's official exporters (PyPI `opentelemetry-exporter-otlp-proto-grpc`,
 * installed once by pinned hashes into a cached venv), unchanged, with gzip: a GenAI span and its
 * token usage and duration metrics, read back through the public APIs in the key's project; a
 * wrong key fails the export (UNAUTHENTICATED is not retried) and stores nothing.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../conformance/env.ts';
import { ensureHashedVenv } from '../fixtures/hashed-venv.ts';
import { callApi } from '../fixtures/mode-webs.ts';
import { runCommand } from '../fixtures/processes.ts';
import { basicAuth, MODE_ENV, type Project, ROOT } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';

const HERE = join(ROOT, 'test/fixtures/otlp-python');
let python: string;
let suite: ServiceSuite;
let project: Project;
let other: Project;
const started = Date.now();

beforeAll(async () => {
  [python, suite] = await Promise.all([
    ensureHashedVenv(
      'otlp-python-venv',
      join(HERE, 'requirements.txt'),
      'opentelemetry-exporter-otlp-proto-grpc 1.45.2',
    ),
    startServiceSuite({ project: 'py-grpc', others: ['py-grpc-other'], env: MODE_ENV.events_only }),
  ]);
  [project, other] = [suite.project, suite.others[0]!];
}, 900_000);

afterAll(() => stopServiceSuite(suite));

async function exportFromPython(authorization: string) {
  const out = await runCommand(
    'python-otlp',
    python,
    [join(HERE, 'export_grpc.py'), `http://${suite.web.grpcAddress}`, authorization],
    { timeoutMs: 60_000 },
  );
  return JSON.parse(out.trim().split('\n').at(-1)!) as { traceId: string; spans: string; metrics: string };
}

const tokenQuery = () =>
  encodeURIComponent(
    JSON.stringify({
      view: 'genai-metrics',
      dimensions: [
        { field: 'metricName' },
        { field: 'model' },
        { field: 'provider' },
        { field: 'tokenType' },
      ],
      metrics: [
        { measure: 'value', aggregation: 'sum' },
        { measure: 'measurements', aggregation: 'sum' },
      ],
      orderBy: [
        { field: 'metricName', direction: 'asc' },
        { field: 'tokenType', direction: 'asc' },
      ],
      fromTimestamp: new Date(started - 60_000).toISOString(),
      toTimestamp: new Date(Date.now() + 60_000).toISOString(),
    }),
  );

describe('Python opentelemetry-exporter-otlp-proto-grpc', () => {
  it('exports a GenAI span and its metrics into the key’s project', async () => {
    const sent = await exportFromPython(basicAuth(project));
    expect(sent).toMatchObject({ spans: 'SUCCESS', metrics: 'SUCCESS' });
    const observations = await eventually(
      'the span as an observation',
      async () => {
        const r = await callApi(
          suite.web,
          project,
          'GET',
          `/api/public/v2/observations?traceId=${sent.traceId}&fields=core,basic,model`,
        );
        const data = r.body.data ?? [];
        return data.length === 1 ? data : undefined;
      },
      30_000,
    );
    expect(observations[0]).toMatchObject({
      traceId: sent.traceId,
      name: 'chat gpt-4o-mini',
      type: 'GENERATION',
      providedModelName: 'gpt-4o-mini',
    });
    const row = (metricName: string, tokenType: string, sum: number) => ({
      metricName,
      model: 'gpt-4o-mini',
      provider: 'openai',
      tokenType,
      sum_value: sum,
      sum_measurements: 1,
    });
    const metrics = await callApi(suite.web, project, 'GET', `/api/public/v2/metrics?query=${tokenQuery()}`);
    expect(metrics.body.data).toEqual([
      row('gen_ai.client.operation.duration', '', 0.25),
      row('gen_ai.client.token.usage', 'input', 42),
      row('gen_ai.client.token.usage', 'output', 7),
    ]);
    const elsewhere = await callApi(suite.web, other, 'GET', `/api/public/v2/metrics?query=${tokenQuery()}`);
    expect(elsewhere.body.data).toEqual([]);
    const otherObservations = await callApi(
      suite.web,
      other,
      'GET',
      `/api/public/v2/observations?traceId=${sent.traceId}`,
    );
    expect(otherObservations.body.data).toEqual([]);
  });

  it('fails both exports with a wrong key and stores nothing', async () => {
    const sent = await exportFromPython(basicAuth({ ...other, secretKey: 'sk-wrong' }));
    expect(sent).toMatchObject({ spans: 'FAILURE', metrics: 'FAILURE' });
    const r = await callApi(suite.web, other, 'GET', `/api/public/v2/observations?traceId=${sent.traceId}`);
    expect(r.body.data).toEqual([]);
    const metrics = await callApi(suite.web, other, 'GET', `/api/public/v2/metrics?query=${tokenQuery()}`);
    expect(metrics.body.data).toEqual([]);
  });
});
