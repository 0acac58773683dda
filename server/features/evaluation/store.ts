/** Evaluators and evaluation rules in PostgreSQL, every statement scoped by the caller's project. */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { deleteProjectRow, projectRecords } from '../../platform/datastores/project-page.ts';
import { inTransaction } from '../../platform/datastores/transaction.ts';
import type { FilterCondition } from '../reads/filters.ts';
import { MANAGED_TEMPLATES, managedId } from './managed-templates.ts';
import type { OutputDefinition } from './outputs.ts';
import { type MappingEntry, promptVariables, type Target } from './rules.ts';

export interface ModelConfig {
  provider: string;
  model: string;
}

export interface Evaluator {
  id: string;
  name: string;
  version: number;
  source: 'project' | 'managed';
  prompt: string;
  outputDefinition: OutputDefinition;
  modelConfig: ModelConfig | null;
  variables: string[];
  mapping: MappingEntry[] | null;
  evaluationRuleCount: number;
  createdAt: string;
  updatedAt: string;
}

interface EvaluatorRow {
  id: string;
  name: string;
  version: number;
  prompt: string;
  output_definition: OutputDefinition;
  model_config: ModelConfig | null;
  variables: string[];
  mapping: MappingEntry[] | null;
  rule_count: number;
  created_at: Date;
  updated_at: Date;
}

const toEvaluator = (r: EvaluatorRow): Evaluator => ({
  id: r.id,
  name: r.name,
  version: r.version,
  source: 'project',
  prompt: r.prompt,
  outputDefinition: r.output_definition,
  modelConfig: r.model_config,
  variables: r.variables,
  mapping: r.mapping,
  evaluationRuleCount: r.rule_count,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

const EPOCH = new Date(0).toISOString();
const managedEvaluators = (): Evaluator[] =>
  MANAGED_TEMPLATES.map((t) => ({
    id: managedId(t.name),
    name: t.name,
    version: 1,
    source: 'managed',
    prompt: t.prompt,
    outputDefinition: t.outputDefinition,
    modelConfig: null,
    variables: promptVariables(t.prompt),
    mapping: null,
    evaluationRuleCount: 0,
    createdAt: EPOCH,
    updatedAt: EPOCH,
  }));

const LATEST = `
SELECT DISTINCT ON (e.name) e.*,
  (SELECT count(*)::int FROM evaluation_rule_evaluators a JOIN evaluation_rules r ON r.id = a.rule_id
    WHERE r.project_id = e.project_id AND a.evaluator_id = e.id) AS rule_count
FROM evaluators e WHERE e.project_id = $1`;

/** The latest version of every evaluator of the project, then the managed templates it has not shadowed. */
export async function listEvaluators(pool: pg.Pool, projectId: string): Promise<Evaluator[]> {
  const { rows } = await pool.query<EvaluatorRow>(`${LATEST} ORDER BY e.name, e.version DESC`, [projectId]);
  const own = rows
    .map(toEvaluator)
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || a.name.localeCompare(b.name));
  const names = new Set(own.map((e) => e.name));
  return [...own, ...managedEvaluators().filter((m) => !names.has(m.name))];
}

export async function findEvaluator(
  pool: pg.Pool,
  projectId: string,
  id: string,
): Promise<Evaluator | undefined> {
  const managed = managedEvaluators().find((m) => m.id === id);
  if (managed) return managed;
  const { rows } = await pool.query<EvaluatorRow>(`${LATEST} AND e.id = $2 ORDER BY e.name, e.version DESC`, [
    projectId,
    id,
  ]);
  return rows[0] && toEvaluator(rows[0]);
}

/** The latest version of the family named `name`: the project's own first, then a managed template. */
export async function findEvaluatorByName(pool: pg.Pool, projectId: string, name: string) {
  const { rows } = await pool.query<EvaluatorRow>(
    `${LATEST} AND e.name = $2 ORDER BY e.name, e.version DESC`,
    [projectId, name],
  );
  return rows[0] ? toEvaluator(rows[0]) : managedEvaluators().find((m) => m.name === name);
}

/** Every version of the project's evaluator `id`, newest first (a managed template has its one). */
export async function listEvaluatorVersions(
  pool: pg.Pool,
  projectId: string,
  id: string,
): Promise<Evaluator[]> {
  const managed = managedEvaluators().find((m) => m.id === id);
  if (managed) return [managed];
  const { rows } = await pool.query<EvaluatorRow>(
    `SELECT e.*, 0 AS rule_count FROM evaluators e WHERE e.project_id = $1 AND e.id = $2 ORDER BY e.version DESC`,
    [projectId, id],
  );
  return rows.map(toEvaluator);
}

export interface NewEvaluator {
  name: string;
  prompt: string;
  outputDefinition: OutputDefinition;
  modelConfig: ModelConfig | null;
  mapping: MappingEntry[] | null;
}

/** Adds the next version of the family (version 1 and a new id for a new name); undefined on a concurrent version. */
export async function createEvaluatorVersion(
  pool: pg.Pool,
  projectId: string,
  e: NewEvaluator,
): Promise<Evaluator | undefined> {
  const { rows: current } = await pool.query<{ id: string; version: number }>(
    'SELECT id, version FROM evaluators WHERE project_id = $1 AND name = $2 ORDER BY version DESC LIMIT 1',
    [projectId, e.name],
  );
  try {
    await pool.query(
      `INSERT INTO evaluators (id, project_id, name, version, prompt, output_definition, model_config, variables, mapping)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9::jsonb)`,
      [
        current[0]?.id ?? randomUUID(),
        projectId,
        e.name,
        (current[0]?.version ?? 0) + 1,
        e.prompt,
        JSON.stringify(e.outputDefinition),
        e.modelConfig && JSON.stringify(e.modelConfig),
        promptVariables(e.prompt),
        e.mapping && JSON.stringify(e.mapping),
      ],
    );
  } catch (err) {
    if ((err as { code?: string }).code === '23505') return undefined;
    throw err;
  }
  return findEvaluatorByName(pool, projectId, e.name);
}

/** Deletes every version and every rule assignment of the family; false when there was none. */
export async function deleteEvaluator(pool: pg.Pool, projectId: string, id: string): Promise<boolean> {
  const { rowCount } = await pool.query('DELETE FROM evaluators WHERE project_id = $1 AND id = $2', [
    projectId,
    id,
  ]);
  if (!rowCount) return false;
  await pool.query(
    `DELETE FROM evaluation_rule_evaluators a USING evaluation_rules r
     WHERE a.rule_id = r.id AND r.project_id = $1 AND a.evaluator_id = $2`,
    [projectId, id],
  );
  return true;
}

export interface Assignment {
  evaluatorId: string;
  mapping: MappingEntry[] | null;
}

export interface Rule {
  id: string;
  projectId: string;
  name: string;
  target: Target;
  enabled: boolean;
  sampling: number;
  /** Milliseconds after a row arrives before the rule judges it (scan.ts). */
  delay: number;
  filter: FilterCondition[];
  pausedReason: string | null;
  pausedMessage: string | null;
  assignments: Assignment[];
  createdAt: string;
  updatedAt: string;
}

/** A row of evaluation_rules with its assignments; the columns named like the rule's fields hold the same. */
interface RuleRow extends Pick<Rule, 'id' | 'name' | 'target' | 'enabled' | 'sampling' | 'delay' | 'filter'> {
  project_id: string;
  paused_reason: string | null;
  paused_message: string | null;
  assignments: Assignment[] | null;
  created_at: Date;
  updated_at: Date;
}

const RULE_SELECT = `
SELECT r.*, (SELECT json_agg(json_build_object('evaluatorId', a.evaluator_id, 'mapping', a.mapping) ORDER BY a.position)
  FROM evaluation_rule_evaluators a WHERE a.rule_id = r.id) AS assignments
FROM evaluation_rules r`;
const RULES = { table: 'evaluation_rules', select: RULE_SELECT, alias: 'r' };
const RULES_ORDER = 'r.created_at DESC, r.id';

const toRule = (r: RuleRow): Rule => ({
  id: r.id,
  projectId: r.project_id,
  name: r.name,
  target: r.target,
  enabled: r.enabled,
  sampling: r.sampling,
  delay: r.delay,
  filter: r.filter,
  pausedReason: r.paused_reason,
  pausedMessage: r.paused_message,
  assignments: r.assignments ?? [],
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

const rules = projectRecords(RULES, RULES_ORDER, toRule);
export const findRule = rules.find;

export const listRules = rules.page;

/** Every enabled, unpaused rule of `target` of every project (the worker's scan). */
export async function activeRules(pool: pg.Pool, target: Target): Promise<(Rule & { scanCursor: string })[]> {
  // The cursor as exact text (microseconds, which a Date would drop): the scan's compare-and-set.
  const { rows } = await pool.query<RuleRow & { scan_cursor_text: string }>(
    `SELECT q.*, to_char(q.scan_cursor AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS scan_cursor_text
     FROM (${RULE_SELECT} WHERE r.enabled AND r.paused_reason IS NULL AND r.target = $1) q ORDER BY q.created_at`,
    [target],
  );
  return rows.map((r) => ({ ...toRule(r), scanCursor: r.scan_cursor_text }));
}

/**
 * Moves a rule's scan cursor from where this pass read it to `next`; a cursor moved meanwhile
 * (rewound by the propagation) is left alone, so the next pass reads from the rewound point.
 */
export async function advanceScanCursor(
  pool: pg.Pool,
  ruleId: string,
  read: string,
  next: string,
): Promise<void> {
  await pool.query(
    'UPDATE evaluation_rules SET scan_cursor = $3::timestamptz WHERE id = $1 AND scan_cursor = $2::timestamptz',
    [ruleId, read, next],
  );
}

/**
 * The dual-write propagation copied rows into the events tables whose `created_at` (kept from
 * staging) may be older than an observation rule's cursor: each project's rules scan again from
 * just before its oldest such row. Executions are unique per judged object, so a row read twice
 * is enqueued once.
 */
export async function rewindObservationScans(
  pool: pg.Pool,
  since: readonly { projectId: string; createdAt: string }[],
): Promise<void> {
  if (since.length === 0) return;
  await pool.query(
    `UPDATE evaluation_rules r SET scan_cursor = LEAST(r.scan_cursor, v.since - interval '1 microsecond')
     FROM unnest($1::text[], $2::timestamptz[]) AS v(project_id, since)
     WHERE r.project_id = v.project_id AND r.target = 'observation'`,
    [since.map((s) => s.projectId), since.map((s) => s.createdAt)],
  );
}

/** Enabled trace-level (Legacy) rules, paused or not: each stops at the cutover to events_only. */
export async function activeLegacyRules(
  pool: pg.Pool,
  projectIds?: readonly string[],
): Promise<{ projectId: string; ruleId: string; name: string }[]> {
  const { rows } = await pool.query<{ project_id: string; id: string; name: string }>(
    `SELECT project_id, id, name FROM evaluation_rules
     WHERE enabled AND target = 'trace' AND ($1::text[] IS NULL OR project_id = ANY($1))
     ORDER BY project_id, name`,
    [projectIds ?? null],
  );
  return rows.map((r) => ({ projectId: r.project_id, ruleId: r.id, name: r.name }));
}

export async function countActiveRules(pool: pg.Pool, projectId: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM evaluation_rules WHERE project_id = $1 AND enabled AND paused_reason IS NULL',
    [projectId],
  );
  return rows[0]!.n;
}

export type RuleFields = Omit<Rule, 'id' | 'projectId' | 'createdAt' | 'updatedAt'>;

/** Inserts or replaces a rule with its assignments in one transaction; false on a name conflict. */
export async function saveRule(
  pool: pg.Pool,
  projectId: string,
  id: string,
  f: RuleFields,
): Promise<boolean> {
  try {
    await inTransaction(pool, async (client) => {
      await client.query(
        `INSERT INTO evaluation_rules (id, project_id, name, target, enabled, sampling, filter, paused_reason, paused_message, delay)
         VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10)
         ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, target = EXCLUDED.target, enabled = EXCLUDED.enabled,
           sampling = EXCLUDED.sampling, delay = EXCLUDED.delay, filter = EXCLUDED.filter, paused_reason = EXCLUDED.paused_reason,
           paused_message = EXCLUDED.paused_message, updated_at = now(),
           scan_cursor = CASE WHEN evaluation_rules.enabled THEN evaluation_rules.scan_cursor ELSE now() END`,
        [
          id,
          projectId,
          f.name,
          f.target,
          f.enabled,
          f.sampling,
          JSON.stringify(f.filter),
          f.pausedReason,
          f.pausedMessage,
          f.delay,
        ],
      );
      await client.query('DELETE FROM evaluation_rule_evaluators WHERE rule_id = $1', [id]);
      for (const [position, a] of f.assignments.entries()) {
        await client.query(
          'INSERT INTO evaluation_rule_evaluators (rule_id, position, evaluator_id, mapping) VALUES ($1, $2, $3, $4::jsonb)',
          [id, position, a.evaluatorId, a.mapping && JSON.stringify(a.mapping)],
        );
      }
    });
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === '23505') return false;
    throw err;
  }
}

export function deleteRule(pool: pg.Pool, projectId: string, id: string): Promise<boolean> {
  return deleteProjectRow(pool, 'evaluation_rules', projectId, id);
}

export const CONNECTION_DELETED = 'LLM_CONNECTION_DELETED';

/** Pauses the project's rules that run an evaluator on `provider` (its connection was deleted). */
export async function pauseRulesOfProvider(
  pool: pg.Pool,
  projectId: string,
  provider: string,
): Promise<number> {
  const { rowCount } = await pool.query(
    `UPDATE evaluation_rules r SET paused_reason = $3, paused_message = $4, updated_at = now()
     WHERE r.project_id = $1 AND r.paused_reason IS NULL AND EXISTS (
       SELECT 1 FROM evaluation_rule_evaluators a JOIN evaluators e ON e.project_id = r.project_id AND e.id = a.evaluator_id
       WHERE a.rule_id = r.id AND e.model_config->>'provider' = $2)`,
    [
      projectId,
      provider,
      CONNECTION_DELETED,
      `The LLM connection "${provider}" used by this rule's evaluator was deleted. Add a connection for it and enable the rule again.`,
    ],
  );
  return rowCount ?? 0;
}
