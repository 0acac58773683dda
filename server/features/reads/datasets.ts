/**
 * Datasets and dataset items live in PostgreSQL. Statements are fixed text with `$n` parameters;
 * every one is scoped by the caller's project. Row mappers give the public API's shapes.
 */

export interface DatasetRow {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  metadata: unknown;
  input_schema: unknown;
  expected_output_schema: unknown;
  created_at: Date;
  updated_at: Date;
}

export interface DatasetItemRow {
  id: string;
  project_id: string;
  dataset_id: string;
  dataset_name: string;
  status: string;
  input: unknown;
  expected_output: unknown;
  metadata: unknown;
  source_trace_id: string | null;
  source_observation_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const iso = (d: Date | string) => (d instanceof Date ? d.toISOString() : new Date(d).toISOString());

export function mapDataset(r: DatasetRow) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    metadata: r.metadata ?? null,
    inputSchema: r.input_schema ?? null,
    expectedOutputSchema: r.expected_output_schema ?? null,
    projectId: r.project_id,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

export function mapDatasetItem(r: DatasetItemRow) {
  return {
    id: r.id,
    status: r.status,
    input: r.input ?? null,
    expectedOutput: r.expected_output ?? null,
    metadata: r.metadata ?? null,
    sourceTraceId: r.source_trace_id,
    sourceObservationId: r.source_observation_id,
    datasetId: r.dataset_id,
    datasetName: r.dataset_name,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    // Media references stay inline in input and expected output, as the SDKs wrote them; the SDKs
    // resolve them through the media API. No separate list is kept.
    mediaReferences: [],
  };
}

/**
 * JSON for a JSONB parameter. Undefined and null become SQL NULL, which the upsert keeps: the SDKs
 * send `null` for every field the caller left out, so null means "not given", like absent.
 */
export const jsonParam = (v: unknown): string | null => (v == null ? null : JSON.stringify(v));

export const SQL = {
  upsertDataset: `
INSERT INTO datasets (id, project_id, name, description, metadata, input_schema, expected_output_schema)
VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7::jsonb)
ON CONFLICT (project_id, name) DO UPDATE SET
  description = COALESCE(EXCLUDED.description, datasets.description),
  metadata = COALESCE(EXCLUDED.metadata, datasets.metadata),
  input_schema = COALESCE(EXCLUDED.input_schema, datasets.input_schema),
  expected_output_schema = COALESCE(EXCLUDED.expected_output_schema, datasets.expected_output_schema),
  updated_at = now()
RETURNING *`,
  datasetByName: 'SELECT * FROM datasets WHERE project_id = $1 AND name = $2',
  listDatasets:
    'SELECT * FROM datasets WHERE project_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3',
  countDatasets: 'SELECT count(*)::int AS n FROM datasets WHERE project_id = $1',
  /**
   * Upsert on the item id. The WHERE makes a retry with the same id update the item only inside
   * its own dataset: an id that exists in another dataset returns no row (items cannot move).
   */
  upsertItem: `
INSERT INTO dataset_items (id, project_id, dataset_id, status, input, expected_output, metadata, source_trace_id, source_observation_id)
VALUES ($1, $2, $3, COALESCE($4, 'ACTIVE'), $5::jsonb, $6::jsonb, $7::jsonb, $8, $9)
ON CONFLICT (id, project_id) DO UPDATE SET
  status = COALESCE($4, dataset_items.status),
  input = COALESCE(EXCLUDED.input, dataset_items.input),
  expected_output = COALESCE(EXCLUDED.expected_output, dataset_items.expected_output),
  metadata = COALESCE(EXCLUDED.metadata, dataset_items.metadata),
  source_trace_id = COALESCE(EXCLUDED.source_trace_id, dataset_items.source_trace_id),
  source_observation_id = COALESCE(EXCLUDED.source_observation_id, dataset_items.source_observation_id),
  updated_at = now()
WHERE dataset_items.dataset_id = EXCLUDED.dataset_id
RETURNING id`,
  itemById: `
SELECT i.*, d.name AS dataset_name FROM dataset_items i
JOIN datasets d ON d.id = i.dataset_id AND d.project_id = i.project_id
WHERE i.project_id = $1 AND i.id = $2`,
  deleteItem: 'DELETE FROM dataset_items WHERE project_id = $1 AND id = $2 RETURNING id',
};

export interface ItemListFilter {
  projectId: string;
  datasetId?: string | undefined;
  sourceTraceId?: string | undefined;
  sourceObservationId?: string | undefined;
  /** The items as they were at this time (ISO 8601), from their recorded states. */
  version?: string | undefined;
}

/**
 * Each item's last state at or before `$2`, shaped like a `dataset_items` row (created: its first
 * state; updated: that last one), with `deleted` for items gone by then.
 */
const ITEMS_AS_OF = `(
  SELECT DISTINCT ON (e.item_id) e.item_id AS id, e.project_id, e.dataset_id, e.status, e.input,
    e.expected_output, e.metadata, e.source_trace_id, e.source_observation_id, e.deleted,
    min(e.created_at) OVER (PARTITION BY e.item_id) AS created_at, e.created_at AS updated_at
  FROM dataset_item_events e WHERE e.project_id = $1 AND e.created_at <= $2::timestamptz
  ORDER BY e.item_id, e.created_at DESC, e.seq DESC)`;

/** The item list and its count share one WHERE built from the filters that are present. */
export function itemListQueries(f: ItemListFilter, limit: number, offset: number) {
  const values: unknown[] = [f.projectId];
  const where = ['i.project_id = $1'];
  const add = (cond: string, v: unknown) => {
    values.push(v);
    where.push(cond.replace('?', `$${values.length}`));
  };
  if (f.version !== undefined) {
    values.push(f.version);
    where.push('NOT i.deleted');
  }
  if (f.datasetId !== undefined) add('i.dataset_id = ?', f.datasetId);
  if (f.sourceTraceId !== undefined) add('i.source_trace_id = ?', f.sourceTraceId);
  if (f.sourceObservationId !== undefined) add('i.source_observation_id = ?', f.sourceObservationId);
  const items = f.version === undefined ? 'dataset_items' : ITEMS_AS_OF;
  const from = `FROM ${items} i JOIN datasets d ON d.id = i.dataset_id AND d.project_id = i.project_id WHERE ${where.join(' AND ')}`;
  return {
    list: {
      text: `SELECT i.*, d.name AS dataset_name ${from} ORDER BY i.created_at DESC, i.id DESC LIMIT $${values.length + 1} OFFSET $${values.length + 2}`,
      values: [...values, limit, offset],
    },
    count: { text: `SELECT count(*)::int AS n ${from}`, values },
  };
}
