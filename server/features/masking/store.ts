/** Masking rules in PostgreSQL, every statement scoped by the caller's project. */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { deleteProjectRowReturning, projectRecords } from '../../platform/datastores/project-page.ts';
import type { CreateMaskingRuleRequest, MaskingRule, UpdateMaskingRuleRequest } from './rules.ts';

interface RuleRow {
  id: string;
  project_id: string;
  name: string;
  detector: MaskingRule['detector'];
  pattern: string | null;
  replacement: string | null;
  enabled: boolean;
  dataset_items: boolean;
  created_at: Date;
  updated_at: Date;
}

const toRule = (r: RuleRow): MaskingRule => ({
  id: r.id,
  projectId: r.project_id,
  name: r.name,
  detector: r.detector,
  pattern: r.pattern,
  replacement: r.replacement,
  enabled: r.enabled,
  datasetItems: r.dataset_items,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

const rules = projectRecords('masking_rules', 'created_at, id', toRule);
export const findMaskingRule = rules.find;

export const listMaskingRules = rules.page;

/** The project's enabled rules, in the order they apply (oldest first). */
export async function enabledMaskingRules(pool: pg.Pool, projectId: string): Promise<MaskingRule[]> {
  const { rows } = await pool.query<RuleRow>(
    'SELECT * FROM masking_rules WHERE project_id = $1 AND enabled ORDER BY created_at, id',
    [projectId],
  );
  return rows.map(toRule);
}

/** Creates a rule; undefined when the project already has one of that name. */
export async function createMaskingRule(
  pool: pg.Pool,
  projectId: string,
  req: CreateMaskingRuleRequest,
): Promise<MaskingRule | undefined> {
  const { rows } = await pool.query<RuleRow>(
    `INSERT INTO masking_rules (id, project_id, name, detector, pattern, replacement, enabled, dataset_items)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (project_id, name) DO NOTHING RETURNING *`,
    [
      randomUUID(),
      projectId,
      req.name,
      req.detector,
      req.pattern ?? null,
      req.replacement ?? null,
      req.enabled,
      req.datasetItems,
    ],
  );
  return rows[0] && toRule(rows[0]);
}

/** Changes the fields sent; the rule as it is now, or undefined when the project has none of that id. */
export async function updateMaskingRule(
  pool: pg.Pool,
  projectId: string,
  id: string,
  req: UpdateMaskingRuleRequest,
): Promise<MaskingRule | undefined> {
  const { rows } = await pool.query<RuleRow>(
    `UPDATE masking_rules SET
       name = COALESCE($3, name),
       pattern = COALESCE($4, pattern),
       replacement = CASE WHEN $5::boolean THEN $6 ELSE replacement END,
       enabled = COALESCE($7, enabled),
       dataset_items = COALESCE($8, dataset_items),
       updated_at = now()
     WHERE project_id = $1 AND id = $2 RETURNING *`,
    [
      projectId,
      id,
      req.name ?? null,
      req.pattern ?? null,
      req.replacement !== undefined,
      req.replacement ?? null,
      req.enabled ?? null,
      req.datasetItems ?? null,
    ],
  );
  return rows[0] && toRule(rows[0]);
}

/** Deletes the rule; its name when it existed. */
export const deleteMaskingRule = (pool: pg.Pool, projectId: string, id: string) =>
  deleteProjectRowReturning(pool, 'masking_rules', projectId, id, 'name');
