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
 * Cookies are `Secure` except on plain HTTP to a loopback host (`observatory dev` on
 * http://127.0.0.1), where a browser would otherwise drop them; anything reached over a network
 * is expected behind TLS.
 */
export function secureFor(host: string | undefined, protocol: string): boolean {
  const hostname = (host ?? '').replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  const loopback = hostname === 'localhost' || hostname === '::1' || /^127\./.test(hostname);
  return protocol === 'https' || !loopback;
}
