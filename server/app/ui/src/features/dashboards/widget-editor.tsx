/** The widget editor: view, grouping, measure, aggregation, chart, with a live preview. */
import { useCallback, useMemo, useState } from 'react';
import { CHART_TYPES } from '../../../../../features/dashboards/catalog.ts';
import { AGGREGATION_MENU } from '../../../../../features/reads/aggregations.ts';
import { useDebounced } from '../../shared/hooks.ts';
import { type CreateWidget, dashboardsApi } from './api.ts';
import { Chart } from './charts.tsx';
import { type Range, secondsOf } from './tile.tsx';

const MEASURES: Record<CreateWidget['view'], string[]> = {
  observations: [
    'count',
    'latency',
    'timeToFirstToken',
    'inputTokens',
    'outputTokens',
    'totalTokens',
    'inputCost',
    'outputCost',
    'totalCost',
    'tokensPerSecond',
  ],
  'genai-metrics': ['count', 'value', 'measurements', 'min', 'max'],
  'scores-numeric': ['count', 'value'],
  'scores-categorical': ['count'],
};
const DIMENSIONS: Record<CreateWidget['view'], string[]> = {
  observations: [
    '',
    'name',
    'type',
    'level',
    'environment',
    'providedModelName',
    'traceName',
    'promptName',
    'release',
    'userId',
    'sessionId',
  ],
  'genai-metrics': [
    '',
    'metricName',
    'model',
    'provider',
    'operation',
    'tokenType',
    'serviceName',
    'environment',
  ],
  'scores-numeric': ['', 'name', 'source', 'environment', 'dataType'],
  'scores-categorical': ['', 'name', 'stringValue', 'source', 'environment'],
};

/** A widget's form and its live preview, refreshed as the form changes. */
export function WidgetEditor({
  projectId,
  range,
  onSave,
  onCancel,
}: {
  projectId: string;
  range: Range;
  onSave: (w: CreateWidget) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState('New widget');
  const [view, setView] = useState<CreateWidget['view']>('observations');
  const [dimension, setDimension] = useState('');
  const [measure, setMeasure] = useState('count');
  const [agg, setAgg] = useState<CreateWidget['metrics'][number]['agg']>('count');
  const [chartType, setChartType] = useState<CreateWidget['chartType']>('LINE_TIME_SERIES');
  const [rowLimit, setRowLimit] = useState(10);
  const xRange = useMemo(() => secondsOf(range), [range]);

  const widget: CreateWidget = useMemo(
    () => ({
      name,
      view,
      dimensions: dimension ? [{ field: dimension }] : [],
      metrics: [{ measure, agg }],
      filters: [],
      chartType,
      chartConfig: { row_limit: rowLimit },
    }),
    [name, view, dimension, measure, agg, chartType, rowLimit],
  );
  const { data: preview, error: problem } = useDebounced(
    useCallback(() => dashboardsApi.previewWidget(projectId, widget, range), [projectId, widget, range]),
    250,
  );

  const select = <T extends string>(label: string, value: T, options: readonly T[], set: (v: T) => void) => (
    <label>
      {label}{' '}
      <select value={value} onChange={(e) => set(e.target.value as T)}>
        {options.map((o) => (
          <option key={o} value={o}>
            {o || '(none)'}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <section className="card editor" aria-label="widget editor">
      <div className="filters">
        <label>
          Name <input value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        {select('View', view, Object.keys(MEASURES) as CreateWidget['view'][], (v) => {
          setView(v);
          setMeasure('count');
          setDimension('');
        })}
        {select('Group by', dimension, DIMENSIONS[view], setDimension)}
        {select('Measure', measure, MEASURES[view], setMeasure)}
        {select('Aggregation', agg, AGGREGATION_MENU, setAgg)}
        {select('Chart', chartType, CHART_TYPES, setChartType)}
        <label>
          Rows{' '}
          <input
            type="number"
            min={1}
            max={1000}
            value={rowLimit}
            onChange={(e) => setRowLimit(Number(e.target.value) || 10)}
          />
        </label>
        <button type="button" disabled={Boolean(problem)} onClick={() => onSave(widget)}>
          Save widget
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {problem && <p className="error">{problem}</p>}
      <div className="tile preview" data-preview={preview ? 'loaded' : 'loading'}>
        {preview && !problem && (
          <Chart
            w={{ ...widget, description: '', chartConfig: { type: chartType } }}
            rows={preview.data}
            xRange={xRange}
          />
        )}
      </div>
    </section>
  );
}
