/**
 * Finds the observations an active observation rule should judge: the rule's filters compiled by
 * the Observations API v2 compiler over `events_full`, for rows that arrived since the rule's
 * cursor and at least `lagMs` ago (so rows still being written are seen on the next pass), sampled
 * per observation, and enqueued once per evaluator. Runs in the worker, never on ingestion.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import { compileFilters } from '../reads/filters.ts';
import { Params, toIso } from '../reads/sql.ts';
import { enqueueExecutions, type NewExecution } from './executions.ts';
import { RULE_OBSERVATION_COLUMNS, sampled } from './rules.ts';
import { activeObservationRules, type Rule } from './store.ts';

/** Rows read per rule and pass; the cursor resumes after the last one. */
const SCAN_LIMIT = 1000;

export function buildScan(rule: Rule, from: string, to: string) {
  const params = new Params();
  const where = [
    `project_id = ${params.str(rule.projectId)}`,
    `created_at > ${params.time(from)}`,
    `created_at <= ${params.time(to)}`,
    // The judge's own traces (and any other reserved environment) are never judged.
    "NOT startsWith(environment, 'langfuse-')",
    ...compileFilters(rule.filter, RULE_OBSERVATION_COLUMNS, { params, textIndex: false }),
  ];
  const sql = [
    'SELECT span_id, trace_id, start_time, created_at FROM events_full FINAL',
    `WHERE ${where.join(' AND ')}`,
    `ORDER BY created_at LIMIT ${SCAN_LIMIT}`,
  ].join('\n');
  return { sql, params: params.values };
}

interface ScanRow {
  span_id: string;
  trace_id: string;
  start_time: string;
  created_at: string;
}

export async function scanRules(pool: pg.Pool, analytics: ClickHouseClient, lagMs: number): Promise<number> {
  const to = new Date(Date.now() - lagMs).toISOString();
  let enqueued = 0;
  for (const rule of await activeObservationRules(pool)) {
    if (rule.scanCursor >= to) continue;
    const { sql, params } = buildScan(rule, rule.scanCursor, to);
    const rows = await (
      await analytics.query({ query: sql, query_params: params, format: 'JSONEachRow' })
    ).json<ScanRow>();
    const items: NewExecution[] = rows
      .filter((r) => sampled(rule.sampling, `${rule.id}:${r.span_id}`))
      .flatMap((r) =>
        rule.assignments.map((a) => ({
          projectId: rule.projectId,
          ruleId: rule.id,
          evaluatorId: a.evaluatorId,
          traceId: r.trace_id,
          observationId: r.span_id,
          observationStartTime: toIso(r.start_time)!,
        })),
      );
    enqueued += await enqueueExecutions(pool, items);
    const next = rows.length === SCAN_LIMIT ? toIso(rows.at(-1)!.created_at)! : to;
    await pool.query(
      'UPDATE evaluation_rules SET scan_cursor = GREATEST(scan_cursor, $2::timestamptz) WHERE id = $1',
      [rule.id, next],
    );
  }
  return enqueued;
}
