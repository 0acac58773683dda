/** Dashboard metrics named as a reader says them, not by the metrics API's keys. */
import { expect, it } from 'vitest';
import { metricName } from '../../server/app/ui/src/features/dashboards/metric-names.ts';
import type { WidgetDefinition } from '../../server/features/dashboards/model.ts';

type Metric = WidgetDefinition['metrics'][number];
const ROOT = { column: 'isRootObservation', type: 'boolean' as const, operator: '=', value: true };
const observations = { view: 'observations' as const, filters: [] };
const traces = { view: 'observations' as const, filters: [ROOT] };
const scores = { view: 'scores-numeric' as const, filters: [] };
const categorical = { view: 'scores-categorical' as const, filters: [] };

it.each<[string, Pick<WidgetDefinition, 'view' | 'filters'>, Metric, string]>([
  ['count_count of root observations', traces, { measure: 'count', agg: 'count' }, 'Traces'],
  ['count_count', observations, { measure: 'count', agg: 'count' }, 'Observations'],
  ['sum_count', observations, { measure: 'count', agg: 'sum' }, 'Observations'],
  ['count_count of scores', categorical, { measure: 'count', agg: 'count' }, 'Scores'],
  ['count of a measure', observations, { measure: 'latency', agg: 'count' }, 'Observations with latency'],
  ['sum_inputTokens', observations, { measure: 'inputTokens', agg: 'sum' }, 'Input tokens'],
  ['sum_totalCost', traces, { measure: 'totalCost', agg: 'sum' }, 'Total cost'],
  ['avg_value of scores', scores, { measure: 'value', agg: 'avg' }, 'Average score'],
  ['avg_latency', observations, { measure: 'latency', agg: 'avg' }, 'Average latency'],
  ['p95_latency', observations, { measure: 'latency', agg: 'p95' }, 'p95 latency'],
  [
    'p50_timeToFirstToken',
    observations,
    { measure: 'timeToFirstToken', agg: 'p50' },
    'p50 time to first token',
  ],
  [
    'max_outputTokensPerSecond',
    observations,
    { measure: 'outputTokensPerSecond', agg: 'max' },
    'Maximum output tokens per second',
  ],
  ['min_value of scores', scores, { measure: 'value', agg: 'min' }, 'Minimum score'],
  ['histogram_latency', observations, { measure: 'latency', agg: 'histogram' }, 'Latency distribution'],
  [
    'a root filter that is not "= true"',
    { view: 'observations', filters: [{ ...ROOT, value: false }] },
    { measure: 'count', agg: 'count' },
    'Observations',
  ],
])('%s', (_what, w, m, name) => {
  expect(metricName(w, m)).toBe(name);
});
