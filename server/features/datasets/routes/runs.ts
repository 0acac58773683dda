/**
 * Deprecated dataset-run reads (`GET /api/public/dataset-run-items`, `/api/public/datasets/:name/runs[/:runName]`)
 * and the run delete: runs in PostgreSQL, run items in `dataset_run_items_rmt`; 404 in events_only.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { found, notFound } from '../../../platform/http/answers.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import { projectRoutes, publicMount } from '../../../platform/http/project-routes.ts';
import { q } from '../../../platform/http/route.ts';
import { buildRunItems, buildRunItemTombstones, mapRunItem } from '../../reads/legacy.ts';
import { runPaged, select } from '../../reads/select.ts';
import { findDatasetByName, listRuns, type RunRow } from '../store.ts';

const mapRun = (r: RunRow, datasetName: string) => ({
  id: r.id,
  name: r.name,
  description: r.description,
  metadata: r.metadata ?? null,
  datasetId: r.dataset_id,
  datasetName,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

const page = q.page(1000, 50);

export function legacyRunRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const legacy = projectRoutes(app, publicMount('/api/public', 'Legacy', 'deprecated'));
  const findRun = async (projectId: string, datasetId: string, name: string) =>
    (
      await ctx.pool.query<RunRow>(
        'SELECT * FROM dataset_runs WHERE project_id = $1 AND dataset_id = $2 AND name = $3',
        [projectId, datasetId, name],
      )
    ).rows[0];
  const findDataset = (projectId: string, name: string) => findDatasetByName(ctx.pool, projectId, name);
  /** The dataset and its run named in the path, or 404. */
  const findDatasetRun = async (projectId: string, p: { datasetName: string; runName: string }) => {
    const ds = await findDataset(projectId, p.datasetName);
    const run = ds && (await findRun(projectId, ds.id, p.runName));
    if (!ds || !run) throw notFound('Dataset run', p.runName);
    return { ds, run };
  };

  legacy(
    {
      method: 'GET',
      path: '/dataset-run-items',
      summary: 'Items of one dataset run (deprecated; 404 in events_only)',
      query: z.object({ ...page, datasetId: z.string().min(1), runName: z.string().min(1) }),
    },
    async ({ query, projectId }) => {
      const run = found(
        await findRun(projectId, query.datasetId, query.runName),
        'Dataset run',
        query.runName,
      );
      const { rows, meta } = await runPaged(
        ctx,
        buildRunItems(projectId, query.datasetId, run.id, query),
        query,
      );
      return { data: rows.map(mapRunItem), meta };
    },
  );

  legacy.listing(
    {
      path: '/datasets/:datasetName/runs',
      summary: 'Runs of a dataset (deprecated; 404 in events_only)',
      query: z.object(page),
    },
    async ({ params, projectId }, limit, offset) => {
      const ds = found(await findDataset(projectId, params.datasetName), 'Dataset', params.datasetName);
      const runs = await listRuns(ctx.pool, projectId, ds.id, limit, offset);
      return { items: runs.rows.map((r) => mapRun(r, ds.name)), total: runs.total };
    },
  );

  legacy(
    {
      method: 'GET',
      path: '/datasets/:datasetName/runs/:runName',
      summary: 'A dataset run with its items (deprecated)',
    },
    async ({ params, projectId }) => {
      const { ds, run } = await findDatasetRun(projectId, params);
      const items = await select(ctx, buildRunItems(projectId, ds.id, run.id, undefined).list);
      return { ...mapRun(run, ds.name), datasetRunItems: items.map(mapRunItem) };
    },
  );

  legacy.deletion(
    {
      path: '/datasets/:datasetName/runs/:runName',
      summary: 'Delete a dataset run and its items (deprecated; 404 in events_only)',
    },
    'Dataset run',
    async ({ params, projectId }) => {
      const { ds, run } = await findDatasetRun(projectId, params);
      const tombstones = buildRunItemTombstones(projectId, ds.id, run.id);
      await ctx.analytics.command({ query: tombstones.sql, query_params: tombstones.params });
      await ctx.pool.query('DELETE FROM dataset_runs WHERE project_id = $1 AND id = $2', [projectId, run.id]);
    },
  );
}
