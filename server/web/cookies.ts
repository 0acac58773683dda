/** The `Cookie` request header and `Set-Cookie` values. Pure. */

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    const name = part.slice(0, Math.max(0, i)).trim();
    if (name === '' || name in out) continue; // the first of duplicates is the most specific path's
    try {
      out[name] = decodeURIComponent(part.slice(i + 1).trim());
    } catch {
      // A value that is not valid percent-encoding is no cookie of ours.
    }
  }
  return out;
}

export interface CookieOptions {
  maxAgeSeconds: number;
  secure: boolean;
  sameSite: 'Strict' | 'Lax';
}

export function serializeCookie(name: string, value: string, o: CookieOptions): string {
  return [
    `${name}=${encodeURIComponent(value)}`,
    'Path=/',
    `Max-Age=${Math.max(0, Math.floor(o.maxAgeSeconds))}`,
    'HttpOnly',
    `SameSite=${o.sameSite}`,
    ...(o.secure ? ['Secure'] : []),
  ].join('; ');
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
