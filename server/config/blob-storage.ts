/**
 * The blob storage settings (server/contract/env.ts `S3_ENV`): one S3 bucket per purpose, off when
 * its bucket is not set. A secret's value never appears in a refusal.
 */
import { z } from 'zod';
import { ENV_DEFAULTS, S3_PATTERNS, type S3EnvNames } from '../contract/env.ts';
import { bool, checked, text } from '../contract/env-schema.ts';

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
  z
    .object({
      [names.bucket]: matching(
        S3_PATTERNS.bucket,
        "is not a bucket name (3-63 characters: a-z, 0-9, '.', '-', starting and ending with a letter or digit)",
      ),
      [names.prefix]: matching(S3_PATTERNS.prefix, "must not start with '/'"),
      [names.region]: text(),
      [names.endpoint]: matching(S3_PATTERNS.endpoint, 'must be an http:// or https:// URL'),
      [names.forcePathStyle]: bool(ENV_DEFAULTS.s3ForcePathStyle),
      [names.accessKeyId]: text(),
      [names.secretAccessKey]: text(),
    })
    .transform((v) => {
      // The keys are computed from `names`, so zod types every value alike: read each as its kind.
      const set = (k: Exclude<keyof S3EnvNames, 'forcePathStyle'>) => {
        const value = v[names[k]];
        return typeof value === 'string' ? value : undefined;
      };
      return {
        bucket: set('bucket'),
        prefix: set('prefix'),
        region: set('region'),
        endpoint: set('endpoint'),
        forcePathStyle: v[names.forcePathStyle] === true,
        accessKeyId: set('accessKeyId'),
        secretAccessKey: set('secretAccessKey'),
      };
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
    .transform(({ bucket, prefix, region, endpoint, forcePathStyle, accessKeyId, secretAccessKey }) =>
      bucket === undefined
        ? undefined
        : {
            bucket,
            prefix: prefix ?? '',
            region: region ?? ENV_DEFAULTS.s3Region,
            endpoint,
            forcePathStyle,
            credentials:
              accessKeyId !== undefined && secretAccessKey !== undefined
                ? { accessKeyId, secretAccessKey }
                : undefined,
          },
    );
