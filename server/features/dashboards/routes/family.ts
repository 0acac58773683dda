/**
 * The dashboards and dashboard-widgets routes in the reference's unstable shapes, declared once and
 * mounted twice: under `/api/public/unstable` (API keys) and under `/api/ui/projects/:projectId`
 * (the UI's project scope, writes for members and owners). Only where the project comes from
 * differs; the shapes, status codes and errors are the same.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { BadRequest } from '../../../kernel/errors.ts';
import { patchedFields } from '../../../kernel/patches.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import { type ProjectMount, projectRoutes } from '../../../platform/http/project-routes.ts';
import {
  type CreateWidget,
  chartConfigFor,
  createDashboardRequest,
  createPlacementRequest,
  createWidgetRequest,
  placement,
  type UpdateWidget,
  updateDashboardRequest,
  updatePlacementRequest,
  updateWidgetRequest,
  type Widget,
  type WidgetDefinition,
  widgetProblem,
} from '../model.ts';
import * as store from '../store.ts';

/** A create request as a full definition: config defaulted, query checked against its view. */
export function widgetDefinition(body: CreateWidget): WidgetDefinition {
  const chartConfig = chartConfigFor(body.chartType, body.chartConfig);
  if (typeof chartConfig === 'string') throw new BadRequest('Invalid request data', chartConfig);
  const def: WidgetDefinition = {
    name: body.name,
    description: body.description ?? '',
    view: body.view,
    dimensions: body.dimensions,
    metrics: body.metrics,
    filters: body.filters,
    chartType: body.chartType,
    chartConfig,
  };
  const problem = widgetProblem(def);
  if (problem) throw new BadRequest('Invalid request data', problem);
  return def;
}

/** A patch over a stored widget; a new chart type without a config resets the config. */
function patched(w: Widget, patch: UpdateWidget): WidgetDefinition {
  const chartType = patch.chartType ?? w.chartType;
  const config = patch.chartConfig ?? (patch.chartType ? undefined : w.chartConfig);
  return widgetDefinition({
    ...patchedFields(w, patch, ['name', 'description', 'view', 'dimensions', 'metrics', 'filters']),
    chartType,
    chartConfig: config ? { ...config, type: config.type ?? chartType } : undefined,
  });
}

export function dashboardRoutes(app: FastifyInstance, ctx: RouteContext, mount: ProjectMount): void {
  const declare = projectRoutes(app, mount);

  declare.listing(
    { path: '/dashboards', summary: 'List the dashboards of the project, most recently updated first' },
    ({ projectId }, limit, offset) => store.listDashboards(ctx.pool, projectId, limit, offset),
  );
  declare(
    {
      method: 'POST',
      path: '/dashboards',
      summary: 'Create a dashboard',
      body: createDashboardRequest,
    },
    async ({ body, projectId }) => store.createDashboard(ctx.pool, projectId, body),
  );
  declare(
    {
      method: 'GET',
      path: '/dashboards/:dashboardId',
      summary: 'Get a dashboard',
    },
    async ({ params, projectId }) => store.getDashboard(ctx.pool, projectId, params.dashboardId),
  );
  declare(
    {
      method: 'PATCH',
      path: '/dashboards/:dashboardId',
      summary: "Update a dashboard's name, description, definition, filters or default time range",
      body: updateDashboardRequest,
    },
    async ({ params, body, projectId }) =>
      store.updateDashboard(ctx.pool, projectId, params.dashboardId, body),
  );
  declare.deletion(
    {
      path: '/dashboards/:dashboardId',
      summary: 'Delete a dashboard (its placements go with it; its widgets stay)',
    },
    'Dashboard',
    ({ params, projectId }) => store.deleteDashboard(ctx.pool, projectId, params.dashboardId),
  );
  declare(
    {
      method: 'POST',
      path: '/dashboards/:dashboardId/placements',
      summary:
        'Place a widget or preset on a dashboard (appended below the tiles, 6x6, when no position is given)',
      body: createPlacementRequest,
      response: placement,
    },
    async ({ params, body, projectId }) => store.addPlacement(ctx.pool, projectId, params.dashboardId, body),
  );
  declare(
    {
      method: 'PATCH',
      path: '/dashboards/:dashboardId/placements/:placementId',
      summary: 'Move or resize a placement: the fields given change, the rest stay',
      body: updatePlacementRequest,
      response: placement,
    },
    async ({ params, body, projectId }) =>
      store.updatePlacement(ctx.pool, projectId, params.dashboardId, params.placementId, body),
  );
  declare.deletion(
    {
      path: '/dashboards/:dashboardId/placements/:placementId',
      summary: 'Remove a placement from a dashboard (the widget stays)',
      response: z.object({ message: z.string() }),
    },
    'Placement',
    ({ params, projectId }) =>
      store.deletePlacement(ctx.pool, projectId, params.dashboardId, params.placementId),
  );

  declare.listing(
    {
      path: '/dashboard-widgets',
      summary: 'List the dashboard widgets of the project, most recently updated first',
    },
    ({ projectId }, limit, offset) => store.listWidgets(ctx.pool, projectId, limit, offset),
  );
  declare(
    {
      method: 'POST',
      path: '/dashboard-widgets',
      summary: 'Create a dashboard widget (a Metrics v2 query and a chart type)',
      body: createWidgetRequest,
    },
    async ({ body, projectId }) => store.createWidget(ctx.pool, projectId, widgetDefinition(body)),
  );
  declare(
    {
      method: 'GET',
      path: '/dashboard-widgets/:widgetId',
      summary: 'Get a dashboard widget',
    },
    async ({ params, projectId }) => store.getWidget(ctx.pool, projectId, params.widgetId),
  );
  declare(
    {
      method: 'PATCH',
      path: '/dashboard-widgets/:widgetId',
      summary: 'Update a dashboard widget (a new chart type without a config resets the config)',
      body: updateWidgetRequest,
    },
    async ({ params, body, projectId }) => {
      const current = await store.getWidget(ctx.pool, projectId, params.widgetId);
      return store.replaceWidget(ctx.pool, projectId, params.widgetId, patched(current, body));
    },
  );
  declare.deletion(
    {
      path: '/dashboard-widgets/:widgetId',
      summary: 'Delete a dashboard widget (409 while it is placed on a dashboard)',
    },
    'Dashboard widget',
    ({ params, projectId }) => store.deleteWidget(ctx.pool, projectId, params.widgetId),
  );
}
