/**
 * Dashboards: the list (the built-in home first), a dashboard drawing its tiles on a 12-column
 * grid with one time range for all, and for stored dashboards the layout controls (move, resize,
 * remove) and the widget editor with a live preview. Every tile's rows come from its data route,
 * which runs the widget's Metrics v2 query.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import { useDebounced } from '../../shared/hooks.ts';
import { navigate } from '../../shared/router.ts';
import { projectsApi } from '../projects/api.ts';
import {
  type CreateWidget,
  type Dashboard,
  type DashboardRange,
  type DashboardView,
  dashboardsApi,
  type Placement,
  type PlacementChange,
  type TileData,
  type WidgetDefinition,
} from './api.ts';
import { Chart, type XRange } from './charts.tsx';

const RANGES: DashboardRange[] = ['1h', '24h', '7d', '30d', '90d'];
const RANGE_MS: Record<DashboardRange, number> = {
  '1h': 3_600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
  '90d': 90 * 86_400_000,
};
const ROW_PX = 44;

type Range = { fromTimestamp: string; toTimestamp: string };
const rangeEndingNow = (r: DashboardRange): Range => {
  const now = Date.now();
  return {
    fromTimestamp: new Date(now - RANGE_MS[r]).toISOString(),
    toTimestamp: new Date(now).toISOString(),
  };
};

const secondsOf = (r: Range): XRange => [
  Date.parse(r.fromTimestamp) / 1000,
  Date.parse(r.toTimestamp) / 1000,
];

const link = (path: string) => ({
  href: path,
  onClick: (e: React.MouseEvent) => {
    e.preventDefault();
    navigate(path);
  },
});

export function Dashboards({ projectId }: { projectId: string }) {
  const [list, setList] = useState<Dashboard[]>([]);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | undefined>();
  const base = `/project/${encodeURIComponent(projectId)}/dashboards`;

  const load = useCallback(() => {
    dashboardsApi.dashboards(projectId).then(
      (p) => setList(p.data),
      (e: Error) => setError(e.message),
    );
  }, [projectId]);
  useEffect(load, [load]);

  const create = async (e: React.FormEvent) => {
    e.preventDefault();
    try {
      const d = await dashboardsApi.createDashboard(projectId, { name });
      navigate(`${base}/${encodeURIComponent(d.id)}`);
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <main>
      <h1>Dashboards</h1>
      {error && <p className="error">{error}</p>}
      <table className="grid">
        <thead>
          <tr>
            <th>Name</th>
            <th>Description</th>
            <th className="num">Tiles</th>
            <th>Updated</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <td>
              <a {...link(`${base}/home`)}>Home</a> <span className="tag">built in</span>
            </td>
            <td>Volume, cost, tokens, latency, levels, scores, top users and sessions</td>
            <td className="num" />
            <td />
          </tr>
          {list.map((d) => (
            <tr key={d.id}>
              <td>
                <a {...link(`${base}/${encodeURIComponent(d.id)}`)}>{d.name}</a>
              </td>
              <td>{d.description}</td>
              <td className="num">{d.definition.widgets.length}</td>
              <td>{d.updatedAt.slice(0, 19).replace('T', ' ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <form className="filters" onSubmit={create}>
        <label>
          New dashboard{' '}
          <input value={name} onChange={(e) => setName(e.target.value)} placeholder="name" required />
        </label>
        <button type="submit">Create</button>
      </form>
    </main>
  );
}

function Tile({
  projectId,
  dashboardId,
  placement,
  widget,
  range,
  controls,
}: {
  projectId: string;
  dashboardId: string;
  placement: Placement;
  widget: WidgetDefinition;
  range: Range;
  controls?: React.ReactNode;
}) {
  const [data, setData] = useState<TileData | undefined>();
  const [error, setError] = useState<string | undefined>();
  const xRange = useMemo(() => secondsOf(range), [range]);
  useEffect(() => {
    let live = true;
    setData(undefined);
    dashboardsApi.tileData(projectId, dashboardId, placement.id, range).then(
      (d) => live && setData(d),
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [projectId, dashboardId, placement.id, range]);
  return (
    <section
      className="card tile"
      data-tile={placement.id}
      data-loaded={data ? 'true' : 'false'}
      style={{
        gridColumn: `${placement.x + 1} / span ${placement.width}`,
        gridRow: `${placement.y + 1} / span ${placement.height}`,
      }}
    >
      <header className="tile-head">
        <h2 title={widget.description}>{widget.name}</h2>
        {controls}
      </header>
      {error && <p className="error">{error}</p>}
      {!data && !error && <p className="muted">Loading…</p>}
      {data && <Chart w={widget} rows={data.data} xRange={xRange} />}
    </section>
  );
}

/** Moves and resizes within the 12-column grid, sending only the field that changes. */
function layoutControls(p: Placement, apply: (change: PlacementChange) => void, remove: () => void) {
  const b = (label: string, title: string, change: PlacementChange, disabled = false) => (
    <button type="button" title={title} aria-label={title} disabled={disabled} onClick={() => apply(change)}>
      {label}
    </button>
  );
  return (
    <span className="tile-controls">
      {b('↑', 'move up', { y: Math.max(p.y - 1, 0) }, p.y === 0)}
      {b('↓', 'move down', { y: p.y + 1 })}
      {b('←', 'move left', { x: p.x - 1 }, p.x === 0)}
      {b('→', 'move right', { x: p.x + 1 }, p.x + p.width >= 12)}
      {b('−w', 'narrower', { width: p.width - 1 }, p.width <= 2)}
      {b('+w', 'wider', { width: p.width + 1 }, p.x + p.width >= 12)}
      {b('−h', 'shorter', { height: p.height - 1 }, p.height <= 2)}
      {b('+h', 'taller', { height: p.height + 1 })}
      <button type="button" title="remove" aria-label="remove" onClick={remove}>
        ✕
      </button>
    </span>
  );
}

export function DashboardPage({ projectId, dashboardId }: { projectId: string; dashboardId: string }) {
  const [view, setView] = useState<DashboardView | undefined>();
  const [preset, setPreset] = useState<DashboardRange | undefined>();
  const [canWrite, setCanWrite] = useState(false);
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const builtIn = dashboardId === 'home';

  const load = useCallback(() => {
    dashboardsApi.dashboardView(projectId, dashboardId).then(setView, (e: Error) => setError(e.message));
  }, [projectId, dashboardId]);
  useEffect(load, [load]);
  useEffect(() => {
    projectsApi.project(projectId).then(
      (p) => setCanWrite(p.project.role !== 'viewer'),
      () => setCanWrite(false),
    );
  }, [projectId]);

  const chosen = preset ?? view?.dashboard.defaultTimeRange ?? '24h';
  // One range for every tile, fixed when chosen, so that all tiles read the same window.
  const range = useMemo(() => rangeEndingNow(chosen), [chosen]);

  if (error) return <main className="error">{error}</main>;
  if (!view) return <main className="muted">Loading…</main>;
  const { dashboard, widgets } = view;
  const editable = !builtIn && canWrite;
  const act = (p: Promise<unknown>) => p.then(load, (e: Error) => setError(e.message));

  return (
    <main>
      <h1>{dashboard.name}</h1>
      {dashboard.description && <p className="muted">{dashboard.description}</p>}
      <div className="filters">
        <label>
          Time range{' '}
          <select value={chosen} onChange={(e) => setPreset(e.target.value as DashboardRange)}>
            {RANGES.map((r) => (
              <option key={r} value={r}>
                last {r}
              </option>
            ))}
          </select>
        </label>
        {dashboard.filters.length > 0 && (
          <span className="muted">
            filters:{' '}
            {dashboard.filters
              .map((f) => `${f.column} ${f.operator} ${JSON.stringify(f.value ?? '')}`)
              .join(' AND ')}
          </span>
        )}
        {editable && (
          <>
            <button type="button" onClick={() => setEditing(true)}>
              Add widget
            </button>
            <button
              type="button"
              onClick={() =>
                dashboardsApi
                  .deleteDashboard(projectId, dashboard.id)
                  .then(() => navigate(`/project/${encodeURIComponent(projectId)}/dashboards`))
              }
            >
              Delete dashboard
            </button>
          </>
        )}
      </div>
      {editing && (
        <WidgetEditor
          projectId={projectId}
          range={range}
          onCancel={() => setEditing(false)}
          onSave={(w) =>
            act(
              dashboardsApi
                .createWidget(projectId, w)
                .then((made) => dashboardsApi.placeWidget(projectId, dashboard.id, made.id))
                .then(() => setEditing(false)),
            )
          }
        />
      )}
      <div className="dashboard-grid" style={{ gridAutoRows: `${ROW_PX}px` }}>
        {dashboard.definition.widgets.map((p) => {
          const w = widgets[p.id];
          if (!w) return null;
          return (
            <Tile
              key={p.id}
              projectId={projectId}
              dashboardId={dashboard.id}
              placement={p}
              widget={w}
              range={range}
              {...(editable
                ? {
                    controls: layoutControls(
                      p,
                      (change) => act(dashboardsApi.movePlacement(projectId, dashboard.id, p.id, change)),
                      () => act(dashboardsApi.removePlacement(projectId, dashboard.id, p.id)),
                    ),
                  }
                : {})}
            />
          );
        })}
      </div>
    </main>
  );
}

const CHART_TYPES: CreateWidget['chartType'][] = [
  'LINE_TIME_SERIES',
  'AREA_TIME_SERIES',
  'BAR_TIME_SERIES',
  'HORIZONTAL_BAR',
  'VERTICAL_BAR',
  'PIE',
  'NUMBER',
  'HISTOGRAM',
  'PIVOT_TABLE',
];
const AGGS: CreateWidget['metrics'][number]['agg'][] = [
  'count',
  'sum',
  'avg',
  'min',
  'max',
  'p50',
  'p75',
  'p90',
  'p95',
  'p99',
  'histogram',
];
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
function WidgetEditor({
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

  const select = <T extends string>(label: string, value: T, options: T[], set: (v: T) => void) => (
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
        {select('Aggregation', agg, AGGS, setAgg)}
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
