/**
 * A finished backfill step proves its output still exists before the chain believes it. As it
 * finishes, a step records one row it wrote (its key); a record whose table is gone, or no longer
 * holds that row (a rewind to release 3 and a new upgrade, a restore of an older backup), is reset
 * with its checkpoint and every later step's, so the chain runs them again. The check reads the
 * row itself, not table metadata: the embedded engine's tables have no uuid.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import { BACKFILL_CHAIN } from './chain.ts';
import { planOf, type StepOutput } from './steps.ts';

/** A row a finished step wrote; null when the step found nothing to write. */
export interface OutputProof {
  table: string;
  /** `traceId` is absent in proofs recorded before deletions were told apart (below). */
  row: { projectId: string; id: string; startTime: string; traceId?: string } | null;
}

interface MigrationRecord {
  name: string;
  finished_at: Date | null;
  state: { output?: OutputProof };
}

async function tableExists(analytics: ClickHouseClient, table: string): Promise<boolean> {
  const rs = await analytics.query({
    query: 'SELECT 1 FROM system.tables WHERE database = currentDatabase() AND name = {t:String}',
    query_params: { t: table },
    format: 'JSONEachRow',
  });
  return (await rs.json()).length > 0;
}

/** The proof a step records as it finishes, or undefined for a step that writes no table. */
export async function proofOf(analytics: ClickHouseClient, step: number): Promise<OutputProof | undefined> {
  const out = planOf(step).output;
  if (!out) return undefined;
  const rs = await analytics.query({
    query: `SELECT project_id AS projectId, ${out.idColumn} AS id, toString(start_time) AS startTime,
              trace_id AS traceId
            FROM ${out.table} WHERE ${out.written} LIMIT 1`,
    format: 'JSONEachRow',
  });
  const [row] = await rs.json<NonNullable<OutputProof['row']>>();
  return { table: out.table, row: row ?? null };
}

/**
 * Whether the proof row's trace was deleted: then its absence says nothing of the step's output,
 * which a user's deletion does not undo (a restore re-applies deletions too).
 */
async function deletedByUser(pool: pg.Pool, row: NonNullable<OutputProof['row']>): Promise<boolean> {
  if (row.traceId === undefined) return false;
  const r = await pool.query(
    `SELECT 1 FROM trace_tombstones WHERE project_id = $1 AND trace_id IN ($2, '') LIMIT 1`,
    [row.projectId, row.traceId],
  );
  return r.rows.length > 0;
}

async function holds(
  pool: pg.Pool,
  analytics: ClickHouseClient,
  out: StepOutput,
  proof: OutputProof | undefined,
) {
  if (!(await tableExists(analytics, out.table))) return false;
  // Records from before proofs were kept, and steps that wrote nothing: the table must exist.
  if (!proof?.row) return true;
  const rs = await analytics.query({
    query: `SELECT 1 FROM ${out.table}
            WHERE project_id = {p:String} AND ${out.idColumn} = {id:String} AND start_time = {t:DateTime64(6)} LIMIT 1`,
    query_params: { p: proof.row.projectId, id: proof.row.id, t: proof.row.startTime },
    format: 'JSONEachRow',
  });
  return (await rs.json()).length > 0 || (await deletedByUser(pool, proof.row));
}

/**
 * The first step (in chain order) recorded as finished whose output is gone, or undefined. A
 * step's output may be gone on purpose: the scratch table once step 5 dropped it.
 */
export async function firstUnproven(pool: pg.Pool, analytics: ClickHouseClient): Promise<number | undefined> {
  const r = await pool.query<MigrationRecord>(
    'SELECT name, finished_at, state FROM background_migrations WHERE name = ANY($1)',
    [BACKFILL_CHAIN.map((s) => s.name)],
  );
  const byName = new Map(r.rows.map((row) => [row.name, row]));
  const finished = (step: number) => Boolean(byName.get(BACKFILL_CHAIN[step - 1]!.name)?.finished_at);
  for (const s of BACKFILL_CHAIN) {
    const row = byName.get(s.name);
    const plan = planOf(s.step);
    if (!row?.finished_at || !plan.output) continue;
    if (plan.droppedBy !== undefined && finished(plan.droppedBy)) continue;
    if (!(await holds(pool, analytics, plan.output, row.state.output))) return s.step;
  }
  return undefined;
}

/** Resets the records and checkpoints of `step` and every later step; returns the steps reset. */
export async function resetFrom(pool: pg.Pool, step: number): Promise<number[]> {
  const steps = BACKFILL_CHAIN.filter((s) => s.step >= step);
  await pool.query(
    `UPDATE background_migrations SET finished_at = NULL, failed_at = NULL, failed_reason = NULL,
       state = '{}', worker_id = NULL, locked_at = NULL
     WHERE name = ANY($1)`,
    [steps.map((s) => s.name)],
  );
  return steps.map((s) => s.step);
}

/** Resets what lost its output; returns the steps reset (none when every finished step is proven). */
export async function invalidateUnproven(pool: pg.Pool, analytics: ClickHouseClient): Promise<number[]> {
  const step = await firstUnproven(pool, analytics);
  return step === undefined ? [] : resetFrom(pool, step);
}
