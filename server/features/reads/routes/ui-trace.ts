/**
 * The web UI's trace view (`/api/ui/projects/:projectId/traces/:traceId`, signed-in members): a
 * trace's observations with full input, output and metadata from `events_full`, their scores (the
 * trace's on its root) and comments. The page's writes are the scores' and comments' own
 * (server/features/scores/routes/ui.ts, server/features/comments/routes/ui.ts).
 */

import { notFound } from '../../../platform/http/answers.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import { familyPlugin, uiMount } from '../../../platform/http/project-routes.ts';
import { listComments } from '../../comments/store.ts';
import type { ModelDefinition } from '../../models/definitions.ts';
import { visibleModels } from '../../models/store.ts';
import { FIELD_GROUPS, type FieldGroup, mapObservation, rowKey } from '../observations.ts';
import { buildRowScores, indexScores, scoresOfRow } from '../row-scores.ts';
import { numberMap, zipMetadata } from '../row-values.ts';
import { select } from '../select.ts';
import { buildTraceTotals, costSource, indexTraceTotals } from '../trace-totals.ts';
import { treeOrder } from '../tree-order.ts';
import { readObservationPage } from './observation-page.ts';

const ALL_GROUPS = new Set<FieldGroup>(FIELD_GROUPS);
/** A trace larger than this shows its first observations and says it was cut. */
const TRACE_LIMIT = 1000;

/** The comments on a trace and on its observations, for the trace view. */
export async function traceComments(
  ctx: RouteContext,
  projectId: string,
  traceId: string,
  observations: { id: string }[],
) {
  const comments = await listComments(
    ctx.pool,
    projectId,
    {
      targets: [
        { objectType: 'TRACE', objectId: traceId },
        ...observations.map((o) => ({ objectType: 'OBSERVATION' as const, objectId: o.id })),
      ],
    },
    500,
    0,
  );
  return comments.items;
}

/** The trace view's definitions by id: those that priced its observations, as they are now. */
export async function modelsOfTrace(ctx: RouteContext, projectId: string) {
  return new Map((await visibleModels(ctx.pool, projectId)).map((m) => [m.id, m]));
}

/** The definition that priced an observation; null when none did or it was deleted since. */
export function matchedModel(models: Map<string, ModelDefinition>, modelId: unknown) {
  const m = typeof modelId === 'string' ? models.get(modelId) : undefined;
  return m
    ? { id: m.id, modelName: m.modelName, matchPattern: m.matchPattern, builtIn: m.projectId === null }
    : null;
}

export const uiTracesPlugin = familyPlugin(uiMount(), (declare, ctx) => {
  declare(
    {
      method: 'GET',
      gate: 'v4-reads',
      path: '/traces/:traceId',
      summary: "A trace's observations with their values, scores and comments",
    },
    async ({ params, projectId }) => {
      const page = await readObservationPage(ctx, {
        projectId,
        groups: ALL_GROUPS,
        filters: [{ type: 'string', column: 'traceId', operator: '=', value: params.traceId }],
        limit: TRACE_LIMIT,
        expandMetadata: [],
        withDetails: true,
      });
      if (page.rows.length === 0) throw notFound('trace', params.traceId);
      const [scoreRows, totalRows, models] = await Promise.all([
        select(ctx, buildRowScores(projectId, [params.traceId])),
        select(ctx, buildTraceTotals(projectId, [params.traceId])),
        modelsOfTrace(ctx, projectId),
      ]);
      const scores = indexScores(scoreRows);
      // Oldest first, parents before children, with full metadata values (the table's rows keep
      // them truncated).
      const mapped = page.rows.map((r) => {
        const details = page.details.get(rowKey(r));
        const o = mapObservation(r, ALL_GROUPS, details, []);
        const id = String(o['id']);
        return {
          ...o,
          id,
          metadata: details
            ? zipMetadata(details['metadata_names'], details['metadata_values'])
            : o['metadata'],
          scores: scoresOfRow(scores, params.traceId, id, Boolean(o['isRootObservation'])),
          matchedModel: matchedModel(models, o['modelId']),
          costSource: costSource(
            (o['costDetails'] ?? {}) as Record<string, number>,
            numberMap(details?.['provided_cost_details']),
          ),
        };
      });
      const observations = treeOrder(mapped, (o) => {
        const row = o as Record<string, unknown>;
        return {
          id: o.id,
          startTime: String(row['startTime']),
          parentId: (row['parentObservationId'] as string | null) || null,
        };
      });
      return {
        traceId: params.traceId,
        // Over every observation of the trace, also when the list is truncated.
        totals: indexTraceTotals(totalRows).get(params.traceId) ?? { usageDetails: {}, totalCost: null },
        observations,
        comments: await traceComments(ctx, projectId, params.traceId, observations),
        truncated: page.cursor !== undefined,
      };
    },
  );
});
