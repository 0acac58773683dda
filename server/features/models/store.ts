/**
 * Model definitions in PostgreSQL (table `models`): built-in ones (`project_id` NULL) and each
 * project's own. Every read and write of a project's definitions is scoped by its project id;
 * built-in ones are written only by loading a price file.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import {
  type CreateModelRequest,
  type ModelDefinition,
  type ModelUnit,
  type PriceFileEntry,
  type PricingTier,
  requestedTiers,
} from './definitions.ts';

interface ModelRow {
  id: string;
  project_id: string | null;
  model_name: string;
  match_pattern: string;
  start_date: Date | null;
  unit: string | null;
  tokenizer_id: string | null;
  tokenizer_config: unknown;
  pricing_tiers: PricingTier[];
  created_at: Date;
}

const COLUMNS =
  'id, project_id, model_name, match_pattern, start_date, unit, tokenizer_id, tokenizer_config, pricing_tiers, created_at';

function fromRow(r: ModelRow): ModelDefinition {
  return {
    id: r.id,
    projectId: r.project_id,
    modelName: r.model_name,
    matchPattern: r.match_pattern,
    startDate: r.start_date ? r.start_date.toISOString() : null,
    unit: r.unit as ModelUnit | null,
    tokenizerId: r.tokenizer_id,
    tokenizerConfig: r.tokenizer_config,
    pricingTiers: r.pricing_tiers,
    createdAt: r.created_at.toISOString(),
  };
}

const VISIBLE = '(project_id = $1 OR project_id IS NULL)';

/** Every definition a project sees: its own and the built-in ones. */
export async function visibleModels(pool: pg.Pool, projectId: string): Promise<ModelDefinition[]> {
  const { rows } = await pool.query<ModelRow>(`SELECT ${COLUMNS} FROM models WHERE ${VISIBLE}`, [projectId]);
  return rows.map(fromRow);
}

/** A page in the reference's order: name, unit, newest start date first. */
export async function listModels(
  pool: pg.Pool,
  projectId: string,
  limit: number,
  offset: number,
): Promise<{ items: ModelDefinition[]; total: number }> {
  const [list, count] = await Promise.all([
    pool.query<ModelRow>(
      `SELECT ${COLUMNS} FROM models WHERE ${VISIBLE}
       ORDER BY model_name ASC, unit ASC, start_date DESC NULLS LAST, project_id ASC NULLS LAST, id ASC
       LIMIT $2 OFFSET $3`,
      [projectId, limit, offset],
    ),
    pool.query<{ n: string }>(`SELECT count(*) AS n FROM models WHERE ${VISIBLE}`, [projectId]),
  ]);
  return { items: list.rows.map(fromRow), total: Number(count.rows[0]!.n) };
}

export async function getModel(
  pool: pg.Pool,
  projectId: string,
  id: string,
): Promise<ModelDefinition | null> {
  const { rows } = await pool.query<ModelRow>(`SELECT ${COLUMNS} FROM models WHERE id = $2 AND ${VISIBLE}`, [
    projectId,
    id,
  ]);
  return rows[0] ? fromRow(rows[0]) : null;
}

/** The definitions among `ids` the project sees (its own or built-in), by id. */
export async function modelsById(
  pool: pg.Pool,
  projectId: string,
  ids: readonly string[],
): Promise<Map<string, ModelDefinition>> {
  if (ids.length === 0) return new Map();
  const { rows } = await pool.query<ModelRow>(
    `SELECT ${COLUMNS} FROM models WHERE id = ANY($2::text[]) AND ${VISIBLE}`,
    [projectId, ids],
  );
  return new Map(rows.map((r) => [r.id, fromRow(r)]));
}

export class DuplicateModelName extends Error {
  override name = 'DuplicateModelName';
}

/** The columns a request sets, after id and project: name, pattern, start, unit, tokenizer, tiers. */
function requestValues(req: CreateModelRequest): unknown[] {
  const tiers: PricingTier[] = requestedTiers(req).map((t) => ({ ...t, id: randomUUID() }));
  return [
    req.modelName,
    req.matchPattern,
    req.startDate ?? null,
    req.unit ?? null,
    req.tokenizerId ?? null,
    req.tokenizerConfig === undefined ? null : JSON.stringify(req.tokenizerConfig),
    JSON.stringify(tiers),
  ];
}

async function writeModel<T>(req: CreateModelRequest, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if ((err as { code?: string }).code === '23505')
      throw new DuplicateModelName(`Model name '${req.modelName}' already exists in project`);
    throw err;
  }
}

/** Creates a project's own definition; a second one of the same name in the project is refused. */
export function createModel(
  pool: pg.Pool,
  projectId: string,
  req: CreateModelRequest,
): Promise<ModelDefinition> {
  return writeModel(req, async () => {
    const { rows } = await pool.query<ModelRow>(
      `INSERT INTO models (id, project_id, model_name, match_pattern, start_date, unit, tokenizer_id, tokenizer_config, pricing_tiers)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${COLUMNS}`,
      [randomUUID(), projectId, ...requestValues(req)],
    );
    return fromRow(rows[0]!);
  });
}

/** Replaces one of a project's own definitions; null when the project has none with this id. */
export function updateModel(
  pool: pg.Pool,
  projectId: string,
  id: string,
  req: CreateModelRequest,
): Promise<ModelDefinition | null> {
  return writeModel(req, async () => {
    const { rows } = await pool.query<ModelRow>(
      `UPDATE models SET model_name = $3, match_pattern = $4, start_date = $5, unit = $6, tokenizer_id = $7,
         tokenizer_config = $8, pricing_tiers = $9, updated_at = now()
       WHERE id = $1 AND project_id = $2 RETURNING ${COLUMNS}`,
      [id, projectId, ...requestValues(req)],
    );
    return rows[0] ? fromRow(rows[0]) : null;
  });
}

/** Deletes a project's own definition; false when the project has none with this id. */
export async function deleteModel(pool: pg.Pool, projectId: string, id: string): Promise<boolean> {
  const { rowCount } = await pool.query('DELETE FROM models WHERE id = $1 AND project_id = $2', [
    id,
    projectId,
  ]);
  return (rowCount ?? 0) > 0;
}

export interface LoadResult {
  inserted: number;
  updated: number;
  unchanged: number;
}

/**
 * Loads built-in definitions from a price file: new ids are inserted, and a stored one is replaced
 * only by an entry whose prices were read at the same date or later, so an older file (a web
 * process of an older release starting) never undoes a newer load.
 */
export async function loadBuiltInModels(pool: pg.Pool, entries: PriceFileEntry[]): Promise<LoadResult> {
  const result: LoadResult = { inserted: 0, updated: 0, unchanged: 0 };
  if (entries.length === 0) return result;
  const { rows } = await pool.query<{ id: string; inserted: boolean }>(
    `INSERT INTO models AS m (id, project_id, model_name, match_pattern, start_date, unit, tokenizer_id,
       tokenizer_config, pricing_tiers, source, source_date)
     SELECT e.id, NULL, e.model_name, e.match_pattern, e.start_date, e.unit, e.tokenizer_id,
       e.tokenizer_config, e.pricing_tiers, e.source, e.source_date
     FROM jsonb_to_recordset($1::jsonb) AS e(id TEXT, model_name TEXT, match_pattern TEXT,
       start_date TIMESTAMPTZ, unit TEXT, tokenizer_id TEXT, tokenizer_config JSONB, pricing_tiers JSONB,
       source TEXT, source_date DATE)
     ON CONFLICT (id) DO UPDATE SET model_name = EXCLUDED.model_name, match_pattern = EXCLUDED.match_pattern,
       start_date = EXCLUDED.start_date, unit = EXCLUDED.unit, tokenizer_id = EXCLUDED.tokenizer_id,
       tokenizer_config = EXCLUDED.tokenizer_config, pricing_tiers = EXCLUDED.pricing_tiers,
       source = EXCLUDED.source, source_date = EXCLUDED.source_date, updated_at = now()
     WHERE m.project_id IS NULL AND (m.source_date IS NULL OR m.source_date <= EXCLUDED.source_date)
       AND (m.pricing_tiers, m.match_pattern, m.source, m.source_date, m.start_date, m.tokenizer_config)
         IS DISTINCT FROM (EXCLUDED.pricing_tiers, EXCLUDED.match_pattern, EXCLUDED.source,
           EXCLUDED.source_date, EXCLUDED.start_date, EXCLUDED.tokenizer_config)
     RETURNING id, (xmax = 0) AS inserted`,
    [
      JSON.stringify(
        entries.map((e) => ({
          id: e.id,
          model_name: e.modelName,
          match_pattern: e.matchPattern,
          start_date: e.startDate,
          unit: e.unit,
          tokenizer_id: e.tokenizerId,
          tokenizer_config: e.tokenizerConfig,
          pricing_tiers: e.pricingTiers,
          source: e.source,
          source_date: e.sourceDate,
        })),
      ),
    ],
  );
  result.inserted = rows.filter((r) => r.inserted).length;
  result.updated = rows.length - result.inserted;
  result.unchanged = entries.length - rows.length;
  return result;
}
