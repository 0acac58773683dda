/**
 * A dashboard drawing its tiles on a 12-column grid with one time range for all, and for stored
 * dashboards the layout controls (move, resize, remove) and the widget editor with a live preview.
 * Every tile's rows come from its data route, which runs the widget's Metrics v2 query.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import { navigate } from '../../shared/router.ts';
import { projectsApi } from '../projects/api.ts';
import { type DashboardRange, type DashboardView, dashboardsApi } from './api.ts';
import { layoutControls, type Range, Tile } from './tile.tsx';
import { WidgetEditor } from './widget-editor.tsx';

const RANGES: DashboardRange[] = ['1h', '24h', '7d', '30d', '90d'];
const RANGE_MS: Record<DashboardRange, number> = {
  '1h': 3_600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
  '90d': 90 * 86_400_000,
};
const ROW_PX = 44;

const rangeEndingNow = (r: DashboardRange): Range => {
  const now = Date.now();
  return {
    fromTimestamp: new Date(now - RANGE_MS[r]).toISOString(),
    toTimestamp: new Date(now).toISOString(),
  };
};

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
