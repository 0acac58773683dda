/**
 * `GET /api/public/v2/observations`: see server/features/reads/observations.ts for the queries; the model
 * group's prices are those of each row's matched model, read from PostgreSQL for the page.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { BadRequest } from '../../../kernel/errors.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { q, route } from '../../../platform/http/route.ts';
import { defaultPrices, type ModelDefinition } from '../../models/definitions.ts';
import { modelsById } from '../../models/store.ts';
import { parseFilterParam } from '../filters.ts';
import { mapObservation, parseFieldGroups, type Row, rowKey, simpleFilters } from '../observations.ts';
import { readObservationPage } from './observation-page.ts';

export const observationsV2Query = z.object({
  fields: z
    .string()
    .optional()
    .describe('core,basic,time,io,metadata,model,usage,prompt,metrics,trace_context'),
  expandMetadata: q.csv(),
  limit: q.int(1, 1000, 50),
  cursor: z.string().optional(),
  parseIoAsJson: q.bool(),
  name: z.string().optional(),
  userId: z.string().optional(),
  sessionId: z.string().optional(),
  type: z.string().optional(),
  traceId: z.string().optional(),
  level: z.enum(['DEBUG', 'DEFAULT', 'WARNING', 'ERROR']).optional(),
  parentObservationId: z.string().optional(),
  isRootObservation: q.bool(),
  environment: q.many(),
  fromStartTime: q.datetime().optional(),
  toStartTime: q.datetime().optional(),
  version: z.string().optional(),
  filter: z.string().optional().describe('JSON array of {type, column, operator, value, key?}'),
});

const observationV2 = z
  .object({
    id: z.string(),
    traceId: z.string().nullable(),
    startTime: z.string(),
    endTime: z.string().nullable(),
    projectId: z.string(),
    parentObservationId: z.string().nullable(),
    type: z.string(),
  })
  .loose();

export const v4ReadsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  route(
    app,
    {
      method: 'GET',
      gate: 'v4-reads',
      url: '/api/public/v2/observations',
      tag: 'Observations v2',
      summary: 'Observations with field groups, filters and cursor pagination (a trace = traceId filter)',
      query: observationsV2Query,
      response: z.object({ data: z.array(observationV2), meta: z.object({ cursor: z.string().optional() }) }),
    },
    async ({ query, req }) => {
      if (query.parseIoAsJson)
        throw new BadRequest('parseIoAsJson is no longer supported: input and output are raw strings');
      const groups = parseFieldGroups(query.fields);
      const filters = query.filter !== undefined ? parseFilterParam(query.filter) : simpleFilters(query);
      const expand = query.expandMetadata ?? [];
      const { rows, details, cursor } = await readObservationPage(ctx, {
        projectId: req.principal.projectId,
        groups,
        filters,
        limit: query.limit,
        cursor: query.cursor,
        expandMetadata: expand,
      });
      const models = groups.has('model')
        ? await modelsById(ctx.pool, req.principal.projectId, [
            ...new Set(rows.flatMap((r) => (r['model_id'] ? [String(r['model_id'])] : []))),
          ])
        : new Map<string, ModelDefinition>();
      const pricesOf = (r: Row) => {
        const model = models.get(String(r['model_id']));
        return model && defaultPrices(model);
      };
      return {
        data: rows.map((r) => mapObservation(r, groups, details.get(rowKey(r)), expand, pricesOf(r))),
        meta: cursor ? { cursor } : {},
      };
    },
  );
};
