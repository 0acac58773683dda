/**
 * The durable copy of a Job's outcome: each one-shot command the operator runs as a Job (preflight,
 * migrate, cleanup) records its result under its Job's name as it ends, as a backfill step records
 * its own in `background_migrations`. A Pod killed after the work, or a Job removed before the
 * operator saw it complete, loses its outcome with it; this row stays, and the worker reports it
 * (`GET /api/job-results`) for the operator to read.
 */
import type pg from 'pg';
import { JOB_RESULTS_LIMIT, type JobResultRecord } from '../../contract/worker-api.ts';

export type JobResult = Omit<JobResultRecord, 'recordedAt'>;

const MAX_DETAIL = 1000;

/**
 * Records a Job's result. A success stays: a later Pod of the same Job (Kubernetes retries one that
 * was killed) ran the command again after the work was done, and cannot undo it.
 */
export async function recordJobResult(pool: pg.Pool, r: JobResult): Promise<void> {
  await pool.query(
    `INSERT INTO job_results (job, command, result, detail) VALUES ($1, $2, $3, $4)
     ON CONFLICT (job) DO UPDATE SET command = EXCLUDED.command, result = EXCLUDED.result,
       detail = EXCLUDED.detail, recorded_at = now()
     WHERE job_results.result <> 'succeeded'`,
    [r.job, r.command, r.result, r.detail.slice(0, MAX_DETAIL)],
  );
}

/** The latest results, newest first. */
export async function latestJobResults(pool: pg.Pool): Promise<JobResultRecord[]> {
  const r = await pool.query<{
    job: string;
    command: string;
    result: JobResultRecord['result'];
    detail: string;
    recorded_at: Date;
  }>('SELECT job, command, result, detail, recorded_at FROM job_results ORDER BY recorded_at DESC LIMIT $1', [
    JOB_RESULTS_LIMIT,
  ]);
  return r.rows.map(({ recorded_at, ...row }) => ({ ...row, recordedAt: recorded_at.toISOString() }));
}
