/**
 * Runs a parsed metrics query: the one path from a query to rows shared by the metrics APIs and
 * the dashboards' widgets, so a widget and `GET /api/public/v2/metrics` cannot disagree.
 */

import { BadRequest } from '../../../kernel/errors.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import { own } from '../lookup.ts';
import { buildMetrics, type MetricsQuery, type MetricsView, mapMetricsRow } from '../metrics.ts';
import { type Row, select } from '../select.ts';

export async function runMetricsQuery(
  ctx: RouteContext,
  views: Record<string, MetricsView>,
  projectId: string,
  query: MetricsQuery,
): Promise<{ data: Row[] }> {
  const view = own(views, query.view);
  if (!view)
    throw new BadRequest(`query: unknown view ${query.view} (available: ${Object.keys(views).join(', ')})`);
  const built = buildMetrics(view, projectId, query);
  const rows = await select(ctx, built);
  return { data: rows.map((r) => mapMetricsRow(r, built.keys)) };
}
