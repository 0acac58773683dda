/**
 * Score reads: `GET /api/public/v3/scores` (every write mode of release 4) and the deprecated v1
 * and v2 lists (404 in events_only).
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { q, route } from '../../../platform/http/route.ts';
import { buildScoresV3, mapScoreV3, parseScoreFields, scoresCursor } from '../../reads/scores.ts';
import { select } from '../../reads/select.ts';
import { legacyScoreRoutes } from './legacy.ts';

export const scoresV3Query = z.object({
  limit: q.int(1, 100, 50),
  cursor: z.string().optional(),
  fields: q.csv(),
  id: q.csv(),
  name: q.csv(),
  source: q.csv(),
  dataType: q.csv(),
  environment: q.csv(),
  configId: q.csv(),
  queueId: q.csv(),
  authorUserId: q.csv(),
  value: q.csv(),
  valueMin: z.coerce.number().optional(),
  valueMax: z.coerce.number().optional(),
  traceId: q.csv(),
  sessionId: q.csv(),
  observationId: q.csv(),
  experimentId: q.csv(),
  ...q.timeRange(),
});

const scoreV3 = z
  .object({
    id: z.string(),
    projectId: z.string(),
    name: z.string(),
    value: z.union([z.number(), z.boolean(), z.string()]),
    dataType: z.enum(['NUMERIC', 'BOOLEAN', 'CATEGORICAL', 'TEXT', 'CORRECTION']),
    source: z.string(),
    timestamp: z.string(),
    environment: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .loose();

export const scoresPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  route(
    app,
    {
      method: 'GET',
      gate: 'release-4',
      url: '/api/public/v3/scores',
      tag: 'Scores v3',
      summary: 'Scores with typed values, field groups and cursor pagination',
      query: scoresV3Query,
      response: z.object({
        data: z.array(scoreV3),
        meta: z.object({ limit: z.number(), cursor: z.string().optional() }),
      }),
    },
    async ({ query, req }) => {
      const groups = parseScoreFields(query.fields);
      const rows = await select(ctx, buildScoresV3({ ...query, projectId: req.principal.projectId }));
      const cursor = scoresCursor(rows, query.limit);
      return {
        data: rows.slice(0, query.limit).map((r) => mapScoreV3(r, groups)),
        meta: { limit: query.limit, ...(cursor ? { cursor } : {}) },
      };
    },
  );
  legacyScoreRoutes(app, ctx);
};
