/**
 * Which role reads which bucket, and the variables of each (`server/contract/env.ts` S3_ENV,
 * INGESTION_LOG_S3_ENV): the web Pods serve the media API and accept export settings (and list their
 * files), the worker runs the exports and deletes the media that data retention leaves unlinked; both
 * write or drain the ingestion log; the other Jobs read none of them. Only the backup and restore
 * Jobs read the backup destination, and the restore Job the ingestion log too (it replays the
 * log's writes the backup lacks). Credentials only as secretKeyRef, so a key never lands in a
 * Deployment; the same references feed the rollout hash (sources.ts).
 */
import type { V1EnvVar } from '@kubernetes/client-node';
import { BACKUP_S3_ENV } from '../../server/contract/backup.ts';
import {
  ENV,
  INGESTION_LOG_ENV,
  INGESTION_LOG_S3_ENV,
  S3_ENV,
  type S3EnvNames,
} from '../../server/contract/env.ts';
import type { BackupSpec, BlobStorage, ObservabilityServiceSpec, SecretKeyRef } from '../api/v1alpha1.ts';
import { secret, value } from './env-var.ts';
import type { SourceReader } from './names.ts';

type Purpose = keyof BlobStorage;
type Bucket = NonNullable<BlobStorage[Purpose]>;

/** The variables of each bucket the spec names (the log's are named like the reference's event upload). */
const NAMES: Record<Purpose, S3EnvNames> = {
  media: S3_ENV.media,
  exports: S3_ENV.export,
  ingestionLog: INGESTION_LOG_S3_ENV,
};

/** The web writes the log and reads its backlog; the worker drains, sweeps and prunes it. */
const PURPOSES_OF: Record<SourceReader, readonly Purpose[]> = {
  web: ['media', 'exports', 'ingestionLog'],
  worker: ['media', 'exports', 'ingestionLog'],
  jobs: [],
};

/** The configured buckets a role reads, with their purpose. */
function bucketsRead(
  spec: ObservabilityServiceSpec,
  role: SourceReader,
): { purpose: Purpose; bucket: Bucket }[] {
  return PURPOSES_OF[role].flatMap((purpose) => {
    const bucket = spec.blobStorage?.[purpose];
    return bucket ? [{ purpose, bucket }] : [];
  });
}

/** The Secret keys a role's buckets take their credentials from. */
export function blobSecretRefs(spec: ObservabilityServiceSpec, role: SourceReader): SecretKeyRef[] {
  return bucketsRead(spec, role).flatMap(({ bucket }) =>
    bucket.accessKeyIdSecretRef && bucket.secretAccessKeySecretRef
      ? [bucket.accessKeyIdSecretRef, bucket.secretAccessKeySecretRef]
      : [],
  );
}

/** One bucket's variables under `names`; credentials only as secretKeyRef. */
function bucketEnv(names: S3EnvNames, bucket: Bucket | BackupSpec['destination']): V1EnvVar[] {
  const env: V1EnvVar[] = [value(names.bucket, bucket.bucket)];
  if (bucket.prefix) env.push(value(names.prefix, bucket.prefix));
  if (bucket.region !== undefined) env.push(value(names.region, bucket.region));
  if (bucket.endpoint !== undefined) env.push(value(names.endpoint, bucket.endpoint));
  if (bucket.forcePathStyle !== undefined) env.push(value(names.forcePathStyle, bucket.forcePathStyle));
  if (bucket.accessKeyIdSecretRef && bucket.secretAccessKeySecretRef)
    env.push(
      secret(names.accessKeyId, bucket.accessKeyIdSecretRef),
      secret(names.secretAccessKey, bucket.secretAccessKeySecretRef),
    );
  return env;
}

/** The backup destination's variables, for the backup and restore Jobs only. */
export function backupEnv(spec: ObservabilityServiceSpec): V1EnvVar[] {
  return spec.backup ? bucketEnv(BACKUP_S3_ENV, spec.backup.destination) : [];
}

/** The ingestion log's bucket and settings for the restore Job, which replays it; none without a log. */
export function restoreLogEnv(spec: ObservabilityServiceSpec): V1EnvVar[] {
  const log = spec.blobStorage?.ingestionLog;
  return log ? [...bucketEnv(INGESTION_LOG_S3_ENV, log), ...logSettingsEnv(log)] : [];
}

/** The blob storage variables of a role; none when blob storage is not configured. */
export function blobEnv(spec: ObservabilityServiceSpec, role: SourceReader): V1EnvVar[] {
  const env = bucketsRead(spec, role).flatMap(({ purpose, bucket }) => bucketEnv(NAMES[purpose], bucket));
  const media = role === 'web' ? spec.blobStorage?.media : undefined;
  if (media?.maxContentLength !== undefined)
    env.push(value(ENV.mediaMaxContentLength, media.maxContentLength));
  if (media?.downloadUrlExpirySeconds !== undefined)
    env.push(value(ENV.mediaDownloadUrlExpirySeconds, media.downloadUrlExpirySeconds));
  const exports = role === 'worker' ? spec.blobStorage?.exports : undefined;
  if (exports?.intervalSeconds !== undefined)
    env.push(value(ENV.exportIntervalSeconds, exports.intervalSeconds));
  env.push(...ingestionLogEnv(spec, role));
  return env;
}

/** The log's settings of a role that reads it. */
function ingestionLogEnv(spec: ObservabilityServiceSpec, role: SourceReader): V1EnvVar[] {
  const log = PURPOSES_OF[role].includes('ingestionLog') ? spec.blobStorage?.ingestionLog : undefined;
  return log ? logSettingsEnv(log) : [];
}

/** The log's settings, where set (unset ones take the server's defaults). */
function logSettingsEnv(log: NonNullable<BlobStorage['ingestionLog']>): V1EnvVar[] {
  const settings: [string, string | number | boolean | undefined][] = [
    [INGESTION_LOG_ENV.waitForStore, log.waitForStore],
    [INGESTION_LOG_ENV.backlogMaxAgeSeconds, log.backlogMaxAgeSeconds],
    [INGESTION_LOG_ENV.backlogMaxBytes, log.backlogMaxBytes],
    [INGESTION_LOG_ENV.retentionHours, log.retentionHours],
    [INGESTION_LOG_ENV.drainLeaseSeconds, log.drainLeaseSeconds],
  ];
  return settings.flatMap(([name, v]) => (v === undefined ? [] : [value(name, v)]));
}
