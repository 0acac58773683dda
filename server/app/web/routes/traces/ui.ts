/**
 * The web UI's trace view and its writes (`/api/ui/projects/:projectId/...`, signed-in members):
 * a trace's observations with full input, output and metadata from `events_full`, their scores
 * (the trace's on its root) and comments; a score or a comment added from the page goes through
 * the same services as `POST /api/public/scores` and `POST /api/public/comments`. Viewers read,
 * owners and members write.
 */
import { z } from 'zod';
import { behaviourOf } from '../../../../contract/write-modes.ts';
import { createCommentRequest } from '../../../../features/comments/rules.ts';
import { createComment, listComments } from '../../../../features/comments/store.ts';
import { targetExists } from '../../../../features/comments/targets.ts';
import type { ModelDefinition } from '../../../../features/models/definitions.ts';
import { visibleModels } from '../../../../features/models/store.ts';
import {
  FIELD_GROUPS,
  type FieldGroup,
  mapObservation,
  rowKey,
} from '../../../../features/reads/observations.ts';
import { buildRowScores, indexScores, scoresOfRow } from '../../../../features/reads/row-scores.ts';
import { select } from '../../../../features/reads/select.ts';
import { numberMap, zipMetadata } from '../../../../features/reads/sql.ts';
import { buildTraceTotals, costSource, indexTraceTotals } from '../../../../features/reads/trace-totals.ts';
import { treeOrder } from '../../../../features/reads/tree-order.ts';
import { writeApiScores } from '../../../../features/scores/api-scores.ts';
import { findConfig, listConfigs } from '../../../../features/scores/config-store.ts';
import { BadRequest, NotFound } from '../../../../kernel/errors.ts';
import { notFound } from '../../core/answers.ts';
import { acceptDepsOf } from '../../core/context.ts';
import type { PluginOptions } from '../../core/plugin-options.ts';
import { familyPlugin, uiMount } from '../../core/project-routes.ts';
import { SERVICE_VERSION } from '../service/health.ts';
import { readObservationPage } from './observation-page.ts';

const ALL_GROUPS = new Set<FieldGroup>(FIELD_GROUPS);
/** A trace larger than this shows its first observations and says it was cut. */
const TRACE_LIMIT = 1000;

/** The comments on a trace and on its observations, for the trace view. */
export async function traceComments(
  ctx: PluginOptions['ctx'],
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
  return comments.data;
}

/** The trace view's definitions by id: those that priced its observations, as they are now. */
export async function modelsOfTrace(ctx: PluginOptions['ctx'], projectId: string) {
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

  declare(
    {
      method: 'GET',
      path: '/score-configs',
      summary: "The project's score configs an annotator can score with (archived ones left out)",
    },
    async ({ projectId }) => {
      const { configs } = await listConfigs(ctx.pool, projectId, 100, 0);
      return { data: configs.filter((c) => !c.isArchived) };
    },
  );

  declare(
    {
      method: 'POST',
      path: '/scores',
      summary:
        'Add a score, as POST /api/public/scores, by the signed-in user: ANNOTATION with a score config (as the reference annotates), API without',
      role: { atLeast: 'member', refusal: 'viewers cannot add scores' },
      body: z.record(z.string(), z.unknown()),
    },
    async ({ body, req, projectId }) => {
      const source = body['configId'] ? 'ANNOTATION' : 'API';
      const result = await writeApiScores([{ ...body, source }], {
        projectId,
        authorUserId: req.session.user.id,
        attribution: { apiKey: '', sdkName: 'observatory-ui', sdkVersion: SERVICE_VERSION },
        ...acceptDepsOf(ctx),
        findConfig: (id) => findConfig(ctx.pool, projectId, id),
      });
      if (result.errors[0]) throw new BadRequest(result.errors[0].message);
      return { id: result.ids[0] };
    },
  );

  declare(
    {
      method: 'POST',
      path: '/comments',
      summary: 'Add a comment, as POST /api/public/comments, authored by the signed-in user',
      role: { atLeast: 'member', refusal: 'viewers cannot add comments' },
      body: createCommentRequest.omit({ projectId: true, authorUserId: true }),
    },
    async ({ body, req, projectId }) => {
      const stores = {
        pool: ctx.pool,
        analytics: ctx.analytics,
        hasEvents: ctx.config.mode.release === '4',
        readLegacy: behaviourOf(ctx.config.mode).servesLegacyEndpoints,
      };
      if (!(await targetExists(stores, projectId, body))) {
        throw new NotFound(`objectId: no ${body.objectType.toLowerCase()} ${body.objectId} in this project`);
      }
      const comment = await createComment(ctx.pool, projectId, {
        ...body,
        authorUserId: req.session.user.id,
      });
      return { id: comment.id };
    },
  );
});
