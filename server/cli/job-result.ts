/**
 * The end of a command the operator runs as a Job (`SERVICE_JOB_NAME` set): its exit code becomes
 * the Job's durable result (server/features/job-results/). Run by hand, nothing is recorded. A result that
 * cannot be recorded is said, and the exit code stands: the Job's own outcome still tells. The
 * detail reaches the operator's status and support bundles, so a datastore URL in it loses its password.
 */
import type pg from 'pg';
import { recordJobResult } from '../features/job-results/store.ts';
import type { ServiceConfig } from '../kernel/config/env.ts';
import { hideUrlCredentials } from './failure.ts';

export async function endOfJob(
  config: ServiceConfig,
  pool: pg.Pool,
  command: string,
  code: number,
  detail: string,
): Promise<number> {
  if (!config.jobName) return code;
  const result = code === 0 ? 'succeeded' : 'failed';
  await recordJobResult(pool, {
    job: config.jobName,
    command,
    result,
    detail: hideUrlCredentials(detail),
  }).catch((err: Error) =>
    process.stderr.write(`observatory ${command}: the Job's result could not be recorded: ${err.message}\n`),
  );
  return code;
}
