/**
 * Queued trace deletions in PostgreSQL (table `trace_deletions`): a request answers once its row
 * commits, and the worker deletes the ids in batches. A batch claims its deletions with a lease
 * (`FOR UPDATE SKIP LOCKED`, so replicas never take the same rows at once) that the running batch
 * renews; a worker killed mid-batch leaves the lease to run out, and the next claim repeats that
 * batch (every step of a trace deletion is idempotent). Progress only moves forward: a batch
 * counts its slice only where nothing else counted it first, so no id is counted twice.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { projectRow } from '../../platform/datastores/project-page.ts';
import { inTransaction } from '../../platform/datastores/transaction.ts';
import type { AuditActor } from '../audit/audit.ts';
import { recordTraceTombstones } from '../tombstones/record.ts';
import { type BatchSlice, type DeletionState, planBatch, stateAfter } from './deletion-batches.ts';

/** A queued deletion as its owner sees it. */
export interface TraceDeletionView {
  id: string;
  status: DeletionState;
  traceCount: number;
  deletedCount: number;
  error: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

interface Row {
  id: string;
  state: DeletionState;
  total: number;
  done: number;
  error: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

const VIEW_COLUMNS =
  'id, state, cardinality(trace_ids) AS total, done, error, created_at, updated_at, finished_at';

/** The deletions' rows as `view` reads them. */
const VIEWED = {
  table: 'trace_deletions',
  select: `SELECT ${VIEW_COLUMNS} FROM trace_deletions`,
  alias: 'trace_deletions',
};

const view = (r: Row): TraceDeletionView => ({
  id: r.id,
  status: r.state,
  traceCount: r.total,
  deletedCount: r.done,
  error: r.error,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
  finishedAt: r.finished_at?.toISOString() ?? null,
});

/** Queues the deletion of `traceIds` (each once, in the order given) of one project. */
export async function enqueueTraceDeletion(
  pool: pg.Pool,
  projectId: string,
  actor: AuditActor,
  traceIds: readonly string[],
): Promise<TraceDeletionView> {
  const ids = [...new Set(traceIds)];
  // The tombstones first, with the queue row: from the answer on, no write brings these traces
  // back (server/features/tombstones/), though their rows stay readable until the worker's batch.
  const row = await inTransaction(pool, async (c) => {
    await recordTraceTombstones(c, projectId, actor, ids);
    const { rows } = await c.query<Row>(
      `INSERT INTO trace_deletions (id, project_id, actor, trace_ids) VALUES ($1, $2, $3, $4) RETURNING ${VIEW_COLUMNS}`,
      [randomUUID(), projectId, JSON.stringify(actor), ids],
    );
    return rows[0]!;
  });
  return view(row);
}

/** One deletion of the project, or undefined (another project's id reads as unknown). */
export async function traceDeletionOf(
  pool: pg.Pool,
  projectId: string,
  id: string,
): Promise<TraceDeletionView | undefined> {
  const row = await projectRow<Row>(pool, VIEWED, projectId, id);
  return row && view(row);
}

/** The project's deletions not finished yet, newest first; with `traceId`, those that delete it. */
export async function pendingTraceDeletions(
  pool: pg.Pool,
  projectId: string,
  traceId: string | undefined,
  limit: number,
): Promise<TraceDeletionView[]> {
  const { rows } = await pool.query<Row>(
    `SELECT ${VIEW_COLUMNS} FROM trace_deletions
     WHERE project_id = $1 AND state IN ('queued', 'running') AND ($2::text IS NULL OR $2 = ANY(trace_ids))
     ORDER BY created_at DESC, id LIMIT $3`,
    [projectId, traceId ?? null, limit],
  );
  return rows.map(view);
}

/** A claimed batch: ids of one project, deleted with one actor. */
export interface ClaimedBatch {
  projectId: string;
  actor: AuditActor;
  slices: (BatchSlice & { total: number })[];
  traceIds: string[];
}

/** Deletions one claim may gather (each has at least one id left). */
const MAX_DELETIONS_PER_BATCH = 100;

const CLAIMABLE = `state IN ('queued', 'running') AND done < cardinality(trace_ids)
  AND (lease_until IS NULL OR lease_until < now())`;

/**
 * Claims the next batch, at most `limit` ids: the oldest claimable deletion and those of the same
 * project and actor queued after it. Undefined when nothing is waiting.
 */
export async function claimBatch(
  pool: pg.Pool,
  holder: string,
  leaseMs: number,
  limit: number,
): Promise<ClaimedBatch | undefined> {
  return inTransaction(pool, async (c) => {
    const first = await c.query<{ project_id: string; actor: AuditActor }>(
      `SELECT project_id, actor FROM trace_deletions WHERE ${CLAIMABLE}
       ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`,
    );
    const head = first.rows[0];
    if (!head) return undefined;
    const { rows } = await c.query<{ id: string; trace_ids: string[]; done: number }>(
      `SELECT id, trace_ids, done FROM trace_deletions
       WHERE project_id = $1 AND actor = $2::jsonb AND ${CLAIMABLE}
       ORDER BY created_at, id LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [head.project_id, JSON.stringify(head.actor), MAX_DELETIONS_PER_BATCH],
    );
    const batch = planBatch(
      rows.map((r) => ({ id: r.id, traceIds: r.trace_ids, done: r.done })),
      limit,
    );
    const totals = new Map(rows.map((r) => [r.id, r.trace_ids.length]));
    await c.query(
      `UPDATE trace_deletions SET state = 'running', holder = $2, attempts = attempts + 1, updated_at = now(),
         lease_until = now() + make_interval(secs => $3::int / 1000.0)
       WHERE id = ANY($1::text[])`,
      [batch.slices.map((s) => s.id), holder, Math.trunc(leaseMs)],
    );
    return {
      projectId: head.project_id,
      actor: head.actor,
      slices: batch.slices.map((s) => ({ ...s, total: totals.get(s.id)! })),
      traceIds: batch.traceIds,
    };
  });
}

/** Keeps the batch's lease while it runs. */
export async function renewLease(pool: pg.Pool, holder: string, b: ClaimedBatch, leaseMs: number) {
  await pool.query(
    `UPDATE trace_deletions SET lease_until = now() + make_interval(secs => $3::int / 1000.0)
     WHERE id = ANY($1::text[]) AND holder = $2 AND state = 'running'`,
    [b.slices.map((s) => s.id), holder, Math.trunc(leaseMs)],
  );
}

/**
 * Counts the batch's slices as done. A slice counts only where the deletion's progress is still
 * where the batch found it: a batch repeated after a lost lease is not counted twice.
 */
export async function completeBatch(pool: pg.Pool, b: ClaimedBatch): Promise<void> {
  await pool.query(
    `UPDATE trace_deletions t SET done = s.upto, state = s.state, holder = NULL, lease_until = NULL,
       error = NULL, attempts = 0, updated_at = now(),
       finished_at = CASE WHEN s.state = 'succeeded' THEN now() END
     FROM unnest($1::text[], $2::int[], $3::int[], $4::text[]) AS s(id, since, upto, state)
     WHERE t.id = s.id AND t.done = s.since AND t.state IN ('queued', 'running')`,
    [
      b.slices.map((s) => s.id),
      b.slices.map((s) => s.from),
      b.slices.map((s) => s.to),
      b.slices.map((s) => stateAfter(s, s.total)),
    ],
  );
}

/**
 * Records a failed batch: its deletions are claimable again after `retryMs`, and fail for good
 * once `maxAttempts` batches in a row failed (the error stays visible on the deletion).
 */
export async function failBatch(
  pool: pg.Pool,
  b: ClaimedBatch,
  error: string,
  retryMs: number,
  maxAttempts: number,
): Promise<void> {
  await pool.query(
    `UPDATE trace_deletions SET error = $2, holder = NULL, updated_at = now(),
       state = CASE WHEN attempts >= $4 THEN 'failed' ELSE state END,
       finished_at = CASE WHEN attempts >= $4 THEN now() END,
       lease_until = CASE WHEN attempts >= $4 THEN NULL ELSE now() + make_interval(secs => $3::int / 1000.0) END
     WHERE id = ANY($1::text[]) AND state = 'running'`,
    [b.slices.map((s) => s.id), error.slice(0, 1000), Math.trunc(retryMs), maxAttempts],
  );
}

/**
 * Forgets deletions finished more than `keepMs` ago (their ids are gone from the stores; the audit
 * log keeps who deleted what); the number forgotten.
 */
export async function pruneTraceDeletions(pool: pg.Pool, keepMs: number): Promise<number> {
  const r = await pool.query(
    `DELETE FROM trace_deletions WHERE finished_at < now() - make_interval(secs => $1::float8 / 1000.0)`,
    [keepMs],
  );
  return r.rowCount ?? 0;
}
