/**
 * The dashboards and dashboard-widgets routes in the reference's unstable shapes, declared once and
 * mounted twice: under `/api/public/unstable` (API keys) and under `/api/ui/projects/:projectId`
 * (the UI's project scope, writes for members and owners). Only where the project comes from
 * differs; the shapes, status codes and errors are the same.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  type CreateWidget,
  chartConfigFor,
  createDashboardRequest,
  createPlacementRequest,
  createWidgetRequest,
  placement,
  type UpdateWidget,
  updateDashboardRequest,
  updateWidgetRequest,
  type Widget,
  type WidgetDefinition,
  widgetProblem,
} from '../../dashboards/model.ts';
import * as store from '../../dashboards/store.ts';
import { BadRequest } from '../../errors.ts';
import { pageMeta } from '../../reads/datasets.ts';
import type { WebContext } from '../core/context.ts';
import { q, route } from '../core/route.ts';
import type { RoleNeed } from '../ui-shell/scope.ts';

export interface DashboardMount {
  /** `/api/public/unstable` or `/api/ui/projects/:projectId`. */
  prefix: string;
  tag: string;
  projectOf: (req: FastifyRequest) => string;
  /** The least role a write needs, where the mount has roles. */
  write?: RoleNeed;
}

const page = z.object({ page: q.int(1, 1_000_000, 1), limit: q.int(1, 100, 50) });

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
    name: patch.name ?? w.name,
    description: patch.description ?? w.description,
    view: patch.view ?? w.view,
    dimensions: patch.dimensions ?? w.dimensions,
    metrics: patch.metrics ?? w.metrics,
    filters: patch.filters ?? w.filters,
    chartType,
    chartConfig: config ? { ...config, type: config.type ?? chartType } : undefined,
  });
}

export function dashboardRoutes(app: FastifyInstance, ctx: WebContext, m: DashboardMount): void {
  const { prefix, tag, projectOf } = m;
  const write = m.write ? { role: m.write } : {};

  route(
    app,
    {
      method: 'GET',
      url: `${prefix}/dashboards`,
      tag,
      summary: 'List the dashboards of the project, most recently updated first',
      query: page,
    },
    async ({ query, req }) => {
      const { dashboards, total } = await store.listDashboards(
        ctx.pool,
        projectOf(req),
        query.limit,
        (query.page - 1) * query.limit,
      );
      return { data: dashboards, meta: pageMeta(query.page, query.limit, total) };
    },
  );
  route(
    app,
    {
      method: 'POST',
      url: `${prefix}/dashboards`,
      tag,
      summary: 'Create a dashboard',
      body: createDashboardRequest,
      ...write,
    },
    async ({ body, req }) => store.createDashboard(ctx.pool, projectOf(req), body),
  );
  const dashboardParams = z.object({ dashboardId: z.string().min(1) });
  route(
    app,
    {
      method: 'GET',
      url: `${prefix}/dashboards/:dashboardId`,
      tag,
      summary: 'Get a dashboard',
      params: dashboardParams,
    },
    async ({ params, req }) => store.getDashboard(ctx.pool, projectOf(req), params.dashboardId),
  );
  route(
    app,
    {
      method: 'PATCH',
      url: `${prefix}/dashboards/:dashboardId`,
      tag,
      summary: "Update a dashboard's name, description, definition, filters or default time range",
      params: dashboardParams,
      body: updateDashboardRequest,
      ...write,
    },
    async ({ params, body, req }) =>
      store.updateDashboard(ctx.pool, projectOf(req), params.dashboardId, body),
  );
  route(
    app,
    {
      method: 'DELETE',
      url: `${prefix}/dashboards/:dashboardId`,
      tag,
      summary: 'Delete a dashboard (its placements go with it; its widgets stay)',
      params: dashboardParams,
      ...write,
    },
    async ({ params, req }) => {
      await store.deleteDashboard(ctx.pool, projectOf(req), params.dashboardId);
      return { message: 'Dashboard successfully deleted' };
    },
  );
  route(
    app,
    {
      method: 'POST',
      url: `${prefix}/dashboards/:dashboardId/widgets`,
      tag,
      summary: 'Place a widget or preset on a dashboard (appended below the tiles when no position is given)',
      params: dashboardParams,
      body: createPlacementRequest,
      ...write,
    },
    async ({ params, body, req }) => {
      const { dashboard, placementId } = await store.addPlacement(
        ctx.pool,
        projectOf(req),
        params.dashboardId,
        body,
      );
      return { ...dashboard, placementId };
    },
  );
  const placementParams = z.object({ dashboardId: z.string().min(1), placementId: z.string().min(1) });
  route(
    app,
    {
      method: 'PATCH',
      url: `${prefix}/dashboards/:dashboardId/widgets/:placementId`,
      tag,
      summary: "Move or resize a placement (the body is the whole placement; its id must match the path's)",
      params: placementParams,
      body: placement,
      ...write,
    },
    async ({ params, body, req }) =>
      store.updatePlacement(ctx.pool, projectOf(req), params.dashboardId, params.placementId, body),
  );
  route(
    app,
    {
      method: 'DELETE',
      url: `${prefix}/dashboards/:dashboardId/widgets/:placementId`,
      tag,
      summary: 'Remove a placement from a dashboard',
      params: placementParams,
      ...write,
    },
    async ({ params, req }) =>
      store.deletePlacement(ctx.pool, projectOf(req), params.dashboardId, params.placementId),
  );

  route(
    app,
    {
      method: 'GET',
      url: `${prefix}/dashboard-widgets`,
      tag,
      summary: 'List the dashboard widgets of the project, most recently updated first',
      query: page,
    },
    async ({ query, req }) => {
      const { widgets, total } = await store.listWidgets(
        ctx.pool,
        projectOf(req),
        query.limit,
        (query.page - 1) * query.limit,
      );
      return { data: widgets, meta: pageMeta(query.page, query.limit, total) };
    },
  );
  route(
    app,
    {
      method: 'POST',
      url: `${prefix}/dashboard-widgets`,
      tag,
      summary: 'Create a dashboard widget (a Metrics v2 query and a chart type)',
      body: createWidgetRequest,
      ...write,
    },
    async ({ body, req }) => store.createWidget(ctx.pool, projectOf(req), widgetDefinition(body)),
  );
  const widgetParams = z.object({ widgetId: z.string().min(1) });
  route(
    app,
    {
      method: 'GET',
      url: `${prefix}/dashboard-widgets/:widgetId`,
      tag,
      summary: 'Get a dashboard widget',
      params: widgetParams,
    },
    async ({ params, req }) => store.getWidget(ctx.pool, projectOf(req), params.widgetId),
  );
  route(
    app,
    {
      method: 'PATCH',
      url: `${prefix}/dashboard-widgets/:widgetId`,
      tag,
      summary: 'Update a dashboard widget (a new chart type without a config resets the config)',
      params: widgetParams,
      body: updateWidgetRequest,
      ...write,
    },
    async ({ params, body, req }) => {
      const projectId = projectOf(req);
      const current = await store.getWidget(ctx.pool, projectId, params.widgetId);
      return store.replaceWidget(ctx.pool, projectId, params.widgetId, patched(current, body));
    },
  );
  route(
    app,
    {
      method: 'DELETE',
      url: `${prefix}/dashboard-widgets/:widgetId`,
      tag,
      summary: 'Delete a dashboard widget (409 while it is placed on a dashboard)',
      params: widgetParams,
      ...write,
    },
    async ({ params, req }) => {
      await store.deleteWidget(ctx.pool, projectOf(req), params.widgetId);
      return { message: 'Dashboard widget successfully deleted' };
    },
  );
}
