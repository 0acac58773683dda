/** The UI's cookies: read and written by @fastify/cookie, with the options and decisions that are ours. */
import type { CookieSerializeOptions, FastifyCookieOptions } from '@fastify/cookie';

/**
 * Percent-decoding of a cookie value; a value that is not valid percent-encoding is no cookie of
 * ours, so it reads as absent (the library's default would pass it on raw).
 */
export function decodeCookieValue(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

// The plugin hands `parseOptions` to the parser (and decode may answer undefined), though its types
// name them serialize options.
export const COOKIE_PLUGIN_OPTIONS = { parseOptions: { decode: decodeCookieValue } } as FastifyCookieOptions;

export interface CookieOptions {
  maxAgeSeconds: number;
  secure: boolean;
  sameSite: 'strict' | 'lax';
}

/** Every cookie of the UI: the whole site, HttpOnly, a whole number of seconds. */
export function cookieAttributes(o: CookieOptions): CookieSerializeOptions {
  return {
    path: '/',
    maxAge: Math.max(0, Math.floor(o.maxAgeSeconds)),
    httpOnly: true,
    sameSite: o.sameSite,
    secure: o.secure,
  };
}

/**
 * Whether cookies carry `Secure`: decided by configuration, never by what the client names as Host.
 * With a public URL configured, its scheme; otherwise the request's own scheme, which is HTTPS only
 * when the connection is TLS or a trusted proxy (SERVICE_TRUSTED_PROXIES) says so in
 * X-Forwarded-Proto (Fastify's `request.protocol`).
 */
export function secureFor(publicUrl: URL | undefined, protocol: string): boolean {
  return (publicUrl?.protocol ?? `${protocol}:`) === 'https:';
}
