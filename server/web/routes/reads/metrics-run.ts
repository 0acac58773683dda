/** Running a metrics query (`?query=`) against a set of views: shared by the v2 and legacy v1 endpoints. */
import { z } from 'zod';
import { buildMetrics, type MetricsView, mapMetricsRow, parseMetricsQuery } from '../../../reads/metrics.ts';
import type { WebContext } from '../../context.ts';
import { BadRequest } from '../../errors.ts';
import type { Row } from './common.ts';
import { select } from './common.ts';

export const metricsQueryParam = z.object({ query: z.string().min(1).describe('JSON metrics query') });
export const metricsResponse = z.object({ data: z.array(z.record(z.string(), z.unknown())) });

/** Runs one metrics query against a set of views (v2 and the legacy v1 differ only in views). */
export async function runMetrics(
  ctx: WebContext,
  views: Record<string, MetricsView>,
  projectId: string,
  text: string,
): Promise<{ data: Row[] }> {
  const query = parseMetricsQuery(text);
  const view = views[query.view];
  if (!view)
    throw new BadRequest(`query: unknown view ${query.view} (available: ${Object.keys(views).join(', ')})`);
  const built = buildMetrics(view, projectId, query);
  const rows = await select(ctx, built);
  return { data: rows.map((r) => mapMetricsRow(r, built.keys)) };
}
