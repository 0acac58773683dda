/** Dashboards, their placements and widgets, and the metrics data each tile draws. */
import type {
  CreateWidget,
  Dashboard,
  TimeRange as DashboardRange,
  Placement,
  UpdatePlacement as PlacementChange,
  WidgetDefinition,
} from '../../../../../features/dashboards/model.ts';
import { call, type NumberedPage, projectPath } from '../../shared/api.ts';

export type { CreateWidget, Dashboard, DashboardRange, Placement, PlacementChange, WidgetDefinition };

/** A dashboard with the definition of each tile, by placement id. */
export interface DashboardView {
  dashboard: Dashboard;
  widgets: Record<string, WidgetDefinition & { id?: string }>;
}
export type MetricsRow = Record<string, unknown>;
export interface TileData {
  data: MetricsRow[];
  query: unknown;
}

export const dashboardsApi = {
  dashboards: (id: string) => call<NumberedPage<Dashboard>>('GET', `${projectPath(id)}/dashboards?limit=100`),
  createDashboard: (
    id: string,
    body: { name: string; description?: string; defaultTimeRange?: DashboardRange },
  ) => call<Dashboard>('POST', `${projectPath(id)}/dashboards`, body),
  deleteDashboard: (id: string, dashboardId: string) =>
    call<{ message: string }>('DELETE', `${projectPath(id)}/dashboards/${encodeURIComponent(dashboardId)}`),
  dashboardView: (id: string, dashboardId: string) =>
    call<DashboardView>('GET', `${projectPath(id)}/dashboards/${encodeURIComponent(dashboardId)}/view`),
  tileData: (
    id: string,
    dashboardId: string,
    placementId: string,
    range: { fromTimestamp: string; toTimestamp: string },
  ) =>
    call<TileData>(
      'POST',
      `${projectPath(id)}/dashboards/${encodeURIComponent(dashboardId)}/widgets/${encodeURIComponent(placementId)}/data`,
      range,
    ),
  previewWidget: (id: string, widget: CreateWidget, range: { fromTimestamp: string; toTimestamp: string }) =>
    call<TileData>('POST', `${projectPath(id)}/dashboard-widgets/preview`, { ...range, widget }),
  createWidget: (id: string, widget: CreateWidget) =>
    call<WidgetDefinition & { id: string }>('POST', `${projectPath(id)}/dashboard-widgets`, widget),
  placeWidget: (id: string, dashboardId: string, widgetId: string) =>
    call<Placement>('POST', `${projectPath(id)}/dashboards/${encodeURIComponent(dashboardId)}/placements`, {
      type: 'widget',
      widgetId,
    }),
  movePlacement: (id: string, dashboardId: string, placementId: string, change: PlacementChange) =>
    call<Placement>(
      'PATCH',
      `${projectPath(id)}/dashboards/${encodeURIComponent(dashboardId)}/placements/${encodeURIComponent(placementId)}`,
      change,
    ),
  removePlacement: (id: string, dashboardId: string, placementId: string) =>
    call<{ message: string }>(
      'DELETE',
      `${projectPath(id)}/dashboards/${encodeURIComponent(dashboardId)}/placements/${encodeURIComponent(placementId)}`,
    ),
};
