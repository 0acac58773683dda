/**
 * Finds what an active rule should judge and enqueues it once per evaluator: for observation
 * rules, the rows of `events_full` matching the rule's filters compiled by the Observations API v2
 * compiler; for experiment rules, the experiment item root observations of `events_full` (as the
 * reference, which adds its `isExperimentItemRootSpan` filter to every experiment rule) where only
 * the events tables are written, and the dataset run items (`dataset_run_items_rmt`, which link an
 * observation or a trace to a dataset item) where the legacy tables are; for the Legacy trace-level
 * rules, the rows of the legacy `traces` table. Only rows that arrived since the rule's cursor and
 * at least `lagMs` ago (so rows still being written are seen on the next pass), sampled per row.
 * A rule's `delay` holds a row back until it arrived that long ago: measured from its arrival in
 * the store (`created_at`), as the reference counts it from the first ingestion event that matched
 * (when it queues the job with this delay), not from the producer's start time, so that updates
 * and the rest of the trace are in when the judge reads the row. Runs in the worker, never on ingestion.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import { type ColumnTable, compileFilters } from '../reads/filters.ts';
import { toIso } from '../reads/row-values.ts';
import { Params, toChText } from '../reads/sql.ts';
import { chTimeToIso } from '../write-model/time.ts';
import { enqueueExecutions, type NewExecution, pendingByRule } from './executions.ts';
import { ruleColumns, sampled, type Target } from './rules.ts';
import { activeRules, advanceScanCursor, type Rule } from './store.ts';

/**
 * Rows read per rule and pass: a source's page holds this many per rule scanned, so each rule may
 * move as far per pass as when it had a statement of its own; the cursors resume after the last one.
 */
const SCAN_LIMIT = 1000;
/** The page of one statement for `rules` rules. */
const scanLimit = (rules: number) => SCAN_LIMIT * rules;
/** Rows of one `created_at` read at once when a whole page shares it (one insert's rows). */
const TIE_LIMIT = 100_000;
/**
 * Executions a rule may have waiting before its scan holds: matches that outrun the judge (a model
 * answers a few per second, ingestion brings thousands of rows) wait in the events tables behind
 * the rule's cursor instead of as queue rows, so the queue and its cost stay bounded. Nothing is
 * skipped: the cursor resumes where it held once the judge has caught up.
 */
export const PENDING_PER_RULE = 1_000;

/** The rules a pass scans: those whose waiting executions leave room (`pending` by rule id). */
export function rulesWithRoom<R extends { id: string }>(
  rules: readonly R[],
  pending: ReadonlyMap<string, number>,
): R[] {
  return rules.filter((r) => (pending.get(r.id) ?? 0) < PENDING_PER_RULE);
}

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

/** The rows a pass reads: those that arrived after the rules' cursors up to `to`, or every row that arrived at `at`. */
export type ScanWindow = { to: string } | { at: string };

/**
 * A rule as one pass scans it: its filters, the exact cursor it resumes after, and where its own
 * window ends when its delay ends it before the pass's (`until`).
 */
export type ScannedRule = Pick<Rule, 'projectId' | 'filter'> & { scanCursor: string; until?: string };

/** Where a rule's window ends in a pass at `nowMs`: `lagMs` ago, or its delay ago when longer. */
export function windowEnd(nowMs: number, lagMs: number, delayMs: number): string {
  return new Date(nowMs - Math.max(lagMs, delayMs)).toISOString();
}

/**
 * One statement for every rule of `source`, so a pass costs the store one statement per source
 * whatever the number of rules: the rows some rule judges, each with `matched`, one flag per rule
 * (in `rules`' order) for "after that rule's cursor and matching its project and filters". The
 * window starts at the oldest cursor; each flag keeps a rule to its own rows.
 */
export function buildScan(source: ScanSource, rules: readonly ScannedRule[], window: ScanWindow) {
  const params = new Params();
  const { table, select, where, environment } = SOURCES[source];
  const flags = rules.map((rule) =>
    [
      `project_id = ${params.str(rule.projectId)}`,
      `created_at > ${params.time(rule.scanCursor)}`,
      ...(rule.until === undefined ? [] : [`created_at <= ${params.time(rule.until)}`]),
      ...compileFilters(rule.filter, SOURCES[source].columns, { params, textIndex: false }),
    ].join(' AND '),
  );
  const from = rules.map((r) => toChText(r.scanCursor)).sort()[0]!;
  const conditions = [
    `project_id IN ${params.strs([...new Set(rules.map((r) => r.projectId))])}`,
    ...where,
    ...('at' in window
      ? [`created_at = ${params.time(window.at)}`]
      : [`created_at > ${params.time(from)}`, `created_at <= ${params.time(window.to)}`]),
    ...(environment ? ["NOT startsWith(environment, 'langfuse-')"] : []),
    `(${flags.map((f) => `(${f})`).join(' OR ')})`,
  ];
  const sql = [
    `SELECT ${select}, [${flags.map((f) => `(${f})`).join(', ')}] AS matched FROM ${table} FINAL`,
    `WHERE ${conditions.join(' AND ')}`,
    'at' in window ? `LIMIT ${TIE_LIMIT}` : `ORDER BY created_at LIMIT ${scanLimit(rules.length)}`,
  ].join('\n');
  return { sql, params: params.values };
}

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
  return before
    ? { cursor: chTimeToIso(before.created_at) }
    : { cursor: chTimeToIso(last), tie: chTimeToIso(last) };
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
  /** One flag per scanned rule (buildScan). */
  matched: (number | boolean)[];
}

/** Where a rule resumes after a pass that resumes at `next`: there, or at its own window's end if earlier. */
export const resumeAt = (rule: { until?: string }, next: string): string =>
  rule.until !== undefined && toChText(rule.until) < toChText(next) ? rule.until : next;

/**
 * The rules whose cursor a pass that resumes at `next` moves: forward only, so a rule already past
 * where it resumes (its page was cut short by older rules' rows, or its delay) keeps its own cursor.
 */
export function cursorsBefore<R extends { scanCursor: string; until?: string }>(
  rules: readonly R[],
  next: string,
): R[] {
  return rules.filter((r) => toChText(r.scanCursor) < toChText(resumeAt(r, next)));
}

/**
 * What a pass enqueues: for each rule, the rows its flag marks (after its cursor, matching its
 * filters), sampled per rule and row, once per evaluator of the rule.
 */
export function scanExecutions(
  rules: readonly Pick<Rule, 'id' | 'projectId' | 'sampling' | 'assignments'>[],
  rows: readonly ScanRow[],
): NewExecution[] {
  return rules.flatMap((rule, i) =>
    rows
      .filter((r) => Number(r.matched[i]) === 1 && sampled(rule.sampling, `${rule.id}:${r.id}`))
      .flatMap((r) =>
        rule.assignments.map((a) => ({
          projectId: rule.projectId,
          ruleId: rule.id,
          evaluatorId: a.evaluatorId,
          traceId: r.trace_id,
          observationId: r.id,
          observationStartTime: toIso(r.at)!,
        })),
      ),
  );
}

/**
 * Scans the rules of the given sources, one statement per source and pass (two when a page ends in
 * a group of equal `created_at`); a source without an active rule behind its cursor and with room
 * in the queue costs none.
 * An execution that judges a trace (trace-level, or a run item naming only a trace) has the
 * trace's id as `observationId`: the queue keeps one execution per (rule, evaluator, judged object).
 */
export async function scanRules(
  pool: pg.Pool,
  analytics: ClickHouseClient,
  lagMs: number,
  sources: readonly ScanSource[],
): Promise<number> {
  const now = Date.now();
  const to = windowEnd(now, lagMs, 0);
  let enqueued = 0;
  for (const source of sources) {
    const behind = (await activeRules(pool, SOURCES[source].target))
      .map((rule): Rule & ScannedRule =>
        rule.delay > lagMs ? { ...rule, until: windowEnd(now, lagMs, rule.delay) } : rule,
      )
      .filter((rule) => Date.parse(rule.scanCursor) < Date.parse(rule.until ?? to));
    if (behind.length === 0) continue;
    const rules = rulesWithRoom(
      behind,
      await pendingByRule(
        pool,
        behind.map((r) => r.id),
      ),
    );
    if (rules.length === 0) continue;
    const read = (window: ScanWindow) => {
      const { sql, params } = buildScan(source, rules, window);
      return analytics
        .query({ query: sql, query_params: params, format: 'JSONEachRow' })
        .then((rs) => rs.json<ScanRow>());
    };
    const rows = await read({ to });
    const next = nextScan(rows, to, scanLimit(rules.length));
    if (next.tie) rows.push(...(await read({ at: next.tie })));
    const items = scanExecutions(rules, rows);
    enqueued += await enqueueExecutions(pool, items);
    for (const rule of cursorsBefore(rules, next.cursor)) {
      await advanceScanCursor(pool, rule.id, rule.scanCursor, resumeAt(rule, next.cursor));
    }
  }
  return enqueued;
}
