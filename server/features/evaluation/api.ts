/**
 * The unstable evaluators and evaluation-rules API as the reference defines it: request shapes,
 * the checks in its order (shape, evaluator, mapping, filter, preflight, limits) and the
 * response shapes. Storage is store.ts; the HTTP routes are web/evaluations/public.ts.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { z } from 'zod';
import { patchedFields } from '../../kernel/patches.ts';
import { findConnection } from '../llm-connections/connection-store.ts';
import { PublicApiError } from './errors.ts';
import { outputDefinition, outputProblem } from './outputs.ts';
import {
  checkMapping,
  checkRuleFilters,
  isLegacyTarget,
  type MappingEntry,
  mappingEntry,
  promptVariables,
  ruleFilter,
  TARGETS,
} from './rules.ts';
import {
  countActiveRules,
  createEvaluatorVersion,
  type Evaluator,
  findEvaluator,
  findEvaluatorByName,
  type Rule,
  type RuleFields,
  saveRule,
} from './store.ts';

/** The reference's cap on effectively active rules per project. */
export const MAX_ACTIVE_RULES = 500;
/**
 * A rule's `delay` in milliseconds: the reference's job configuration default (10 s,
 * DEFAULT_TRACE_JOB_DELAY) and range (a non-negative integer stored as a 32-bit Int).
 */
const DEFAULT_RULE_DELAY_MS = 10_000;
const MAX_RULE_DELAY_MS = 2_147_483_647;

const modelConfig = z.object({ provider: z.string().min(1), model: z.string().min(1) });
export const createEvaluatorRequest = z.object({
  name: z.string().trim().min(1).max(200),
  type: z.enum(['llm_as_judge', 'code']).optional(),
  prompt: z.string().min(1).optional(),
  outputDefinition: outputDefinition.optional(),
  modelConfig: modelConfig.nullish(),
  mapping: z.array(mappingEntry).optional(),
  sourceCode: z.string().optional(),
});

const evaluatorReference = z.object({
  name: z.string().min(1),
  type: z.enum(['llm_as_judge', 'code']).optional(),
});
const assignmentRequest = z.object({
  evaluator: evaluatorReference,
  mapping: z.array(mappingEntry).optional(),
});
const ruleCommon = {
  name: z.string().trim().min(1).max(200),
  target: z.enum(TARGETS),
  enabled: z.boolean(),
  sampling: z.number().gt(0).lte(1).optional(),
  delay: z.number().int().min(0).max(MAX_RULE_DELAY_MS).optional(),
  filter: z.array(ruleFilter).optional(),
};
export const createRuleRequest = z.object({
  ...ruleCommon,
  evaluator: evaluatorReference.optional(),
  mapping: z.array(mappingEntry).optional(),
  evaluators: z.array(assignmentRequest).min(1).optional(),
});
export const updateRuleRequest = z.object({
  name: ruleCommon.name.optional(),
  target: ruleCommon.target.optional(),
  enabled: ruleCommon.enabled.optional(),
  sampling: ruleCommon.sampling,
  delay: ruleCommon.delay,
  filter: ruleCommon.filter,
  evaluator: z.object({ name: z.string().min(1) }).optional(),
  mapping: z.array(mappingEntry).optional(),
  evaluators: z.array(assignmentRequest).min(1).optional(),
});

const noCode = (): never => {
  throw new PublicApiError('unprocessable_content', 'code evaluators are not supported by this service');
};

/** The evaluator can run now: its model names a connection of the project that offers the model. */
export async function preflight(pool: pg.Pool, projectId: string, e: Evaluator): Promise<void> {
  const details = {
    evaluatorName: e.name,
    provider: e.modelConfig?.provider ?? null,
    model: e.modelConfig?.model ?? null,
  };
  if (!e.modelConfig)
    throw new PublicApiError(
      'evaluator_preflight_failed',
      `No valid LLM model found for evaluator "${e.name}". No default model configured for project ${projectId}; give the evaluator a modelConfig`,
      details,
    );
  const c = await findConnection(pool, projectId, e.modelConfig.provider);
  if (!c)
    throw new PublicApiError(
      'evaluator_preflight_failed',
      `No LLM connection for provider "${e.modelConfig.provider}" in project ${projectId} (evaluator "${e.name}")`,
      details,
    );
  if (!c.withDefaultModels && !c.customModels.includes(e.modelConfig.model))
    throw new PublicApiError(
      'evaluator_preflight_failed',
      `Model "${e.modelConfig.model}" is not offered by the connection "${c.provider}" (custom models: ${c.customModels.join(', ') || 'none'})`,
      details,
    );
}

export async function createEvaluator(
  pool: pg.Pool,
  projectId: string,
  req: z.infer<typeof createEvaluatorRequest>,
) {
  if (req.type === 'code') noCode();
  if (req.prompt === undefined || req.outputDefinition === undefined)
    throw new PublicApiError(
      'invalid_body',
      'prompt and outputDefinition are required for llm_as_judge evaluators',
      {
        field: req.prompt === undefined ? 'prompt' : 'outputDefinition',
      },
    );
  const problem = outputProblem(req.outputDefinition);
  if (problem) throw new PublicApiError('invalid_body', problem, { field: 'outputDefinition' });
  // A default mapping is not tied to a rule's target: every source is allowed.
  if (req.mapping) checkMapping(req.mapping, promptVariables(req.prompt), 'experiment');
  const draft: Evaluator = {
    id: '',
    name: req.name,
    version: 0,
    source: 'project',
    prompt: req.prompt,
    outputDefinition: req.outputDefinition,
    modelConfig: req.modelConfig ?? null,
    variables: promptVariables(req.prompt),
    mapping: req.mapping ?? null,
    evaluationRuleCount: 0,
    createdAt: '',
    updatedAt: '',
  };
  await preflight(pool, projectId, draft);
  const created = await createEvaluatorVersion(pool, projectId, {
    name: req.name,
    prompt: req.prompt,
    outputDefinition: req.outputDefinition,
    modelConfig: req.modelConfig ?? null,
    mapping: req.mapping ?? null,
  });
  if (!created)
    throw new PublicApiError('conflict', `Evaluator "${req.name}" changed during creation; retry`);
  return created;
}

export function publicEvaluator(e: Evaluator) {
  return {
    id: e.id,
    name: e.name,
    version: e.version,
    type: 'llm_as_judge' as const,
    variables: e.variables,
    mapping: e.mapping,
    evaluationRuleCount: e.evaluationRuleCount,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
    prompt: e.prompt,
    outputDefinition: e.outputDefinition,
    modelConfig: e.modelConfig,
    // Not in the reference's shape: one of our managed templates, which a project copies to use.
    managed: e.source === 'managed',
  };
}

/** A `datasetId` filter names datasets of the project, by id (the reference's check). */
async function checkDatasetIds(pool: pg.Pool, projectId: string, filter: RuleFields['filter']) {
  for (const [i, f] of filter.entries()) {
    if (f.column !== 'datasetId' || !Array.isArray(f.value)) continue;
    const ids = (f.value as unknown[]).map(String);
    const { rows } = await pool.query<{ id: string }>(
      'SELECT id FROM datasets WHERE project_id = $1 AND id = ANY($2)',
      [projectId, ids],
    );
    const found = new Set(rows.map((r) => r.id));
    const invalid = ids.filter((id) => !found.has(id));
    if (invalid.length > 0)
      throw new PublicApiError(
        'invalid_filter_value',
        `Filter column "datasetId" names no dataset of this project: ${invalid.join(', ')}. Use dataset id values from GET /api/public/v2/datasets, not names`,
        { field: `filter[${i}].value`, column: 'datasetId', invalidValues: invalid },
      );
  }
}

interface AssignmentInput {
  name: string;
  type?: 'llm_as_judge' | 'code' | undefined;
  mapping: MappingEntry[] | undefined;
  field: string;
}

/** Resolves, checks and preflights a rule's full configuration; returns the fields to store. */
async function resolveRule(
  pool: pg.Pool,
  projectId: string,
  f: Omit<RuleFields, 'assignments'>,
  inputs: AssignmentInput[],
  wasActive: boolean,
  legacyTargetsRun: boolean,
): Promise<RuleFields> {
  if (isLegacyTarget(f.target) && f.enabled && !legacyTargetsRun)
    throw new PublicApiError(
      'unprocessable_content',
      `target ${f.target} is a Legacy trace-level evaluator, which stops at the cutover to events_only; use target observation`,
      { field: 'target' },
    );
  const assignments: RuleFields['assignments'] = [];
  const evaluators: Evaluator[] = [];
  for (const input of inputs) {
    if (input.type === 'code') noCode();
    const e = await findEvaluatorByName(pool, projectId, input.name);
    if (!e)
      throw new PublicApiError('resource_not_found', `Evaluator "${input.name}" not found in this project`, {
        field: input.field,
      });
    const effective = input.mapping ?? e.mapping;
    if (!effective)
      throw new PublicApiError(
        'missing_variable_mapping',
        `Missing mappings for evaluator variable(s): ${e.variables.join(', ')}`,
        {
          field: input.field,
          variables: e.variables,
        },
      );
    checkMapping(effective, e.variables, f.target, input.field);
    assignments.push({ evaluatorId: e.id, mapping: input.mapping ?? null });
    evaluators.push(e);
  }
  checkRuleFilters(f.target, f.filter);
  await checkDatasetIds(pool, projectId, f.filter);
  let { pausedReason, pausedMessage } = f;
  if (f.enabled) {
    for (const e of evaluators) await preflight(pool, projectId, e);
    pausedReason = null;
    pausedMessage = null;
    if (!wasActive && (await countActiveRules(pool, projectId)) >= MAX_ACTIVE_RULES)
      throw new PublicApiError(
        'conflict',
        `This project already has the maximum number of active evaluation rules (${MAX_ACTIVE_RULES}). Disable an existing active evaluation rule before enabling another one.`,
        { limit: MAX_ACTIVE_RULES },
      );
  }
  return { ...f, pausedReason, pausedMessage, assignments };
}

const nameConflict = (name: string, id?: string) =>
  new PublicApiError(
    'name_conflict',
    `An evaluation rule named "${name}" already exists in this project.${id ? ` Use PATCH /api/public/unstable/evaluation-rules/${id} to update it instead of creating a duplicate.` : ''}`,
    { field: 'name' },
  );

/** `legacyTargetsRun`: the deployment still writes the legacy tables trace-level rules read. */
export async function createRule(
  pool: pg.Pool,
  projectId: string,
  req: z.infer<typeof createRuleRequest>,
  legacyTargetsRun: boolean,
) {
  const legacy = req.evaluator !== undefined || req.mapping !== undefined;
  if (legacy && req.evaluators)
    throw new PublicApiError(
      'invalid_body',
      'Provide either evaluators or the deprecated evaluator and mapping, not both',
      {
        field: 'evaluators',
      },
    );
  if (!req.evaluators && !req.evaluator)
    throw new PublicApiError('invalid_body', 'evaluator or evaluators is required', { field: 'evaluators' });
  const inputs: AssignmentInput[] = req.evaluators
    ? req.evaluators.map((a, i) => ({
        name: a.evaluator.name,
        type: a.evaluator.type,
        mapping: a.mapping,
        field: `evaluators[${i}].mapping`,
      }))
    : [{ name: req.evaluator!.name, type: req.evaluator!.type, mapping: req.mapping, field: 'mapping' }];
  const fields = await resolveRule(
    pool,
    projectId,
    {
      name: req.name,
      target: req.target,
      enabled: req.enabled,
      sampling: req.sampling ?? 1,
      delay: req.delay ?? DEFAULT_RULE_DELAY_MS,
      filter: req.filter ?? [],
      pausedReason: null,
      pausedMessage: null,
    },
    inputs,
    false,
    legacyTargetsRun,
  );
  const id = randomUUID();
  if (!(await saveRule(pool, projectId, id, fields))) {
    const { rows } = await pool.query<{ id: string }>(
      'SELECT id FROM evaluation_rules WHERE project_id = $1 AND name = $2',
      [projectId, req.name],
    );
    throw nameConflict(req.name, rows[0]?.id);
  }
  return id;
}

export async function updateRule(
  pool: pg.Pool,
  rule: Rule,
  req: z.infer<typeof updateRuleRequest>,
  legacyTargetsRun: boolean,
) {
  if (Object.values(req).every((v) => v === undefined))
    throw new PublicApiError('invalid_body', 'An empty update is not allowed');
  if (req.evaluators && (req.evaluator || req.mapping))
    throw new PublicApiError(
      'invalid_body',
      'evaluators cannot be combined with the deprecated evaluator and mapping',
      {
        field: 'evaluators',
      },
    );
  const current = await Promise.all(
    rule.assignments.map(async (a, i) => ({
      name: (await findEvaluator(pool, rule.projectId, a.evaluatorId))?.name ?? a.evaluatorId,
      mapping: a.mapping ?? undefined,
      field: `evaluators[${i}].mapping`,
    })),
  );
  let inputs: AssignmentInput[] = current;
  if (req.evaluators)
    inputs = req.evaluators.map((a, i) => ({
      name: a.evaluator.name,
      type: a.evaluator.type,
      mapping: a.mapping,
      field: `evaluators[${i}].mapping`,
    }));
  else if (req.evaluator || req.mapping) {
    const first = current[0] ?? { name: '', mapping: undefined, field: 'mapping' };
    inputs = [
      {
        name: req.evaluator?.name ?? first.name,
        mapping: req.mapping ?? (req.evaluator ? undefined : first.mapping),
        field: 'mapping',
      },
      ...current.slice(1),
    ];
  }
  const wasActive = rule.enabled && rule.pausedReason === null;
  const fields = await resolveRule(
    pool,
    rule.projectId,
    {
      ...patchedFields(rule, req, ['name', 'target', 'enabled', 'sampling', 'delay', 'filter']),
      pausedReason: rule.pausedReason,
      pausedMessage: rule.pausedMessage,
    },
    inputs,
    wasActive,
    legacyTargetsRun,
  );
  if (!(await saveRule(pool, rule.projectId, rule.id, fields))) throw nameConflict(fields.name);
}

/** Trace columns and the observation columns of the trace's root that mean the same. */
const TRACE_TO_OBSERVATION_COLUMN: Record<string, string | undefined> = {
  name: 'traceName',
  userId: 'userId',
  sessionId: 'sessionId',
  tags: 'tags',
  environment: 'environment',
  metadata: 'metadata',
  version: 'version',
};

/**
 * Replaces a trace-level (Legacy) rule by an observation rule judging each trace's root
 * observation (which carries the trace's input and output in version 4), with the same
 * evaluators, mappings, sampling and filters on the matching columns; the trace rule is disabled.
 * Returns the new rule's id.
 */
export async function convertToObservationRule(pool: pg.Pool, rule: Rule, legacyTargetsRun: boolean) {
  if (!isLegacyTarget(rule.target))
    throw new PublicApiError(
      'invalid_body',
      `Rule "${rule.name}" has target ${rule.target}: nothing to convert`,
    );
  const filter = rule.filter.map((f, i) => {
    const column = TRACE_TO_OBSERVATION_COLUMN[f.column];
    if (!column)
      throw new PublicApiError(
        'invalid_filter_value',
        `Filter column "${f.column}" of a trace has no observation equivalent; edit the rule first`,
        { field: `filter[${i}].column`, column: f.column },
      );
    return { ...f, column };
  });
  const evaluators = await Promise.all(
    rule.assignments.map(async (a) => ({
      evaluator: { name: (await findEvaluator(pool, rule.projectId, a.evaluatorId))?.name ?? a.evaluatorId },
      ...(a.mapping ? { mapping: a.mapping } : {}),
    })),
  );
  const id = await createRule(
    pool,
    rule.projectId,
    {
      name: `${rule.name} (observation)`,
      target: 'observation',
      enabled: rule.enabled,
      sampling: rule.sampling,
      delay: rule.delay,
      filter: [...filter, { type: 'boolean', column: 'isRootObservation', operator: '=', value: true }],
      evaluators,
    },
    legacyTargetsRun,
  );
  await updateRule(pool, rule, { enabled: false }, legacyTargetsRun);
  return id;
}

export async function publicRule(pool: pg.Pool, r: Rule) {
  const evaluators = await Promise.all(
    r.assignments.map(async (a) => {
      const e = await findEvaluator(pool, r.projectId, a.evaluatorId);
      return {
        evaluator: { id: a.evaluatorId, name: e?.name ?? a.evaluatorId, type: 'llm_as_judge' as const },
        mapping: a.mapping,
        effective:
          a.mapping ?? e?.mapping ?? (e?.variables ?? []).map((variable) => ({ variable, source: null })),
      };
    }),
  );
  const status = !r.enabled ? 'inactive' : r.pausedReason ? 'paused' : 'active';
  return {
    id: r.id,
    name: r.name,
    evaluator: evaluators[0]?.evaluator ?? null,
    evaluators: evaluators.map(({ evaluator, mapping }) => ({ evaluator, mapping })),
    target: r.target,
    // Not in the reference's shape: trace-level rules are its Legacy evaluators.
    legacy: isLegacyTarget(r.target),
    enabled: r.enabled,
    status,
    pausedReason: r.pausedReason,
    pausedMessage: r.pausedMessage,
    sampling: r.sampling,
    // Milliseconds after a matching row arrives before it is judged (the reference's `delay`).
    delay: r.delay,
    filter: r.filter,
    mapping: evaluators[0]?.effective ?? [],
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
