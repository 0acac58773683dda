/**
 * The web's sign-in and session settings: which proxies are trusted for the client address and
 * scheme, the public URL, the session lifetime and the sign-in limits.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { AUTH_ENV } from '../../contract/env.ts';
import { checked, fields, limited } from '../../contract/env-schema.ts';

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

const notProxies =
  'is not true, false, a hop count (1-32) or a comma-separated list of IP addresses and CIDR ranges';
const trustedProxies = z.union(
  [
    z.enum(['true', 'false']).transform((v) => v === 'true'),
    z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1).max(32)),
    z
      .string()
      .transform((v) => v.split(',').map((p) => p.trim()))
      .pipe(z.array(z.string().refine(isAddressOrRange, { error: notProxies })).min(1)),
  ],
  { error: notProxies },
);

const noPath = 'is not an http:// or https:// URL without a path';
const publicUrl = z
  .url({ protocol: /^https?$/, error: noPath })
  .transform((v) => new URL(v))
  .refine((u) => u.pathname === '/' || u.pathname === '', { error: noPath });

/** How a web signs people in and keeps their sessions. */
export const signInSchema = fields({
  trustedProxies: [AUTH_ENV.trustedProxies, checked(trustedProxies)],
  sessionMaxAgeMinutes: [AUTH_ENV.sessionMaxAgeMinutes, limited('sessionMaxAgeMinutes')],
  signInLimitPerAccountAddress: [
    AUTH_ENV.signInLimitPerAccountAddress,
    limited('signInLimitPerAccountAddress'),
  ],
  signInLimitPerAddress: [AUTH_ENV.signInLimitPerAddress, limited('signInLimitPerAddress')],
}).transform((a): { auth: Omit<AuthSettings, 'publicUrl'> } => ({
  auth: { ...a, trustedProxies: a.trustedProxies ?? false },
}));

/** Where users reach the UI, apart: the worker's notifications link there too. */
export const publicUrlSchema = fields({ publicUrl: [AUTH_ENV.publicUrl, checked(publicUrl)] }).transform(
  (a): { auth: Pick<AuthSettings, 'publicUrl'> } => ({ auth: a }),
);
