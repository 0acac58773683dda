/**
 * The evaluation queue: one PostgreSQL row per (rule, evaluator, observation), which is also the
 * execution log the reference keeps. Workers claim due rows with `FOR UPDATE SKIP LOCKED` under a
 * lease, so several workers share the queue and a crashed worker's rows come back when its lease
 * ends; a judgment is written under the execution's id, so running one twice stores one score.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';

export interface NewExecution {
  projectId: string;
  ruleId: string;
  evaluatorId: string;
  traceId: string;
  observationId: string;
  observationStartTime: string;
}

export interface Execution extends NewExecution {
  id: string;
  attempts: number;
}

/** Enqueues each (rule, evaluator, observation) once; returns how many were new. */
export async function enqueueExecutions(pool: pg.Pool, items: NewExecution[]): Promise<number> {
  if (items.length === 0) return 0;
  const { rowCount } = await pool.query(
    `INSERT INTO evaluation_executions (id, project_id, rule_id, evaluator_id, trace_id, observation_id, observation_start_time)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
     ON CONFLICT (rule_id, evaluator_id, observation_id) DO NOTHING`,
    [
      items.map(() => randomUUID()),
      items.map((i) => i.projectId),
      items.map((i) => i.ruleId),
      items.map((i) => i.evaluatorId),
      items.map((i) => i.traceId),
      items.map((i) => i.observationId),
      items.map((i) => i.observationStartTime),
    ],
  );
  return rowCount ?? 0;
}

/** Executions waiting (due or backing off) per rule, for the rules named. */
export async function pendingByRule(pool: pg.Pool, ruleIds: readonly string[]): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ rule_id: string; n: number }>(
    `SELECT rule_id, count(*)::int AS n FROM evaluation_executions
     WHERE status = 'PENDING' AND rule_id = ANY($1::text[]) GROUP BY rule_id`,
    [ruleIds],
  );
  return new Map(rows.map((r) => [r.rule_id, r.n]));
}

interface ExecutionRow {
  id: string;
  project_id: string;
  rule_id: string;
  evaluator_id: string;
  trace_id: string;
  observation_id: string;
  observation_start_time: Date;
  attempts: number;
}

/** Claims up to `limit` due executions for `owner` for `leaseMs`; each claim counts as an attempt. */
export async function claimExecutions(
  pool: pg.Pool,
  owner: string,
  limit: number,
  leaseMs: number,
): Promise<Execution[]> {
  const { rows } = await pool.query<ExecutionRow>(
    `UPDATE evaluation_executions SET locked_by = $1, locked_until = now() + make_interval(secs => $3::double precision / 1000),
       attempts = attempts + 1, updated_at = now()
     WHERE id IN (SELECT id FROM evaluation_executions
       WHERE status = 'PENDING' AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until < now())
       ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING *`,
    [owner, limit, leaseMs],
  );
  return rows.map((r) => ({
    id: r.id,
    projectId: r.project_id,
    ruleId: r.rule_id,
    evaluatorId: r.evaluator_id,
    traceId: r.trace_id,
    observationId: r.observation_id,
    observationStartTime: r.observation_start_time.toISOString(),
    attempts: r.attempts,
  }));
}

export type Outcome =
  | { status: 'COMPLETED'; scoreId: string; provider: string; evaluatorVersion: number }
  | { status: 'ERROR' | 'CANCELLED'; error: string; provider?: string | undefined }
  | { status: 'RETRY'; error: string; delayMs: number; provider?: string | undefined };

export async function settleExecution(pool: pg.Pool, id: string, o: Outcome): Promise<void> {
  if (o.status === 'RETRY') {
    await pool.query(
      `UPDATE evaluation_executions SET error = $2, provider = $3, locked_by = NULL, locked_until = NULL,
         next_attempt_at = now() + make_interval(secs => $4::double precision / 1000), updated_at = now() WHERE id = $1`,
      [id, o.error, o.provider ?? null, o.delayMs],
    );
    return;
  }
  await pool.query(
    `UPDATE evaluation_executions SET status = $2, error = $3, score_id = $4, provider = $5, evaluator_version = $6,
       locked_by = NULL, locked_until = NULL, updated_at = now() WHERE id = $1`,
    [
      id,
      o.status,
      o.status === 'COMPLETED' ? null : o.error,
      o.status === 'COMPLETED' ? o.scoreId : null,
      o.provider ?? null,
      o.status === 'COMPLETED' ? o.evaluatorVersion : null,
    ],
  );
}

/** One row of a rule's execution log. */
export interface LoggedExecution {
  id: string;
  evaluatorId: string;
  evaluatorVersion: number | null;
  traceId: string;
  observationId: string;
  status: string;
  attempts: number;
  error: string | null;
  scoreId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A rule's executions, newest first. */
export async function listExecutions(
  pool: pg.Pool,
  projectId: string,
  ruleId: string,
  limit: number,
  offset: number,
): Promise<{ executions: LoggedExecution[]; total: number }> {
  const [list, count] = await Promise.all([
    pool.query<{
      id: string;
      evaluator_id: string;
      evaluator_version: number | null;
      trace_id: string;
      observation_id: string;
      status: string;
      attempts: number;
      error: string | null;
      score_id: string | null;
      created_at: Date;
      updated_at: Date;
    }>(
      `SELECT id, evaluator_id, evaluator_version, trace_id, observation_id, status, attempts, error, score_id,
         created_at, updated_at FROM evaluation_executions
       WHERE project_id = $1 AND rule_id = $2 ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`,
      [projectId, ruleId, limit, offset],
    ),
    pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM evaluation_executions WHERE project_id = $1 AND rule_id = $2',
      [projectId, ruleId],
    ),
  ]);
  return {
    executions: list.rows.map((r) => ({
      id: r.id,
      evaluatorId: r.evaluator_id,
      evaluatorVersion: r.evaluator_version,
      traceId: r.trace_id,
      observationId: r.observation_id,
      status: r.status,
      attempts: r.attempts,
      error: r.error,
      scoreId: r.score_id,
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
    })),
    total: count.rows[0]!.n,
  };
}
