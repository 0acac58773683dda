/** Score configs in PostgreSQL: fixed statements, every one scoped by the caller's project. */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { projectRecords } from '../../platform/datastores/project-page.ts';
import { type CreateConfigRequest, categoriesOf, type ScoreConfig } from './configs.ts';

interface ConfigRow {
  id: string;
  project_id: string;
  name: string;
  data_type: ScoreConfig['dataType'];
  is_archived: boolean;
  min_value: number | null;
  max_value: number | null;
  categories: ScoreConfig['categories'];
  description: string | null;
  created_at: Date;
  updated_at: Date;
}

const toConfig = (r: ConfigRow): ScoreConfig => ({
  id: r.id,
  projectId: r.project_id,
  name: r.name,
  dataType: r.data_type,
  isArchived: r.is_archived,
  minValue: r.min_value,
  maxValue: r.max_value,
  categories: r.categories,
  description: r.description,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

export async function createConfig(pool: pg.Pool, projectId: string, req: CreateConfigRequest) {
  const { rows } = await pool.query<ConfigRow>(
    `INSERT INTO score_configs (id, project_id, name, data_type, min_value, max_value, categories, description)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8) RETURNING *`,
    [
      randomUUID(),
      projectId,
      req.name,
      req.dataType,
      req.minValue ?? null,
      req.maxValue ?? null,
      JSON.stringify(categoriesOf(req)),
      req.description ?? null,
    ],
  );
  return toConfig(rows[0]!);
}

/** Writes a config's updatable fields; undefined when the project has no such config. */
export async function updateConfig(pool: pg.Pool, c: ScoreConfig): Promise<ScoreConfig | undefined> {
  const { rows } = await pool.query<ConfigRow>(
    `UPDATE score_configs SET name = $3, is_archived = $4, min_value = $5, max_value = $6,
       categories = $7::jsonb, description = $8, updated_at = now()
     WHERE project_id = $1 AND id = $2 RETURNING *`,
    [
      c.projectId,
      c.id,
      c.name,
      c.isArchived,
      c.minValue,
      c.maxValue,
      JSON.stringify(c.categories),
      c.description,
    ],
  );
  return rows[0] && toConfig(rows[0]);
}

const configs = projectRecords('score_configs', 'created_at DESC, id', toConfig);
export const findConfig = configs.find;

export const listConfigs = configs.page;
