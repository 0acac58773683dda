/**
 * The operator's Jobs: one CLI command each, named `<name>-<purpose>-<hash of the attempt inputs>`
 * so a step attempt maps to exactly one Job whatever the number of reconciles or restarts.
 */
import type { V1Container, V1EnvVar, V1Job } from '@kubernetes/client-node';
import { BACKUP_CLI, type BackupPart, TERMINATION_MESSAGE_PATH } from '../../server/contract/backup.ts';
import { BACKFILL_DEFAULTS, BACKFILL_ENV, type BackfillTuningKey, ENV } from '../../server/contract/env.ts';
import { RELEASE_3_SCHEMA_VERSION } from '../../server/contract/schema-versions.ts';
import type { Spec } from '../api/effective.ts';
import { DEFAULT_JOB_TTL_SECONDS, type MigrationState } from '../api/v1alpha1.ts';
import { shortHash } from '../util/hash.ts';
import { backupEnv, restoreLogEnv } from './blob-storage.ts';
import { containerEnv } from './env.ts';
import { value } from './env-var.ts';
import { ATTEMPT_ANNOTATION, jobName, labels, ownerReference, PURPOSE_ANNOTATION } from './names.ts';
import { applyTemplate } from './pod.ts';
import { modeSettingsFor } from './settings.ts';
import type { RenderContext } from './workloads.ts';

export type JobPurpose =
  | 'preflight'
  | 'migrate'
  | 'rollback'
  | 'cleanup'
  | 'backup'
  | 'restore'
  | 'backup-prune'
  | 'backup-verify'
  | `backfill-${number}`
  | `backfill-retry-${number}`;

export const backfillPurpose = (step: number): JobPurpose => `backfill-${step}`;
export const backfillRetryPurpose = (step: number): JobPurpose => `backfill-retry-${step}`;

/** What a backup or restore Job works on. */
export interface BackupTarget {
  id: string;
  include: readonly BackupPart[];
}

/** What a retention Job keeps: the spec's rules and the backups still needed. */
export interface PruneTarget {
  keepLast?: number;
  maxAge?: string;
  protect: readonly string[];
}

/** The Jobs that reach the backup bucket and leave a summary in their termination message. */
const BUCKET_JOBS: ReadonlySet<JobPurpose> = new Set(['backup', 'restore', 'backup-prune', 'backup-verify']);

/** CLI args of each purpose (the image's entrypoint is the `observatory` CLI). */
export function jobArgs(
  purpose: JobPurpose,
  backup?: BackupTarget,
  prune?: PruneTarget,
  schemaVersion = RELEASE_3_SCHEMA_VERSION,
): string[] {
  const step = /^backfill-(retry-)?(\d)$/.exec(purpose);
  if (step) return ['backfill', step[1] ? 'retry' : 'run', '--step', step[2]!];
  switch (purpose) {
    case 'preflight':
      return ['preflight', '--json'];
    case 'migrate':
      return ['migrate', 'up'];
    case 'rollback':
      return ['migrate', 'down', '--to', String(schemaVersion)];
    case 'cleanup':
      return ['cleanup', 'truncate-legacy-tables'];
    case 'backup-prune':
      if (!prune) throw new RangeError('a backup-prune Job needs its retention');
      return [
        BACKUP_CLI.prune,
        ...(prune.keepLast !== undefined ? [BACKUP_CLI.keepLastFlag, String(prune.keepLast)] : []),
        ...(prune.maxAge !== undefined ? [BACKUP_CLI.maxAgeFlag, prune.maxAge] : []),
        ...(prune.protect.length > 0 ? [BACKUP_CLI.protectFlag, prune.protect.join(',')] : []),
      ];
    case 'backup-verify':
      if (!backup) throw new RangeError('a backup-verify Job needs a backup id');
      return [BACKUP_CLI.verify, BACKUP_CLI.idFlag, backup.id];
    case 'backup':
    case 'restore':
      if (!backup) throw new RangeError(`a ${purpose} Job needs a backup id`);
      return [
        BACKUP_CLI[purpose],
        BACKUP_CLI.idFlag,
        backup.id,
        ...(purpose === 'backup' ? [BACKUP_CLI.includeFlag, backup.include.join(',')] : []),
      ];
  }
  throw new RangeError(`unknown job purpose ${purpose}`);
}

/**
 * Pod retries per purpose (G6): the schema commands and the truncate are idempotent; a backfill
 * step records its failure, after which only an explicit retry may run it again. A backup or
 * restore whose Pod died is not retried by Kubernetes: the failure is recorded and a retry is the
 * admin's request (a backup rewritten under the same id could mix two attempts' objects).
 */
const BACKOFF_LIMIT = (purpose: JobPurpose): number =>
  purpose === 'migrate' || purpose === 'rollback' || purpose === 'cleanup' ? 2 : 0;

/**
 * Purposes whose command records its result under the Job's name (server/features/job-results/), which the
 * planner reads when the Pod or the Job is gone. A backfill step records its own in its chain row;
 * a backup's or restore's summary comes back in the termination message.
 */
const RECORDS_RESULT: ReadonlySet<JobPurpose> = new Set(['preflight', 'migrate', 'rollback', 'cleanup']);
const REPORTS_SUMMARY: ReadonlySet<JobPurpose> = new Set(['preflight', ...BUCKET_JOBS]);

export interface JobRequest {
  purpose: JobPurpose;
  /** State whose settings the Job runs with (a state the server accepts for that command). */
  state: MigrationState;
  image: string;
  attempt: number;
  /** Extra inputs that make a new attempt (e.g. the image a migration is for). */
  inputs?: Record<string, string>;
  /** The backup a backup or restore Job works on. */
  backup?: BackupTarget;
  /** The retention a backup-prune Job applies. */
  prune?: PruneTarget;
  /** The version a rollback Job rewinds the analytics schema to (default: release 3's). */
  schemaVersion?: number;
}

/** The name of the Job of one attempt: stable across reconciles and restarts. */
export function jobNameFor(
  ctx: RenderContext,
  r: Pick<JobRequest, 'purpose' | 'attempt' | 'inputs'>,
): string {
  return jobName(ctx.meta.name, r.purpose, attemptHash(ctx, r));
}

export function attemptHash(
  ctx: RenderContext,
  r: Pick<JobRequest, 'purpose' | 'attempt' | 'inputs'>,
): string {
  return shortHash({ uid: ctx.meta.uid, purpose: r.purpose, attempt: r.attempt, inputs: r.inputs ?? {} });
}

/** The backfill's tuning from the spec, for the Jobs that run a step (the row takes it from there). */
export function backfillTuningEnv(spec: Spec): V1EnvVar[] {
  return (Object.keys(BACKFILL_ENV) as BackfillTuningKey[]).map((k) =>
    value(BACKFILL_ENV[k], spec.backfill?.[k] ?? BACKFILL_DEFAULTS[k]),
  );
}

export function renderJob(ctx: RenderContext, r: JobRequest): V1Job {
  const { meta, spec } = ctx;
  const backfillGate = r.purpose.startsWith('backfill-');
  const jobLabels = labels(meta.name, r.purpose);
  const pod = applyTemplate(
    spec.jobs?.template,
    {
      name: 'observatory',
      image: r.image,
      imagePullPolicy: spec.imagePullPolicy,
      args: jobArgs(r.purpose, r.backup, r.prune, r.schemaVersion),
      // The bucket Jobs' summaries (server/contract/backup.ts) and the preflight's schema report
      // (server/contract/upgrade.ts) come back through this file.
      ...(REPORTS_SUMMARY.has(r.purpose) ? { terminationMessagePath: TERMINATION_MESSAGE_PATH } : {}),
      env: [
        ...containerEnv(
          spec,
          modeSettingsFor(
            r.state,
            spec,
            { backfillGate, dropGate: r.purpose === 'backfill-5' },
            ctx.recorded,
          ),
        ),
        ...(/^backfill-\d$/.test(r.purpose) ? backfillTuningEnv(spec) : []),
        ...(RECORDS_RESULT.has(r.purpose) ? [value(ENV.jobName, jobNameFor(ctx, r))] : []),
        ...(BUCKET_JOBS.has(r.purpose) ? backupEnv(spec) : []),
        ...(r.purpose === 'restore' ? restoreLogEnv(spec) : []),
      ],
      ...(spec.jobs?.resources ? { resources: spec.jobs.resources as V1Container['resources'] } : {}),
    },
    { labels: jobLabels, annotations: {}, selector: jobLabels },
    { restartPolicy: 'Never' },
  );
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobNameFor(ctx, r),
      namespace: meta.namespace,
      labels: jobLabels,
      annotations: { [PURPOSE_ANNOTATION]: r.purpose, [ATTEMPT_ANNOTATION]: String(r.attempt) },
      ownerReferences: [ownerReference(meta)],
    },
    spec: {
      backoffLimit: BACKOFF_LIMIT(r.purpose),
      // The planner records the result in status.jobs, so the Job may go after this long.
      ttlSecondsAfterFinished:
        (r.backup || r.prune ? spec.backup?.ttlSecondsAfterFinished : undefined) ??
        spec.jobs?.ttlSecondsAfterFinished ??
        DEFAULT_JOB_TTL_SECONDS,
      template: {
        metadata: {
          labels: pod.labels,
          ...(Object.keys(pod.annotations).length > 0 ? { annotations: pod.annotations } : {}),
        },
        spec: pod.spec,
      },
    },
  };
}
