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
import { activeRules, advanceScanCursor, type Rule } from './store.ts';

/** Rows read per rule and pass; the cursor resumes after the last one. */
const SCAN_LIMIT = 1000;
/** Rows of one `created_at` read at once when a whole page shares it (one insert's rows). */
const TIE_LIMIT = 100_000;

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

/** The rows a pass reads: those that arrived in `(from, to]`, or every row that arrived at `at`. */
export type ScanWindow = { from: string; to: string } | { at: string };

export function buildScan(rule: Rule & { source: ScanSource }, window: ScanWindow) {
  const params = new Params();
  const where = matching(rule, params, () =>
    'at' in window
      ? [`created_at = ${params.time(window.at)}`]
      : [`created_at > ${params.time(window.from)}`, `created_at <= ${params.time(window.to)}`],
  );
  const { table, select } = SOURCES[rule.source];
  const sql = [
    `SELECT ${select} FROM ${table} FINAL`,
    `WHERE ${where.join(' AND ')}`,
    'at' in window ? `LIMIT ${TIE_LIMIT}` : `ORDER BY created_at LIMIT ${SCAN_LIMIT}`,
  ].join('\n');
  return { sql, params: params.values };
}

/** A ClickHouse DateTime64 as ISO text with all its digits (`toIso` keeps milliseconds only). */
const exactIso = (t: string) => `${t.replace(' ', 'T')}Z`;

/**
 * Where the next pass resumes after a page of rows ordered by `created_at`: at `to` when the page
 * was not full; else before the page's trailing group of equal `created_at` (the rows of one insert
 * share it, and the page may have cut that group: its rows are read again and enqueued once). A
 * full page that is one such group names it as `tie`: the pass reads the whole group, then resumes
 * after it.
 */
export function nextScan(
  rows: readonly { created_at: string }[],
  to: string,
  limit: number,
): { cursor: string; tie?: string } {
  if (rows.length < limit) return { cursor: to };
  const last = rows.at(-1)!.created_at;
  const before = rows.findLast((r) => r.created_at !== last);
  return before ? { cursor: exactIso(before.created_at) } : { cursor: exactIso(last), tie: exactIso(last) };
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
      if (Date.parse(rule.scanCursor) >= Date.parse(to)) continue;
      const read = (window: ScanWindow) => {
        const { sql, params } = buildScan({ ...rule, source }, window);
        return analytics
          .query({ query: sql, query_params: params, format: 'JSONEachRow' })
          .then((rs) => rs.json<ScanRow>());
      };
      const rows = await read({ from: rule.scanCursor, to });
      const next = nextScan(rows, to, SCAN_LIMIT);
      if (next.tie) rows.push(...(await read({ at: next.tie })));
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
      await advanceScanCursor(pool, rule.id, rule.scanCursor, next.cursor);
    }
  }
  return enqueued;
}
