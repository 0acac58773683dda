/**
 * Finds what an active rule should judge and enqueues it once per evaluator: for observation
 * rules, the rows of `events_full` matching the rule's filters compiled by the Observations API v2
 * compiler; for experiment rules, the experiment item root observations of `events_full` (as the
 * reference, which adds its `isExperimentItemRootSpan` filter to every experiment rule) where only
 * the events tables are written, and the dataset run items (`dataset_run_items_rmt`, which link an
 * observation or a trace to a dataset item) where the legacy tables are; for the Legacy trace-level
 * rules, the rows of the legacy `traces` table. Only rows that arrived since the rule's cursor and
 * at least `lagMs` ago (so rows still being written are seen on the next pass), sampled per row.
 * Runs in the worker, never on ingestion.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import { type ColumnTable, compileFilters } from '../reads/filters.ts';
import { Params, toIso } from '../reads/sql.ts';
import { enqueueExecutions, type NewExecution } from './executions.ts';
import { ruleColumns, sampled, type Target } from './rules.ts';
import { activeRules, type Rule } from './store.ts';

/** Rows read per rule and pass; the cursor resumes after the last one. */
const SCAN_LIMIT = 1000;

interface Source {
  /** The target of the rules this source serves. */
  target: Target;
  table: string;
  /** The judged object's id, as executions name it. */
  id: string;
  /** The row's id, trace and time as the scan reads them. */
  select: string;
  where: string[];
  columns: ColumnTable;
  /** The table has an environment: the judge's own traces (any `langfuse-` one) are left out. */
  environment: boolean;
}

const OBSERVATIONS: Source = {
  target: 'observation',
  table: 'events_full',
  id: 'span_id',
  select: 'span_id AS id, trace_id, start_time AS at, created_at',
  where: [],
  columns: ruleColumns('observation'),
  environment: true,
};
/** A run item names an observation, or only a trace: then the trace is what is judged. */
const RUN_ITEM_ID = 'coalesce(observation_id, trace_id)';
const SOURCES = {
  observation: OBSERVATIONS,
  experiment: {
    ...OBSERVATIONS,
    target: 'experiment',
    where: ["experiment_id != ''", 'span_id = experiment_item_root_span_id'],
    columns: ruleColumns('experiment'),
  },
  run_item: {
    target: 'experiment',
    table: 'dataset_run_items_rmt',
    id: RUN_ITEM_ID,
    select: `${RUN_ITEM_ID} AS id, trace_id, created_at AS at, created_at`,
    where: [],
    columns: { datasetId: { expr: 'dataset_id', kind: 'string' } },
    environment: false,
  },
  trace: {
    target: 'trace',
    table: 'traces',
    id: 'id',
    select: 'id, id AS trace_id, timestamp AS at, created_at',
    where: [],
    columns: ruleColumns('trace'),
    environment: true,
  },
} satisfies Record<string, Source>;
export type ScanSource = keyof typeof SOURCES;

/** Where the rules of `target` find what they judge, in a deployment that writes the legacy tables or not. */
export function sourceOf(target: Target, legacyTables: boolean): ScanSource {
  if (target === 'experiment') return legacyTables ? 'run_item' : 'experiment';
  return target;
}

/**
 * The sources a worker scans: observation rules where the events tables are written, trace-level
 * rules where the legacy tables are, experiment rules in every mode (from the run items while the
 * legacy tables are written, so `legacy` and `dual` judge every dataset run whichever SDK sent it).
 */
export function scanSources(b: { writesEventsTables: boolean; writesLegacyTables: boolean }): ScanSource[] {
  return [
    ...(b.writesEventsTables ? (['observation'] as const) : []),
    ...(b.writesLegacyTables ? (['trace'] as const) : []),
    sourceOf('experiment', b.writesLegacyTables),
  ];
}

type Matched = Pick<Rule, 'projectId' | 'filter'> & { source: ScanSource };

/** The rows of the project a rule read from `source` with these filters judges (and `also`). */
function matching(rule: Matched, params: Params, also: () => string[] = () => []): string[] {
  const source = SOURCES[rule.source];
  return [
    `project_id = ${params.str(rule.projectId)}`,
    ...source.where,
    ...also(),
    ...(source.environment ? ["NOT startsWith(environment, 'langfuse-')"] : []),
    ...compileFilters(rule.filter, source.columns, { params, textIndex: false }),
  ];
}

export function buildScan(rule: Rule & { source: ScanSource }, from: string, to: string) {
  const params = new Params();
  const where = matching(rule, params, () => [
    `created_at > ${params.time(from)}`,
    `created_at <= ${params.time(to)}`,
  ]);
  const { table, select } = SOURCES[rule.source];
  const sql = [
    `SELECT ${select} FROM ${table} FINAL`,
    `WHERE ${where.join(' AND ')}`,
    `ORDER BY created_at LIMIT ${SCAN_LIMIT}`,
  ].join('\n');
  return { sql, params: params.values };
}

/**
 * The newest row a rule with these filters would judge (or the row `id`, if it matches): what the
 * rules page previews a mapping on.
 */
export function buildSample(rule: Matched, id?: string) {
  const params = new Params();
  const { table, select, id: idColumn } = SOURCES[rule.source];
  const where = matching(rule, params, () => (id ? [`${idColumn} = ${params.str(id)}`] : []));
  const sql = [
    `SELECT ${select} FROM ${table} FINAL`,
    `WHERE ${where.join(' AND ')}`,
    'ORDER BY created_at DESC LIMIT 1',
  ].join('\n');
  return { sql, params: params.values };
}

export interface ScanRow {
  id: string;
  trace_id: string;
  at: string;
  created_at: string;
}

/**
 * Scans the rules of the given sources. An execution that judges a trace (trace-level, or a run
 * item naming only a trace) has the trace's id as `observationId`: the queue keeps one execution
 * per (rule, evaluator, judged object).
 */
export async function scanRules(
  pool: pg.Pool,
  analytics: ClickHouseClient,
  lagMs: number,
  sources: readonly ScanSource[],
): Promise<number> {
  const to = new Date(Date.now() - lagMs).toISOString();
  let enqueued = 0;
  for (const source of sources) {
    for (const rule of await activeRules(pool, SOURCES[source].target)) {
      if (rule.scanCursor >= to) continue;
      const { sql, params } = buildScan({ ...rule, source }, rule.scanCursor, to);
      const rows = await (
        await analytics.query({ query: sql, query_params: params, format: 'JSONEachRow' })
      ).json<ScanRow>();
      const items: NewExecution[] = rows
        .filter((r) => sampled(rule.sampling, `${rule.id}:${r.id}`))
        .flatMap((r) =>
          rule.assignments.map((a) => ({
            projectId: rule.projectId,
            ruleId: rule.id,
            evaluatorId: a.evaluatorId,
            traceId: r.trace_id,
            observationId: r.id,
            observationStartTime: toIso(r.at)!,
          })),
        );
      enqueued += await enqueueExecutions(pool, items);
      const next = rows.length === SCAN_LIMIT ? toIso(rows.at(-1)!.created_at)! : to;
      await pool.query(
        'UPDATE evaluation_rules SET scan_cursor = GREATEST(scan_cursor, $2::timestamptz) WHERE id = $1',
        [rule.id, next],
      );
    }
  }
  return enqueued;
}
