/**
 * The web UI's project page (`/api/ui/projects/:projectId`): the project, its owners' rename,
 * retention and deletion (the administration API's: marked here, removed by the worker's
 * ../../deletion/projects.ts), and the observations table, in the project scope (server/app/web/ui-shell/scope.ts). The table reads through the same page reader, filter compiler and column table as the
 * Observations API v2 (../../reads/routes/observation-page.ts), gated like it on the version 4 read path.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { BadRequest } from '../../../kernel/errors.ts';
import { found } from '../../../platform/http/answers.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { projectRoutes, uiMount } from '../../../platform/http/project-routes.ts';
import { q } from '../../../platform/http/route.ts';
import { auditAs } from '../../audit/routes/audit.ts';
import { OBSERVATION_COLUMNS } from '../../reads/events-columns.ts';
import { parseFilterParam } from '../../reads/filters.ts';
import {
  type FieldGroup,
  mapObservation,
  type Row,
  rowKey,
  SORT_COLUMNS,
  type SortColumn,
  simpleFilters,
} from '../../reads/observations.ts';
import { readObservationPage } from '../../reads/routes/observation-page.ts';
import { buildRowScores, indexScores, scoresOfRow } from '../../reads/row-scores.ts';
import { zipMetadata } from '../../reads/row-values.ts';
import { snippetOf } from '../../reads/search-snippet.ts';
import { select } from '../../reads/select.ts';
import { buildTraceTotals, indexTraceTotals } from '../../reads/trace-totals.ts';
import { markProjectDeleted, updateProject } from '../organizations.ts';
import type { ProjectsRouteContext } from './context.ts';
import { retentionDays } from './organizations.ts';
import { nameBody } from './ui-organizations.ts';

const OWNERS = { atLeast: 'owner', refusal: 'only owners rename or delete a project' } as const;

const TABLE_GROUPS = new Set<FieldGroup>(['core', 'basic', 'model', 'usage', 'metrics', 'trace_context']);

export const observationsTableQuery = z.object({
  filter: z.string().optional().describe('JSON array of {type, column, operator, value, key?}, as API v2'),
  search: z.string().max(500).optional(),
  fromStartTime: q.datetime().optional(),
  toStartTime: q.datetime().optional(),
  orderBy: z.enum(Object.keys(SORT_COLUMNS) as [SortColumn, ...SortColumn[]]).default('startTime'),
  order: z.enum(['asc', 'desc']).default('desc'),
  cursor: z.string().optional(),
  limit: q.int(1, 200, 50),
});

/** Full input, output and metadata values of a row, in the order the search tries them. */
function searchable(d: Row | undefined): [string, string][] {
  if (!d) return [];
  const meta = Object.entries(zipMetadata(d['metadata_names'], d['metadata_values'])).map(
    ([k, v]): [string, string] => [`metadata.${k}`, typeof v === 'string' ? v : JSON.stringify(v)],
  );
  return [['input', String(d['input'] ?? '')], ['output', String(d['output'] ?? '')], ...meta];
}

export const uiProjectsPlugin: FastifyPluginAsync<PluginOptions<ProjectsRouteContext>> = async (
  app,
  { ctx },
) => {
  const declare = projectRoutes(app, uiMount(OWNERS));
  const auditProject = (req: FastifyRequest, action: 'update' | 'delete') =>
    auditAs(ctx, req, {
      orgId: req.project.organization.id,
      resourceType: 'project',
      resourceId: req.project.id,
      action,
    });

  declare(
    {
      method: 'GET',
      path: '',
      summary: 'A project, the role of the user in it, and the filter columns of its observations',
    },
    async ({ req }) => ({
      project: req.project,
      columns: Object.fromEntries(Object.entries(OBSERVATION_COLUMNS).map(([name, c]) => [name, c.kind])),
      sortColumns: Object.keys(SORT_COLUMNS),
    }),
  );

  declare(
    {
      method: 'PUT',
      path: '',
      summary: 'Rename a project',
      body: nameBody,
    },
    async ({ body, req }) => {
      const { id, organization } = req.project;
      await updateProject(ctx.pool, organization.id, id, { name: body.name });
      await auditProject(req, 'update');
      return { project: { ...req.project, name: body.name } };
    },
  );

  declare(
    {
      method: 'DELETE',
      path: '',
      summary: 'Delete a project with all its data (its name typed to confirm); the worker removes the data',
      body: z.strictObject({ confirmName: z.string() }),
    },
    async ({ body, req, reply }) => {
      const { id, name, organization } = req.project;
      if (body.confirmName !== name)
        throw new BadRequest('Invalid request data', "confirmName: type the project's name to delete it");
      const deleted = found(await markProjectDeleted(ctx.pool, organization.id, id), 'project', id);
      for (const key of deleted.revokedKeys) ctx.keys.forget(key);
      await auditProject(req, 'delete');
      reply.code(202);
      return { ok: true };
    },
  );

  declare(
    {
      method: 'PUT',
      path: '/retention',
      summary: 'Set how many days the project keeps its data (0 or null: forever)',
      role: { atLeast: 'owner', refusal: 'only owners change data retention' },
      body: z.strictObject({
        retentionDays: retentionDays('must be 0 (keep forever) or at least 3 days').nullable(),
      }),
    },
    async ({ body, req, projectId }) => {
      const days = body.retentionDays || null;
      // A new policy is applied at the worker's next tick rather than an hour after the last pass.
      await ctx.pool.query(
        'UPDATE projects SET retention_days = $2, retention_applied_at = NULL WHERE id = $1',
        [projectId, days],
      );
      return { project: { ...req.project, retentionDays: days } };
    },
  );

  declare(
    {
      method: 'GET',
      gate: 'v4-reads',
      path: '/observations',
      summary: 'A page of the observations table',
      query: observationsTableQuery,
    },
    async ({ query, projectId }) => {
      const search = query.search?.trim() || undefined;
      const filters = [
        ...parseFilterParam(query.filter),
        ...simpleFilters({ fromStartTime: query.fromStartTime, toStartTime: query.toStartTime }),
      ];
      const page = await readObservationPage(ctx, {
        projectId,
        groups: TABLE_GROUPS,
        filters,
        limit: query.limit,
        cursor: query.cursor,
        expandMetadata: [],
        order: { column: query.orderBy, dir: query.order },
        search,
        withDetails: search !== undefined,
      });
      const traceIds = [...new Set(page.rows.map((r) => String(r['trace_id'])))];
      const mapped = page.rows.map((r) => ({ row: r, o: mapObservation(r, TABLE_GROUPS, undefined, []) }));
      const rootTraceIds = [
        ...new Set(mapped.filter(({ o }) => o['isRootObservation']).map(({ o }) => String(o['traceId']))),
      ];
      const [scoreRows, totalRows] = await Promise.all([
        traceIds.length > 0 ? select(ctx, buildRowScores(projectId, traceIds)) : [],
        rootTraceIds.length > 0 ? select(ctx, buildTraceTotals(projectId, rootTraceIds)) : [],
      ]);
      const scores = indexScores(scoreRows);
      const totals = indexTraceTotals(totalRows);
      const data = mapped.map(({ row: r, o }) => {
        const match = search ? snippetOf(search, searchable(page.details.get(rowKey(r)))) : undefined;
        const root = Boolean(o['isRootObservation']);
        const traceTotals = root ? totals.get(String(o['traceId'])) : undefined;
        return {
          ...o,
          scores: scoresOfRow(scores, String(o['traceId']), String(o['id']), root),
          ...(traceTotals ? { traceTotals } : {}),
          ...(match ? { match } : {}),
        };
      });
      return { data, meta: page.cursor ? { cursor: page.cursor } : {} };
    },
  );
};
