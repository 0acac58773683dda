/**
 * Reads of datasets, their items and their runs (PostgreSQL), shared by the public datasets API
 * and the web UI's dataset pages. Every statement is scoped by the caller's project.
 */
import type pg from 'pg';
import { pageMeta } from '../../platform/http/project-routes.ts';
import {
  type DatasetItemRow,
  type DatasetRow,
  type ItemListFilter,
  itemListQueries,
  mapDataset,
  mapDatasetItem,
  SQL,
} from '../reads/datasets.ts';

export interface RunRow {
  id: string;
  name: string;
  description: string | null;
  metadata: unknown;
  dataset_id: string;
  created_at: Date;
  updated_at: Date;
}

export const findDatasetByName = async (pool: pg.Pool, projectId: string, name: string) =>
  (await pool.query<DatasetRow>(SQL.datasetByName, [projectId, name])).rows[0];

export const findDatasetById = async (pool: pg.Pool, projectId: string, id: string) =>
  (await pool.query<DatasetRow>('SELECT * FROM datasets WHERE project_id = $1 AND id = $2', [projectId, id]))
    .rows[0];

export async function listDatasets(pool: pg.Pool, projectId: string, page: number, limit: number) {
  const [list, count] = await Promise.all([
    pool.query<DatasetRow>(SQL.listDatasets, [projectId, limit, (page - 1) * limit]),
    pool.query<{ n: number }>(SQL.countDatasets, [projectId]),
  ]);
  return { data: list.rows.map(mapDataset), meta: pageMeta(page, limit, count.rows[0]!.n) };
}

/** Items matching the filter, newest first, one page. */
export async function listDatasetItems(pool: pg.Pool, filter: ItemListFilter, page: number, limit: number) {
  const { list, count } = itemListQueries(filter, limit, (page - 1) * limit);
  const [rows, n] = await Promise.all([
    pool.query<DatasetItemRow>(list.text, list.values),
    pool.query<{ n: number }>(count.text, count.values),
  ]);
  return { data: rows.rows.map(mapDatasetItem), meta: pageMeta(page, limit, n.rows[0]!.n) };
}

/** The runs of a dataset, newest first, one page, with their count. */
export async function listRuns(
  pool: pg.Pool,
  projectId: string,
  datasetId: string,
  limit: number,
  offset: number,
) {
  const [runs, count] = await Promise.all([
    pool.query<RunRow>(
      'SELECT * FROM dataset_runs WHERE project_id = $1 AND dataset_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4',
      [projectId, datasetId, limit, offset],
    ),
    pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM dataset_runs WHERE project_id = $1 AND dataset_id = $2',
      [projectId, datasetId],
    ),
  ]);
  return { rows: runs.rows, total: count.rows[0]!.n };
}
