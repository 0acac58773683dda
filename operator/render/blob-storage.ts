/**
 * Which role reads which bucket, and the variables of each (`server/contract/env.ts` S3_ENV): the
 * web Pods serve the media API and accept export settings (and list their files), the worker runs
 * the exports and deletes the media that data retention leaves unlinked; the Jobs read neither, and
 * only the backup and restore Jobs read the backup destination. Credentials only as secretKeyRef, so a key never lands in a
 * Deployment; the same references feed the rollout hash (sources.ts).
 */
import type { V1EnvVar } from '@kubernetes/client-node';
import { BACKUP_S3_ENV } from '../../server/contract/backup.ts';
import { type BlobPurpose, ENV, S3_ENV, type S3EnvNames } from '../../server/contract/env.ts';
import type { BackupSpec, BlobStorage, ObservabilityServiceSpec, SecretKeyRef } from '../api/v1alpha1.ts';
import { secret, value } from './env-var.ts';
import type { SourceReader } from './names.ts';

type Bucket = NonNullable<BlobStorage['media'] | BlobStorage['exports']>;

const PURPOSES_OF: Record<SourceReader, readonly BlobPurpose[]> = {
  web: ['media', 'export'],
  worker: ['media', 'export'],
  jobs: [],
};

function bucketFor(spec: ObservabilityServiceSpec, purpose: BlobPurpose): Bucket | undefined {
  return purpose === 'media' ? spec.blobStorage?.media : spec.blobStorage?.exports;
}

/** The configured buckets a role reads, with their purpose. */
function bucketsRead(
  spec: ObservabilityServiceSpec,
  role: SourceReader,
): { purpose: BlobPurpose; bucket: Bucket }[] {
  return PURPOSES_OF[role].flatMap((purpose) => {
    const bucket = bucketFor(spec, purpose);
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

/** The blob storage variables of a role; none when blob storage is not configured. */
export function blobEnv(spec: ObservabilityServiceSpec, role: SourceReader): V1EnvVar[] {
  const env = bucketsRead(spec, role).flatMap(({ purpose, bucket }) => bucketEnv(S3_ENV[purpose], bucket));
  const media = role === 'web' ? spec.blobStorage?.media : undefined;
  if (media?.maxContentLength !== undefined)
    env.push(value(ENV.mediaMaxContentLength, media.maxContentLength));
  if (media?.downloadUrlExpirySeconds !== undefined)
    env.push(value(ENV.mediaDownloadUrlExpirySeconds, media.downloadUrlExpirySeconds));
  const exports = role === 'worker' ? spec.blobStorage?.exports : undefined;
  if (exports?.intervalSeconds !== undefined)
    env.push(value(ENV.exportIntervalSeconds, exports.intervalSeconds));
  return env;
}
