/**
 * The blob storage settings (server/contract/env.ts `S3_ENV`): one S3 bucket per purpose, off when
 * its bucket is not set. Problems go to the reader, one line naming the variable; a secret's value
 * never appears in them.
 */
import { ENV_DEFAULTS, type EnvReader, S3_PATTERNS, type S3EnvNames } from '../contract/env.ts';

export interface S3Settings {
  bucket: string;
  /** Prepended to every object key as given. */
  prefix: string;
  region: string;
  endpoint: string | undefined;
  forcePathStyle: boolean;
  /** Absent: the AWS SDK's default credential chain (environment, web identity, instance role). */
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
}

const BUCKET_NAME = new RegExp(S3_PATTERNS.bucket);
const ENDPOINT = new RegExp(S3_PATTERNS.endpoint);
const PREFIX = new RegExp(S3_PATTERNS.prefix);

/** The settings under `names`, or undefined when the bucket is not set (and nothing else is). */
export function readS3Settings(r: EnvReader, names: S3EnvNames): S3Settings | undefined {
  const bucket = r.raw(names.bucket);
  const accessKeyId = r.raw(names.accessKeyId);
  const secretAccessKey = r.raw(names.secretAccessKey);
  const endpoint = r.raw(names.endpoint);
  const forcePathStyle = r.bool(names.forcePathStyle, ENV_DEFAULTS.s3ForcePathStyle);
  if (bucket === undefined) {
    const stray = [
      names.endpoint,
      names.prefix,
      names.region,
      names.accessKeyId,
      names.secretAccessKey,
    ].filter((n) => r.raw(n) !== undefined);
    if (stray.length > 0) r.problems.push(`${stray.join(', ')} set without ${names.bucket}`);
    return undefined;
  }
  if (!BUCKET_NAME.test(bucket)) {
    r.problems.push(
      `${names.bucket}=${bucket} is not a bucket name (3-63 characters: a-z, 0-9, '.', '-', starting and ending with a letter or digit)`,
    );
  }
  if (endpoint !== undefined && !ENDPOINT.test(endpoint)) {
    r.problems.push(`${names.endpoint} must be an http:// or https:// URL`);
  }
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    r.problems.push(`${names.accessKeyId} and ${names.secretAccessKey} must be set together`);
  }
  const prefix = r.raw(names.prefix) ?? '';
  if (!PREFIX.test(prefix)) r.problems.push(`${names.prefix} must not start with '/'`);
  return {
    bucket,
    prefix,
    region: r.raw(names.region) ?? ENV_DEFAULTS.s3Region,
    endpoint,
    forcePathStyle,
    credentials:
      accessKeyId !== undefined && secretAccessKey !== undefined
        ? { accessKeyId, secretAccessKey }
        : undefined,
  };
}
