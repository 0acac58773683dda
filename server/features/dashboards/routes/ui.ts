/**
 * The web UI's dashboards (`/api/ui/projects/:projectId/...`): the unstable API's routes
 * (family.ts, writes for members and owners), a dashboard with the definitions of its
 * tiles (`home` is the built-in one), each tile's data and the widget editor's live preview. A
 * tile's data is its widget's Metrics v2 query (../../dashboards/model.ts `widgetQuery`) with the
 * dashboard's range and filters, run by the metrics API's own runner; the answer carries the
 * query so that anyone can send it to `GET /api/public/v2/metrics` and get the same rows.
 * Project scope.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { BadRequest, NotFound } from '../../../kernel/errors.ts';
import { notFound } from '../../../platform/http/answers.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { projectRoutes, uiMount } from '../../../platform/http/project-routes.ts';
import { type FilterCondition, filterCondition } from '../../reads/filters.ts';
import { own } from '../../reads/lookup.ts';
import { METRICS_V2_VIEWS } from '../../reads/metrics-views.ts';
import { runMetricsQuery } from '../../reads/routes/metrics-query.ts';
import { HOME_DASHBOARD, HOME_DASHBOARD_ID, PRESETS } from '../home.ts';
import {
  createWidgetRequest,
  type Dashboard,
  type Placement,
  rangeOf,
  type WidgetDefinition,
  widgetQuery,
} from '../model.ts';
import { getDashboard, getWidget } from '../store.ts';
import { dashboardRoutes, widgetDefinition } from './family.ts';

const isoDate = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO 8601 datetime');
/** What the page applies to every tile: a range (the dashboard's default when absent) and filters. */
const applied = z.object({
  fromTimestamp: isoDate.optional(),
  toTimestamp: isoDate.optional(),
  filters: z.array(filterCondition).max(50).optional(),
});
type Applied = z.infer<typeof applied>;

const dashboardOf = (ctx: RouteContext, projectId: string, id: string): Promise<Dashboard> =>
  id === HOME_DASHBOARD_ID ? Promise.resolve(HOME_DASHBOARD) : getDashboard(ctx.pool, projectId, id);

/** The widget a placement draws: a preset or one of the project's widgets. */
async function widgetOf(ctx: RouteContext, projectId: string, p: Placement): Promise<WidgetDefinition> {
  if (p.type === 'widget') return getWidget(ctx.pool, projectId, p.widgetId);
  const preset = own(PRESETS, p.presetId);
  if (!preset) throw notFound('preset', p.presetId);
  return preset;
}

/** Runs `w` as a tile of `dashboard` under what the page applies. */
async function tileData(
  ctx: RouteContext,
  projectId: string,
  w: WidgetDefinition,
  dashboard: { filters: FilterCondition[]; defaultTimeRange: Dashboard['defaultTimeRange'] },
  a: Applied,
) {
  if ((a.fromTimestamp === undefined) !== (a.toTimestamp === undefined)) {
    throw new BadRequest('Invalid request data', 'body.fromTimestamp and body.toTimestamp go together');
  }
  const range =
    a.fromTimestamp && a.toTimestamp
      ? { fromTimestamp: a.fromTimestamp, toTimestamp: a.toTimestamp }
      : rangeOf(dashboard.defaultTimeRange, new Date());
  const query = widgetQuery(w, a.filters ?? dashboard.filters, range);
  const { data } = await runMetricsQuery(ctx, METRICS_V2_VIEWS, projectId, query);
  return { data, query };
}

export const uiDashboardsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  const declare = projectRoutes(app, uiMount());
  dashboardRoutes(app, ctx, uiMount({ atLeast: 'member', refusal: 'viewers cannot change dashboards' }));

  declare(
    {
      method: 'GET',
      path: '/dashboards/:dashboardId/view',
      summary: 'A dashboard (or the built-in home) with the definition of each of its tiles',
    },
    async ({ params, projectId }) => {
      const dashboard = await dashboardOf(ctx, projectId, params.dashboardId);
      const tiles = await Promise.all(
        dashboard.definition.widgets.map(async (p) => [p.id, await widgetOf(ctx, projectId, p)] as const),
      );
      return { dashboard, widgets: Object.fromEntries(tiles) };
    },
  );

  declare(
    {
      method: 'POST',
      gate: 'metrics-v2',
      path: '/dashboards/:dashboardId/widgets/:placementId/data',
      summary: "A tile's rows: its widget's Metrics v2 query with the dashboard's range and filters",
      body: applied,
    },
    async ({ params, body, projectId }) => {
      const dashboard = await dashboardOf(ctx, projectId, params.dashboardId);
      const p = dashboard.definition.widgets.find((t) => t.id === params.placementId);
      if (!p)
        throw new NotFound(`placement ${params.placementId} not found on dashboard ${params.dashboardId}`);
      return tileData(ctx, projectId, await widgetOf(ctx, projectId, p), dashboard, body);
    },
  );

  declare(
    {
      method: 'POST',
      gate: 'metrics-v2',
      path: '/dashboard-widgets/preview',
      summary: "The editor's live preview: an unsaved widget's rows over a range",
      body: applied.extend({ widget: createWidgetRequest }),
    },
    async ({ body, projectId }) =>
      tileData(ctx, projectId, widgetDefinition(body.widget), { filters: [], defaultTimeRange: '24h' }, body),
  );
};
