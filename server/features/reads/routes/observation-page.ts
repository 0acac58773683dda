/**
 * One page of observations from the events tables, as both the Observations API v2 and the web
 * UI's table read it: the same filter compiler, column table, keyset pagination and follow-up
 * read of full values from `events_full` (server/features/reads/observations.ts).
 */

import type { RouteContext } from '../../../platform/http/context.ts';
import type { FilterCondition } from '../filters.ts';
import {
  buildObservationDetails,
  buildObservationList,
  type FieldGroup,
  needsDetails,
  nextCursor,
  type ObservationOrder,
  parseObservationCursor,
  type Row,
  rowKey,
} from '../observations.ts';
import { hasTextIndex, select } from '../select.ts';

export interface ObservationPageRequest {
  projectId: string;
  groups: Set<FieldGroup>;
  filters: FilterCondition[];
  limit: number;
  cursor?: string | undefined;
  expandMetadata: string[];
  order?: ObservationOrder | undefined;
  search?: string | undefined;
  /** Read full input, output and metadata of the page's rows even when no group asks for them. */
  withDetails?: boolean;
}

export interface ObservationPage {
  rows: Row[];
  /** Full values by `rowKey`, when read. */
  details: Map<string, Row>;
  cursor: string | undefined;
}

export async function readObservationPage(
  ctx: RouteContext,
  r: ObservationPageRequest,
): Promise<ObservationPage> {
  const list = buildObservationList({
    projectId: r.projectId,
    groups: r.groups,
    filters: r.filters,
    limit: r.limit,
    cursor: parseObservationCursor(r.cursor),
    textIndex: await hasTextIndex(ctx),
    order: r.order,
    search: r.search,
  });
  const rows = await select(ctx, list);
  const page = rows.slice(0, r.limit);
  const details = new Map<string, Row>();
  if (page.length > 0 && (r.withDetails || needsDetails(r.groups, r.expandMetadata))) {
    for (const d of await select(ctx, buildObservationDetails(r.projectId, page))) details.set(rowKey(d), d);
  }
  return { rows: page, details, cursor: nextCursor(rows, r.limit) };
}
