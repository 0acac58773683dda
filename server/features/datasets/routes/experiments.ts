/** `GET /api/public/experiments` and `GET /api/public/experiment-items` (version 4 reads). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { BadRequest } from '../../../kernel/errors.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import { q, route } from '../../../platform/http/route.ts';
import {
  buildExperimentItems,
  buildExperiments,
  buildSubjectScores,
  ITEM_FIELD_GROUPS,
  type ItemFieldGroup,
  mapExperiment,
  mapExperimentItem,
  timeCursor,
} from '../../reads/experiments.ts';
import { parseFilterParam } from '../../reads/filters.ts';
import { mapScoreV3 } from '../../reads/scores.ts';
import { type Row, select } from '../../reads/select.ts';

const common = {
  limit: q.int(1, 100, 50),
  scoreLimit: q.int(1, 50, 50),
  cursor: z.string().optional(),
  fromStartTime: q.datetime(),
  toStartTime: q.datetime().optional(),
  filter: z.string().optional(),
};

const ALL_SCORE_GROUPS = new Set(['details', 'subject', 'annotation'] as const);

/** Scores grouped by subject id, for the page's subjects. */
async function scoresBy(
  ctx: RouteContext,
  projectId: string,
  column: 'trace_id' | 'dataset_run_id',
  ids: string[],
  limit: number,
) {
  const by = new Map<string, unknown[]>();
  if (ids.length === 0) return by;
  for (const r of await select(ctx, buildSubjectScores(projectId, column, ids, limit))) {
    const key = String(r[column]);
    by.set(key, [...(by.get(key) ?? []), mapScoreV3(r, ALL_SCORE_GROUPS)]);
  }
  return by;
}

export function experimentRoutes(app: FastifyInstance, ctx: RouteContext): void {
  route(
    app,
    {
      method: 'GET',
      gate: 'v4-reads',
      url: '/api/public/experiments',
      tag: 'Experiments',
      summary: 'Experiments (from the experiment columns of the events), latest activity first',
      query: z.object({ ...common, fields: q.csv(), id: q.csv(), name: q.csv(), datasetId: q.csv() }),
    },
    async ({ query, req }) => {
      const fields = new Set(query.fields ?? ['core']);
      for (const f of fields)
        if (!['core', 'metadata', 'scores'].includes(f))
          throw new BadRequest(`fields: unknown field group ${f}`);
      const { projectId } = req.principal;
      const rows = await select(
        ctx,
        buildExperiments({ ...query, projectId, filters: parseFilterParam(query.filter) }),
      );
      const page = rows.slice(0, query.limit);
      const scores = fields.has('scores')
        ? await scoresBy(
            ctx,
            projectId,
            'dataset_run_id',
            page.map((r) => String(r['id'])),
            query.scoreLimit,
          )
        : undefined;
      const last = rows.length > query.limit ? page.at(-1) : undefined;
      return {
        data: page.map((r) => ({
          ...mapExperiment(r, fields.has('metadata')),
          ...(scores ? { scores: scores.get(String(r['id'])) ?? [] } : {}),
        })),
        meta: last ? { cursor: timeCursor(last['last_activity'], last['id']) } : {},
      };
    },
  );

  route(
    app,
    {
      method: 'GET',
      gate: 'v4-reads',
      url: '/api/public/experiment-items',
      tag: 'Experiments',
      summary: 'Experiment items (the root span of each dataset item run), newest first',
      query: z.object({
        ...common,
        fields: q.csv(),
        experimentId: q.csv(),
        experimentName: q.csv(),
        experimentItemId: q.csv(),
        datasetId: q.csv(),
      }),
    },
    async ({ query, req }) => {
      const groups = new Set<ItemFieldGroup>(['core']);
      for (const f of query.fields ?? ['core', 'dataset']) {
        if (!(ITEM_FIELD_GROUPS as readonly string[]).includes(f))
          throw new BadRequest(`fields: unknown field group ${f}`);
        groups.add(f as ItemFieldGroup);
      }
      const { projectId } = req.principal;
      const rows = await select(
        ctx,
        buildExperimentItems({ ...query, projectId, groups, filters: parseFilterParam(query.filter) }),
      );
      const page: Row[] = rows.slice(0, query.limit);
      const scores = groups.has('scores')
        ? await scoresBy(
            ctx,
            projectId,
            'trace_id',
            [...new Set(page.map((r) => String(r['trace_id'])))],
            query.scoreLimit,
          )
        : undefined;
      const last = rows.length > query.limit ? page.at(-1) : undefined;
      return {
        data: page.map((r) => ({
          ...mapExperimentItem(r, groups),
          ...(scores ? { scores: scores.get(String(r['trace_id'])) ?? [] } : {}),
        })),
        meta: last ? { cursor: timeCursor(last['start_time'], last['span_id']) } : {},
      };
    },
  );
}
