/**
 * The web's sign-in and session settings: which proxies are trusted for the client address and
 * scheme, the public URL, the session lifetime and the sign-in limits. Parsed with zod; a bad value
 * becomes one problem line naming its variable.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { AUTH_ENV, ENV_DEFAULTS, ENV_LIMITS, type EnvReader } from '../contract/env.ts';

/** Fastify's `trustProxy`: off, every hop, a hop count, or the proxies' addresses and CIDR ranges. */
export type TrustedProxies = boolean | number | string[];

export interface AuthSettings {
  trustedProxies: TrustedProxies;
  /** The origin users reach the UI at; absent: cookies are `Secure` when the request came over HTTPS. */
  publicUrl: URL | undefined;
  sessionMaxAgeMinutes: number;
  signInLimitPerAccountAddress: number;
  signInLimitPerAddress: number;
}

const isAddressOrRange = (s: string): boolean => {
  const [address = '', prefix, ...rest] = s.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  const bits = Number(prefix);
  return /^\d+$/.test(prefix) && bits <= (family === 4 ? 32 : 128);
};

const trustedProxies = z.union([
  z.enum(['true', 'false']).transform((v) => v === 'true'),
  z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1).max(32)),
  z
    .string()
    .transform((v) => v.split(',').map((p) => p.trim()))
    .pipe(z.array(z.string().refine(isAddressOrRange)).min(1)),
]);

const publicUrl = z
  .url({ protocol: /^https?$/ })
  .transform((v) => new URL(v))
  .refine((u) => u.pathname === '/' || u.pathname === '', 'no path');

const intIn = ({ min, max }: { min: number; max: number }) =>
  z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(min).max(max));

/** Parses `value` of variable `name` with `schema`; a failure adds "`name`=`value` <what is allowed>". */
function parse<T>(r: EnvReader, name: string, schema: z.ZodType<T, string>, allowed: string, fallback: T): T {
  const value = r.raw(name);
  if (value === undefined) return fallback;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  r.problems.push(`${name}=${value} is not ${allowed}`);
  return fallback;
}

export function readAuthSettings(r: EnvReader): AuthSettings {
  const range = (k: 'sessionMaxAgeMinutes' | 'signInLimitPerAccountAddress' | 'signInLimitPerAddress') =>
    parse(
      r,
      AUTH_ENV[k],
      intIn(ENV_LIMITS[k]),
      `an integer between ${ENV_LIMITS[k].min} and ${ENV_LIMITS[k].max}`,
      ENV_DEFAULTS[k],
    );
  return {
    trustedProxies: parse(
      r,
      AUTH_ENV.trustedProxies,
      trustedProxies,
      'true, false, a hop count (1-32) or a comma-separated list of IP addresses and CIDR ranges',
      false,
    ),
    publicUrl: parse(
      r,
      AUTH_ENV.publicUrl,
      publicUrl,
      'an http:// or https:// URL without a path',
      undefined,
    ),
    sessionMaxAgeMinutes: range('sessionMaxAgeMinutes'),
    signInLimitPerAccountAddress: range('signInLimitPerAccountAddress'),
    signInLimitPerAddress: range('signInLimitPerAddress'),
  };
}
