/**
 * The blob storage settings (server/contract/env.ts `S3_ENV`): one S3 bucket per purpose, off when
 * its bucket is not set. A secret's value never appears in a refusal.
 */
import { z } from 'zod';
import { ENV_DEFAULTS, S3_PATTERNS, type S3EnvNames } from '../../contract/env.ts';
import { bool, checked, fields, text } from '../../contract/env-schema.ts';

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

const matching = (pattern: string, error: string) =>
  checked(z.string().regex(new RegExp(pattern), { error }));

/** The settings under `names`, undefined when the bucket is not set (and then nothing else may be). */
export const s3Schema = (names: S3EnvNames) =>
  fields({
    bucket: [
      names.bucket,
      matching(
        S3_PATTERNS.bucket,
        "is not a bucket name (3-63 characters: a-z, 0-9, '.', '-', starting and ending with a letter or digit)",
      ),
    ],
    prefix: [names.prefix, matching(S3_PATTERNS.prefix, "must not start with '/'")],
    region: [names.region, text()],
    endpoint: [names.endpoint, matching(S3_PATTERNS.endpoint, 'must be an http:// or https:// URL')],
    forcePathStyle: [names.forcePathStyle, bool(ENV_DEFAULTS.s3ForcePathStyle)],
    accessKeyId: [names.accessKeyId, text()],
    secretAccessKey: [names.secretAccessKey, text()],
  })
    .superRefine((v, ctx) => {
      const problem = (message: string) => ctx.addIssue({ code: 'custom', message });
      if (v.bucket === undefined) {
        const stray = (['endpoint', 'prefix', 'region', 'accessKeyId', 'secretAccessKey'] as const).filter(
          (k) => v[k] !== undefined,
        );
        if (stray.length > 0) problem(`${stray.map((k) => names[k]).join(', ')} set without ${names.bucket}`);
      } else if ((v.accessKeyId === undefined) !== (v.secretAccessKey === undefined)) {
        problem(`${names.accessKeyId} and ${names.secretAccessKey} must be set together`);
      }
    })
    .transform(({ bucket, prefix, region, accessKeyId, secretAccessKey, ...rest }): S3Settings | undefined =>
      bucket === undefined
        ? undefined
        : {
            bucket,
            prefix: prefix ?? '',
            region: region ?? ENV_DEFAULTS.s3Region,
            ...rest,
            credentials:
              accessKeyId !== undefined && secretAccessKey !== undefined
                ? { accessKeyId, secretAccessKey }
                : undefined,
          },
    );
