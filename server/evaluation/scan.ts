/**
 * Finds what an active rule should judge and enqueues it once per evaluator: for observation
 * rules, the rows of `events_full` matching the rule's filters compiled by the Observations API v2
 * compiler; for experiment rules, the experiment item root observations of `events_full` (as the
 * reference, which adds its `isExperimentItemRootSpan` filter to every experiment rule); for the
 * Legacy trace-level rules, the rows of the legacy `traces` table. Only rows that
 * arrived since the rule's cursor and at least `lagMs` ago (so rows still being written are seen on
 * the next pass), sampled per row. Runs in the worker, never on ingestion.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import { compileFilters } from '../reads/filters.ts';
import { Params, toIso } from '../reads/sql.ts';
import { enqueueExecutions, type NewExecution } from './executions.ts';
import { ruleColumns, sampled } from './rules.ts';
import { activeRules, type Rule } from './store.ts';

/** Rows read per rule and pass; the cursor resumes after the last one. */
const SCAN_LIMIT = 1000;

/** Where each scanned target's rows live, and the row's id, trace and time as the scan reads them. */
const OBSERVATIONS = {
  table: 'events_full',
  id: 'span_id',
  select: 'span_id AS id, trace_id, start_time AS at, created_at',
  where: [] as string[],
};
const SOURCES = {
  observation: OBSERVATIONS,
  experiment: { ...OBSERVATIONS, where: ["experiment_id != ''", 'span_id = experiment_item_root_span_id'] },
  trace: { table: 'traces', id: 'id', select: 'id, id AS trace_id, timestamp AS at, created_at', where: [] },
} as const;
export type ScannedTarget = keyof typeof SOURCES;

type Matched = Pick<Rule, 'projectId' | 'filter'> & { target: ScannedTarget };

/** The rows of the project a rule of `target` with these filters judges (and `also`). */
function matching(rule: Matched, params: Params, also: () => string[] = () => []): string[] {
  return [
    `project_id = ${params.str(rule.projectId)}`,
    ...SOURCES[rule.target].where,
    ...also(),
    // The judge's own traces (and any other reserved environment) are never judged.
    "NOT startsWith(environment, 'langfuse-')",
    ...compileFilters(rule.filter, ruleColumns(rule.target), { params, textIndex: false }),
  ];
}

export function buildScan(rule: Rule & { target: ScannedTarget }, from: string, to: string) {
  const params = new Params();
  const where = matching(rule, params, () => [
    `created_at > ${params.time(from)}`,
    `created_at <= ${params.time(to)}`,
  ]);
  const { table, select } = SOURCES[rule.target];
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
  const { table, select, id: idColumn } = SOURCES[rule.target];
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
 * Scans the rules of the given targets. A trace-level execution's `observationId` is the trace's
 * id: the queue keeps one execution per (rule, evaluator, judged object).
 */
export async function scanRules(
  pool: pg.Pool,
  analytics: ClickHouseClient,
  lagMs: number,
  targets: readonly ScannedTarget[],
): Promise<number> {
  const to = new Date(Date.now() - lagMs).toISOString();
  let enqueued = 0;
  for (const target of targets) {
    for (const rule of await activeRules(pool, target)) {
      if (rule.scanCursor >= to) continue;
      const { sql, params } = buildScan({ ...rule, target }, rule.scanCursor, to);
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
