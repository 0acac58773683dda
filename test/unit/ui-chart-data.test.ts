import { describe, expect, it } from 'vitest';
import {
  categoriesOf,
  formatValue,
  histogramOf,
  labelOf,
  metricKeys,
  timeSeriesOf,
} from '../../server/app/ui/src/features/dashboards/chart-data.ts';

const byModel = {
  view: 'observations' as const,
  filters: [],
  dimensions: [{ field: 'model' }],
  metrics: [{ measure: 'totalCost', agg: 'sum' as const }],
};
const t = (h: number) => `2026-11-01T0${h}:00:00.000Z`;
const s = (h: number) => Date.parse(t(h)) / 1000;

describe('chart data', () => {
  it('names metrics as the API keys them', () => {
    expect(
      metricKeys({
        metrics: [
          { measure: 'latency', agg: 'p95' },
          { measure: 'count', agg: 'count' },
        ],
      }),
    ).toEqual(['p95_latency', 'count_count']);
  });

  it.each([
    [{ model: 'gpt-4o' }, byModel, 'gpt-4o'],
    [{ model: '' }, byModel, '(none)'],
    [{ a: 'x', b: null }, { dimensions: [{ field: 'a' }, { field: 'b' }] }, 'x / (none)'],
    [{}, { dimensions: [] }, 'all'],
  ])('labels %j', (row, w, label) => {
    expect(labelOf(row, w)).toBe(label);
  });

  it('aligns one series per dimension value on the sorted buckets, gaps as null', () => {
    const rows = [
      { time_dimension: t(2), model: 'a', sum_totalCost: 3 },
      { time_dimension: t(1), model: 'a', sum_totalCost: 1 },
      { time_dimension: t(2), model: 'b', sum_totalCost: '0.5' },
    ];
    expect(timeSeriesOf(rows, byModel)).toEqual({
      x: [s(1), s(2)],
      series: [
        { key: 'sum_totalCost', label: 'a · Total cost', values: [1, 3] },
        { key: 'sum_totalCost', label: 'b · Total cost', values: [null, 0.5] },
      ],
    });
  });

  it('without dimensions, one series per metric, named as a reader says it', () => {
    const w = {
      view: 'observations' as const,
      filters: [],
      dimensions: [],
      metrics: [
        { measure: 'count', agg: 'count' as const },
        { measure: 'inputTokens', agg: 'sum' as const },
      ],
    };
    expect(timeSeriesOf([{ time_dimension: t(1), count_count: 4, sum_inputTokens: 9 }], w).series).toEqual([
      { key: 'count_count', label: 'Observations', values: [4] },
      { key: 'sum_inputTokens', label: 'Input tokens', values: [9] },
    ]);
  });

  it('categories keep the query order', () => {
    expect(
      categoriesOf(
        [
          { model: 'b', sum_totalCost: 2 },
          { model: 'a', sum_totalCost: null },
        ],
        byModel,
      ),
    ).toEqual([
      { label: 'b', values: [2] },
      { label: 'a', values: [null] },
    ]);
  });

  it('histogram buckets become labelled categories', () => {
    expect(
      histogramOf(
        [
          {
            histogram_latency: [
              [0, 100, 3],
              [100, 250, 1],
            ],
          },
        ],
        'histogram_latency',
      ),
    ).toEqual([
      { label: '0 ms – 100 ms', values: [3] },
      { label: '100 ms – 250 ms', values: [1] },
    ]);
    expect(histogramOf([], 'histogram_latency')).toEqual([]);
  });

  it.each([
    ['sum_totalCost', 1.234, '$1.23'],
    ['sum_totalCost', 0.000123, '$0.000123'],
    ['sum_totalCost', 0, '$0'],
    ['p95_latency', 1234.5678, '1,235 ms'],
    ['count_count', 12000, '12,000'],
    ['avg_value', 0.123456, '0.1235'],
    ['count_count', null, '–'],
  ])('formats %s %s as %s', (key, v, text) => {
    expect(formatValue(key, v)).toBe(text);
  });
});
