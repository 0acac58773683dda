/**
 * Evaluators' prompt variables and evaluation rules' mappings and filters, checked as the
 * reference's unstable API checks them (the codes of errors.ts). Observation filters are the
 * Observations API v2 filter language, compiled by its own compiler against the observation
 * columns, so a rule matches exactly what that API would list. Pure: no I/O.
 */
import { JSONPath } from 'jsonpath-plus';
import { z } from 'zod';
import { HttpError } from '../../kernel/errors.ts';
import { OBSERVATION_COLUMNS } from '../reads/events-columns.ts';
import {
  type ColumnKind,
  type ColumnTable,
  compileFilters,
  type FilterCondition,
  filterCondition,
} from '../reads/filters.ts';
import { Params } from '../reads/sql.ts';
import { OBSERVATION_TYPES } from '../write-model/bodies.ts';
import { PublicApiError } from './errors.ts';

/**
 * `trace` is the Legacy trace-level target of release 3: it reads the legacy `traces` table, so it
 * runs in `legacy` and `dual` only and stops at the cutover (the spec's evaluator rule).
 */
export const TARGETS = ['observation', 'experiment', 'trace'] as const;
export type Target = (typeof TARGETS)[number];
export const isLegacyTarget = (t: Target): boolean => t === 'trace';
export const SOURCES = [
  'input',
  'output',
  'metadata',
  'tool_calls',
  'expected_output',
  'experiment_item_metadata',
] as const;
export type Source = (typeof SOURCES)[number];
const SOURCES_BY_TARGET: Record<Target, readonly Source[]> = {
  observation: ['input', 'output', 'metadata', 'tool_calls'],
  experiment: SOURCES,
  trace: ['input', 'output', 'metadata'],
};

export const mappingEntry = z.object({
  variable: z.string().min(1),
  source: z.enum(SOURCES),
  jsonPath: z.string().optional(),
});
export type MappingEntry = z.infer<typeof mappingEntry>;
export const ruleFilter = filterCondition;

/** `{{name}}` placeholders of a prompt, in order of first appearance. */
export function promptVariables(prompt: string): string[] {
  return [...new Set([...prompt.matchAll(/\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}/g)].map((m) => m[1]!))];
}

/** The prompt with each placeholder replaced: text as is, anything else as JSON. */
export function renderPrompt(prompt: string, values: Record<string, unknown>): string {
  return prompt.replace(/\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}/g, (whole, name: string) => {
    if (!Object.hasOwn(values, name)) return whole;
    const v = values[name];
    if (v === null || v === undefined) return '';
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
}

function balanced(path: string): boolean {
  const stack: string[] = [];
  let quote: string | undefined;
  for (const ch of path) {
    if (quote) {
      if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '[' || ch === '(') stack.push(ch);
    else if (ch === ']' && stack.pop() !== '[') return false;
    else if (ch === ')' && stack.pop() !== '(') return false;
  }
  return !quote && stack.length === 0;
}

export function jsonPathProblem(path: string): string | undefined {
  if (!path.startsWith('$')) return 'JSONPath expressions must start with $.';
  if (!balanced(path)) return 'JSONPath expressions must use balanced quotes, brackets, and parentheses.';
  try {
    JSONPath.toPathArray(path);
  } catch {
    return 'JSONPath expression is not valid.';
  }
  return undefined;
}

/** Checks a mapping against the evaluator's variables and the rule's target; throws the reference's errors. */
export function checkMapping(
  mapping: MappingEntry[],
  variables: string[],
  target: Target,
  field = 'mapping',
): void {
  const seen = new Set<string>();
  for (const [i, m] of mapping.entries()) {
    if (!variables.includes(m.variable))
      throw new PublicApiError(
        'invalid_variable_mapping',
        `Variable "${m.variable}" is not a variable of the evaluator (${variables.join(', ') || 'none'})`,
        { field: `${field}[${i}].variable`, variable: m.variable },
      );
    if (seen.has(m.variable))
      throw new PublicApiError(
        'duplicate_variable_mapping',
        `Variable "${m.variable}" is mapped more than once`,
        {
          field: `${field}[${i}].variable`,
          variable: m.variable,
        },
      );
    seen.add(m.variable);
    if (!SOURCES_BY_TARGET[target].includes(m.source))
      throw new PublicApiError(
        'invalid_variable_mapping',
        `Source "${m.source}" is not valid for target ${target} (valid: ${SOURCES_BY_TARGET[target].join(', ')})`,
        { field: `${field}[${i}].source`, variable: m.variable },
      );
    if (m.jsonPath !== undefined) {
      const problem = jsonPathProblem(m.jsonPath);
      if (problem)
        throw new PublicApiError(
          'invalid_json_path',
          `Mapping for variable "${m.variable}" has an invalid jsonPath "${m.jsonPath}". ${problem}`,
          { field: `${field}[${i}].jsonPath`, variable: m.variable, value: m.jsonPath },
        );
    }
  }
  const missing = variables.filter((v) => !seen.has(v));
  if (missing.length > 0)
    throw new PublicApiError(
      'missing_variable_mapping',
      `Missing mappings for evaluator variable(s): ${missing.join(', ')}`,
      {
        field,
        variables: missing,
      },
    );
}

/** The observation columns a rule may filter on: the API's, plus the tool-call columns. */
export const RULE_OBSERVATION_COLUMNS: ColumnTable = {
  ...OBSERVATION_COLUMNS,
  calledToolNames: { expr: 'tool_call_names', kind: 'array' },
  toolCalls: { expr: 'length(tool_calls)', kind: 'number' },
};

/** The columns of the legacy `traces` table a trace-level rule may filter on. */
export const RULE_TRACE_COLUMNS: ColumnTable = {
  name: { expr: 'name', kind: 'string' },
  userId: { expr: "coalesce(user_id, '')", kind: 'string' },
  sessionId: { expr: "coalesce(session_id, '')", kind: 'string' },
  release: { expr: "coalesce(release, '')", kind: 'string' },
  version: { expr: "coalesce(version, '')", kind: 'string' },
  environment: { expr: 'environment', kind: 'string' },
  tags: { expr: 'tags', kind: 'array' },
  metadata: { expr: 'metadata', kind: 'metadata', value: (key) => `metadata[${key}]` },
};

/**
 * An experiment rule judges experiment item root observations of `events_full` (the span an SDK's
 * experiment runner opens per dataset item, carrying the item's columns): the observation columns
 * plus the experiment's dataset.
 */
const RULE_EXPERIMENT_COLUMNS: ColumnTable = {
  ...RULE_OBSERVATION_COLUMNS,
  datasetId: { expr: 'experiment_dataset_id', kind: 'string' },
};

/** The reference's allowed columns per target, and the values a closed column takes. */
const OBSERVATION_FILTER_COLUMNS = [
  'type',
  'name',
  'environment',
  'level',
  'version',
  'traceName',
  'userId',
  'sessionId',
  'tags',
  'metadata',
  'isRootObservation',
  'parentObservationId',
  'calledToolNames',
  'toolCalls',
];
const CLOSED_VALUES: Record<string, string[]> = {
  type: [...OBSERVATION_TYPES],
  level: ['DEBUG', 'DEFAULT', 'WARNING', 'ERROR'],
};

/** The columns a rule of a target filters on. */
export const ruleColumns = (target: Target): ColumnTable =>
  target === 'trace'
    ? RULE_TRACE_COLUMNS
    : target === 'experiment'
      ? RULE_EXPERIMENT_COLUMNS
      : RULE_OBSERVATION_COLUMNS;

const ALLOWED_COLUMNS: Record<Target, string[]> = {
  observation: OBSERVATION_FILTER_COLUMNS,
  experiment: ['datasetId'],
  trace: Object.keys(RULE_TRACE_COLUMNS),
};
const allowedColumns = (target: Target): string[] => ALLOWED_COLUMNS[target];

/** Columns the reference accepts only as `stringOptions` (any of / none of). */
const OPTIONS_ONLY = new Set(['datasetId']);

/** The columns a rule of `target` may filter on, with their kinds (the rules page's filter bar). */
export function ruleFilterColumns(target: Target): Record<string, ColumnKind> {
  const table = ruleColumns(target);
  return Object.fromEntries(allowedColumns(target).map((c) => [c, table[c]!.kind]));
}

/** Checks a rule's filters, compiling them as the worker will; throws invalid_filter_value. */
export function checkRuleFilters(target: Target, filters: FilterCondition[]): void {
  for (const [i, f] of filters.entries()) {
    if (!allowedColumns(target).includes(f.column))
      throw new PublicApiError(
        'invalid_filter_value',
        `Filter column "${f.column}" is not supported for target ${target}`,
        {
          field: `filter[${i}].column`,
          column: f.column,
        },
      );
    if (OPTIONS_ONLY.has(f.column) && f.type !== 'stringOptions')
      throw new PublicApiError(
        'invalid_filter_value',
        `Filter column "${f.column}" takes type stringOptions with operator "any of" or "none of"`,
        { field: `filter[${i}].type`, column: f.column },
      );
    const allowed = CLOSED_VALUES[f.column];
    if (allowed && Array.isArray(f.value)) {
      const invalid = (f.value as unknown[])
        .filter((v) => typeof v !== 'string' || !allowed.includes(v))
        .map(String);
      if (invalid.length > 0)
        throw new PublicApiError(
          'invalid_filter_value',
          `Filter column "${f.column}" contains unsupported value(s): ${invalid.join(', ')}`,
          { field: `filter[${i}].value`, column: f.column, invalidValues: invalid, allowedValues: allowed },
        );
    }
    try {
      compileFilters([f], ruleColumns(target), { params: new Params(), textIndex: false });
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      throw new PublicApiError('invalid_filter_value', err.message, {
        field: `filter[${i}]`,
        column: f.column,
      });
    }
  }
}

/** Deterministic sampling: the same observation is in or out of a rule's sample on every pass. */
export function sampled(sampling: number, key: string): boolean {
  if (sampling >= 1) return true;
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  return (h >>> 0) / 2 ** 32 < sampling;
}

/** The value a mapping entry selects from its source; a JSONPath with one match gives that match. */
export function selectValue(source: unknown, jsonPath: string | undefined): unknown {
  if (jsonPath === undefined) return source;
  const json = typeof source === 'string' ? tryParse(source) : source;
  if (json === null || typeof json !== 'object') return undefined;
  const found = JSONPath({ path: jsonPath, json: json as object, wrap: true }) as unknown[];
  return found.length === 1 ? found[0] : found.length === 0 ? undefined : found;
}

export function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
