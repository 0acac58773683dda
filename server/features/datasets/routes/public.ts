/**
 * Datasets and experiments: datasets and dataset items (`/api/public/v2/datasets`,
 * `/api/public/dataset-items`, and the v1 `/api/public/datasets` the SDKs may still call), served
 * in every mode since relational data is not part of the data-model change; dataset run items and
 * the deprecated dataset runs (datasets/runs.ts, datasets/run-items.ts); the version 4 experiment
 * reads (datasets/experiments.ts).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { BadRequest } from '../../../kernel/errors.ts';
import { parseIsoDateTime } from '../../../kernel/iso-datetime.ts';
import { found, notFound } from '../../../platform/http/answers.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { pageResponse, projectRoutes, publicMount } from '../../../platform/http/project-routes.ts';
import { q } from '../../../platform/http/route.ts';
import {
  type DatasetItemRow,
  type DatasetRow,
  itemListQueries,
  jsonParam,
  mapDataset,
  mapDatasetItem,
  SQL,
} from '../../reads/datasets.ts';
import { findDatasetByName, listDatasetItems, listDatasets } from '../store.ts';
import type { DatasetsRouteContext } from './context.ts';
import { experimentRoutes } from './experiments.ts';
import { datasetRunItemRoutes } from './run-items.ts';
import { legacyRunRoutes } from './runs.ts';

const createDataset = z.object({
  name: z.string().min(1),
  description: z.string().nullish(),
  metadata: z.unknown().optional(),
  inputSchema: z.unknown().optional(),
  expectedOutputSchema: z.unknown().optional(),
});

const createItem = z.object({
  datasetName: z.string().min(1),
  input: z.unknown().optional(),
  expectedOutput: z.unknown().optional(),
  metadata: z.unknown().optional(),
  sourceTraceId: z.string().nullish(),
  sourceObservationId: z.string().nullish(),
  id: z.string().min(1).max(255).nullish(),
  // Every SDK sends `status: null` when the caller does not set one: null means "the default".
  status: z.enum(['ACTIVE', 'ARCHIVED']).nullish(),
});

const pageQuery = z.object(q.page(1000, 50));

const dataset = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  metadata: z.unknown(),
  inputSchema: z.unknown(),
  expectedOutputSchema: z.unknown(),
  projectId: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const datasetItem = z.object({
  id: z.string(),
  status: z.enum(['ACTIVE', 'ARCHIVED']),
  input: z.unknown(),
  expectedOutput: z.unknown(),
  metadata: z.unknown(),
  sourceTraceId: z.string().nullable(),
  sourceObservationId: z.string().nullable(),
  datasetId: z.string(),
  datasetName: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  mediaReferences: z.array(z.unknown()),
});

export const datasetsPlugin: FastifyPluginAsync<PluginOptions<DatasetsRouteContext>> = async (
  app,
  { ctx },
) => {
  const datasets = projectRoutes(app, publicMount('/api/public', 'Datasets'));
  const items = projectRoutes(app, publicMount('/api/public', 'Dataset items'));
  const findDataset = (projectId: string, name: string) => findDatasetByName(ctx.pool, projectId, name);

  const upsertDataset = async (projectId: string, b: z.infer<typeof createDataset>) => {
    const { rows } = await ctx.pool.query<DatasetRow>(SQL.upsertDataset, [
      randomUUID(),
      projectId,
      b.name,
      b.description ?? null,
      jsonParam(b.metadata),
      jsonParam(b.inputSchema),
      jsonParam(b.expectedOutputSchema),
    ]);
    return mapDataset(rows[0]!);
  };

  for (const path of ['/v2/datasets', '/datasets']) {
    datasets(
      {
        method: 'POST',
        path,
        summary: 'Create a dataset (upsert by name)',
        body: createDataset,
        response: dataset,
      },
      async ({ body, projectId }) => upsertDataset(projectId, body),
    );
    datasets(
      {
        method: 'GET',
        path,
        summary: 'List datasets',
        query: pageQuery,
        response: pageResponse(dataset),
      },
      async ({ query, projectId }) => listDatasets(ctx.pool, projectId, query.page, query.limit),
    );
  }

  datasets.lookup(
    { path: '/v2/datasets/:datasetName', summary: 'Get a dataset by name', response: dataset },
    'Dataset',
    ({ params, projectId }) => findDataset(projectId, params.datasetName),
    mapDataset,
  );

  // v1: the dataset with its items and the names of its runs.
  datasets(
    {
      method: 'GET',
      path: '/datasets/:datasetName',
      summary: 'Get a dataset with its items and run names (v1)',
    },
    async ({ params, projectId }) => {
      const row = found(await findDataset(projectId, params.datasetName), 'Dataset', params.datasetName);
      const items = itemListQueries({ projectId, datasetId: row.id }, 100_000, 0).list;
      const [itemRows, runs] = await Promise.all([
        ctx.pool.query<DatasetItemRow>(items.text, items.values),
        ctx.pool.query<{ name: string }>(
          'SELECT name FROM dataset_runs WHERE project_id = $1 AND dataset_id = $2 ORDER BY created_at',
          [projectId, row.id],
        ),
      ]);
      return {
        ...mapDataset(row),
        items: itemRows.rows.map(mapDatasetItem),
        runs: runs.rows.map((r) => r.name),
      };
    },
  );

  items(
    {
      method: 'POST',
      path: '/dataset-items',
      summary: 'Create a dataset item; an existing id updates that item (within its dataset only)',
      body: createItem,
      response: datasetItem,
    },
    async ({ body, projectId }) => {
      const ds = found(await findDataset(projectId, body.datasetName), 'Dataset', body.datasetName);
      const id = body.id ?? randomUUID();
      // Rules that ask for it mask dataset items too (server/features/masking/).
      const masker = await ctx.masking.forDatasetItems(projectId);
      const masked = <T>(v: T): T => (masker ? masker.value(v) : v);
      const { rows } = await ctx.pool.query<{ id: string }>(SQL.upsertItem, [
        id,
        projectId,
        ds.id,
        body.status ?? null,
        jsonParam(masked(body.input)),
        jsonParam(masked(body.expectedOutput)),
        jsonParam(masked(body.metadata)),
        body.sourceTraceId ?? null,
        body.sourceObservationId ?? null,
      ]);
      if (rows.length === 0) {
        throw new BadRequest(
          `Dataset item ${id} belongs to another dataset; items cannot move between datasets`,
        );
      }
      const item = await ctx.pool.query<DatasetItemRow>(SQL.itemById, [projectId, id]);
      return mapDatasetItem(item.rows[0]!);
    },
  );

  items(
    {
      method: 'GET',
      path: '/dataset-items',
      summary: 'List dataset items, newest first; with `version` (a time), the items as they were then',
      query: pageQuery.extend({
        datasetName: z.string().optional(),
        sourceTraceId: z.string().optional(),
        sourceObservationId: z.string().optional(),
        version: q.datetime().optional(),
      }),
      response: pageResponse(datasetItem),
    },
    async ({ query, projectId }) => {
      let datasetId: string | undefined;
      if (query.datasetName !== undefined) {
        const ds = found(await findDataset(projectId, query.datasetName), 'Dataset', query.datasetName);
        datasetId = ds.id;
      }
      return listDatasetItems(
        ctx.pool,
        {
          projectId,
          datasetId,
          sourceTraceId: query.sourceTraceId,
          sourceObservationId: query.sourceObservationId,
          version:
            query.version === undefined
              ? undefined
              : new Date(parseIsoDateTime(query.version)!).toISOString(),
        },
        query.page,
        query.limit,
      );
    },
  );

  items(
    {
      method: 'GET',
      path: '/dataset-items/:id',
      summary: 'Get a dataset item',
      response: datasetItem,
    },
    async ({ params, projectId }) => {
      const { rows } = await ctx.pool.query<DatasetItemRow>(SQL.itemById, [projectId, params.id]);
      if (!rows[0]) throw notFound('Dataset item', params.id);
      return mapDatasetItem(rows[0]);
    },
  );

  items.deletion(
    {
      path: '/dataset-items/:id',
      summary: 'Delete a dataset item',
      response: z.object({ message: z.string() }),
    },
    'Dataset item',
    async ({ params, projectId }) =>
      (await ctx.pool.query(SQL.deleteItem, [projectId, params.id])).rows.length > 0,
  );
  datasetRunItemRoutes(app, ctx);
  legacyRunRoutes(app, ctx);
  experimentRoutes(app, ctx);
};
