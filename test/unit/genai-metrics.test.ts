import { describe, expect, it } from 'vitest';
import { isGenAiMetric, mapMetricsExport } from '../../server/features/otel/genai-metrics.ts';
import { MAX_DATA_POINTS_PER_EXPORT } from '../../server/features/write-model/limits.ts';

const NOW = Date.parse('2026-03-02T10:00:00.000Z');
const ns = (iso: string) => String(BigInt(Date.parse(iso)) * 1_000_000n);
const s = (key: string, value: string) => ({ key, value: { stringValue: value } });

const point = (over: Record<string, unknown> = {}) => ({
  attributes: [
    s('gen_ai.operation.name', 'chat'),
    s('gen_ai.provider.name', 'openai'),
    s('gen_ai.request.model', 'gpt-4o'),
    s('gen_ai.response.model', 'gpt-4o-2024-08-06'),
    s('gen_ai.token.type', 'input'),
  ],
  startTimeUnixNano: ns('2026-03-02T09:00:00.000Z'),
  timeUnixNano: ns('2026-03-02T09:59:00.000Z'),
  count: '3',
  sum: 1200,
  min: 100,
  max: 700,
  bucketCounts: ['0', '2', '1'],
  explicitBounds: [1, 256],
  ...over,
});

const exportOf = (metrics: Record<string, unknown>[], resource = [s('service.name', 'chat-app')]) => ({
  resourceMetrics: [
    { resource: { attributes: resource }, scopeMetrics: [{ scope: { name: 's' }, metrics }] },
  ],
});
const histogram = (name: string, points: unknown[], temporality = 2) => ({
  name,
  unit: name.endsWith('duration') ? 's' : '{token}',
  histogram: { dataPoints: points, aggregationTemporality: temporality },
});

describe('which metrics are stored', () => {
  it.each([
    ['gen_ai.client.token.usage', true],
    ['gen_ai.client.operation.duration', true],
    ['gen_ai.server.request.duration', true],
    ['gen_ai.server.time_to_first_token', true],
    ['gen_ai.usage.input_tokens', false],
    ['http.server.request.duration', false],
    ['llm.token.usage', false],
  ])('%s: %s', (name, stored) => {
    expect(isGenAiMetric(name)).toBe(stored);
  });
});

describe('an export to genai_metrics rows', () => {
  it('maps a histogram point with the conventions’ model, provider, operation and token type', () => {
    const out = mapMetricsExport(
      exportOf(
        [histogram('gen_ai.client.token.usage', [point()])],
        [s('service.name', 'chat-app'), s('deployment.environment.name', 'prod')],
      ),
      'p1',
      NOW,
    );
    expect(out).toMatchObject({ kind: 'mapped', notStored: 0, rejected: null });
    if (out.kind !== 'mapped') return;
    expect(out.rows).toEqual([
      {
        project_id: 'p1',
        metric_name: 'gen_ai.client.token.usage',
        unit: '{token}',
        series_id: expect.stringMatching(/^[0-9a-f]{32}$/),
        start_time: '2026-03-02 09:00:00.000',
        timestamp: '2026-03-02 09:59:00.000',
        temporality: 'cumulative',
        service_name: 'chat-app',
        environment: 'prod',
        operation: 'chat',
        provider: 'openai',
        request_model: 'gpt-4o',
        response_model: 'gpt-4o-2024-08-06',
        model: 'gpt-4o-2024-08-06',
        token_type: 'input',
        server_address: '',
        error_type: '',
        count: 3,
        sum: 1200,
        min: 100,
        max: 700,
        bucket_counts: [0, 2, 1],
        explicit_bounds: [1, 256],
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.response.model': 'gpt-4o-2024-08-06',
          'gen_ai.token.type': 'input',
        },
        event_ts: '2026-03-02 10:00:00.000',
      },
    ]);
  });

  it.each([
    [
      'the legacy gen_ai.system names the provider',
      [s('gen_ai.system', 'anthropic')],
      { provider: 'anthropic' },
    ],
    [
      'gen_ai.provider.name wins over gen_ai.system',
      [s('gen_ai.system', 'az.ai.openai'), s('gen_ai.provider.name', 'azure.ai.openai')],
      { provider: 'azure.ai.openai' },
    ],
    [
      'the requested model when no response model',
      [s('gen_ai.request.model', 'o3')],
      { model: 'o3', response_model: '' },
    ],
    [
      'an error type and server address',
      [s('error.type', 'timeout'), s('server.address', 'api.openai.com')],
      { error_type: 'timeout', server_address: 'api.openai.com' },
    ],
  ])('%s', (_why, attributes, expected) => {
    const out = mapMetricsExport(
      exportOf([histogram('gen_ai.client.operation.duration', [point({ attributes })])]),
      'p',
      NOW,
    );
    expect(out.kind === 'mapped' && out.rows[0]).toMatchObject(expected);
  });

  it.each([
    [1, 'delta'],
    [2, 'cumulative'],
    [0, 'unspecified'],
  ] as const)('temporality %i is %s', (t, name) => {
    const out = mapMetricsExport(exportOf([histogram('gen_ai.client.token.usage', [point()], t)]), 'p', NOW);
    expect(out.kind === 'mapped' && out.rows[0]?.temporality).toBe(name);
  });

  it('gives one series id to points of one series, another to other attributes or services', () => {
    const rowsOf = (ex: Record<string, unknown>) => {
      const out = mapMetricsExport(ex, 'p', NOW);
      return out.kind === 'mapped' ? out.rows : [];
    };
    const later = point({ timeUnixNano: ns('2026-03-02T09:59:30.000Z'), count: '5' });
    const [a, b] = rowsOf(exportOf([histogram('gen_ai.client.token.usage', [point(), later])]));
    const [c] = rowsOf(
      exportOf([
        histogram('gen_ai.client.token.usage', [point({ attributes: [s('gen_ai.token.type', 'output')] })]),
      ]),
    );
    const [d] = rowsOf(
      exportOf([histogram('gen_ai.client.token.usage', [point()])], [s('service.name', 'other')]),
    );
    expect(a!.series_id).toBe(b!.series_id);
    expect(new Set([a!.series_id, c!.series_id, d!.series_id]).size).toBe(3);
  });

  it('counts the points of other metrics and of GenAI metrics in other shapes, storing none', () => {
    const out = mapMetricsExport(
      exportOf([
        { name: 'http.client.duration', histogram: { dataPoints: [point(), point()] } },
        { name: 'process.cpu', sum: { dataPoints: [{ asDouble: 1 }] } },
        { name: 'queue.depth', gauge: { dataPoints: [{ asInt: '3' }] } },
        { name: 'gen_ai.client.operation.duration', exponentialHistogram: { dataPoints: [{}] } },
        { name: 'rpc.latency', summary: { dataPoints: [{}, {}] } },
        histogram('gen_ai.client.token.usage', [point()]),
      ]),
      'p',
      NOW,
    );
    expect(out).toMatchObject({ kind: 'mapped', notStored: 7, rejected: null });
    expect(out.kind === 'mapped' && out.rows.map((r) => r.metric_name)).toEqual([
      'gen_ai.client.token.usage',
    ]);
  });

  it.each([
    ['no time', { timeUnixNano: undefined }, 'timeUnixNano is missing'],
    ['a time that is not a number', { timeUnixNano: 'soon' }, 'timeUnixNano is not a timestamp: "soon"'],
    [
      'a time past 2299',
      { timeUnixNano: '18446744073709551615' },
      'timeUnixNano is outside the accepted time range',
    ],
    [
      'bucket counts that do not fit the bounds',
      { bucketCounts: ['1', '2'] },
      'has 2 bucket counts for 2 explicit bounds (expected 3)',
    ],
    ['a negative count', { count: '-1' }, 'count is not an unsigned count: -1'],
    [
      'a bound that is not a number',
      { explicitBounds: [1, 'x'] },
      'explicitBounds holds a value that is not a finite number',
    ],
  ])('refuses a point with %s on its own (partial success), keeping the others', (_why, over, message) => {
    const out = mapMetricsExport(
      exportOf([histogram('gen_ai.client.token.usage', [point(over), point()])]),
      'p',
      NOW,
    );
    expect(out.kind).toBe('mapped');
    if (out.kind !== 'mapped') return;
    expect(out.rows).toHaveLength(1);
    expect(out.rejected?.points).toBe(1);
    expect(out.rejected?.message).toContain('metrics[0] (gen_ai.client.token.usage) dataPoints[0] ');
    expect(out.rejected?.message).toContain(message);
  });

  it('refuses an export past the data point limit as a whole', () => {
    const many = Array.from({ length: MAX_DATA_POINTS_PER_EXPORT + 1 }, () => ({ asInt: '1' }));
    expect(mapMetricsExport(exportOf([{ name: 'x', gauge: { dataPoints: many } }]), 'p', NOW)).toEqual({
      kind: 'refused',
      message: expect.stringContaining(`more than the limit of ${MAX_DATA_POINTS_PER_EXPORT} data points`),
    });
  });

  it('takes an empty export or one with foreign shapes without failing', () => {
    expect(mapMetricsExport({}, 'p', NOW)).toEqual({
      kind: 'mapped',
      rows: [],
      notStored: 0,
      rejected: null,
    });
    expect(mapMetricsExport({ resourceMetrics: 'x' }, 'p', NOW)).toEqual({
      kind: 'mapped',
      rows: [],
      notStored: 0,
      rejected: null,
    });
  });
});
