/**
 * Signed, expiring URLs of the local blob store (local.ts): what S3's presigned URLs are for the
 * dev process. The query carries the grant (method, expiry, and for a PUT the exact body it
 * accepts) and an HMAC-SHA256 over it and the object, so nothing in a URL can be changed or
 * reused for another object. Pure: no I/O; the caller passes the clock.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type SignedMethod = 'GET' | 'PUT';

export interface Grant {
  method: SignedMethod;
  bucket: string;
  key: string;
  /** Epoch seconds after which the URL is refused. */
  expires: number;
  /** PUT only: the body the URL accepts. */
  contentType?: string | undefined;
  contentLength?: number | undefined;
  sha256Base64?: string | undefined;
}

function canonical(g: Grant): string {
  return [
    g.method,
    g.bucket,
    g.key,
    g.expires,
    g.contentType ?? '',
    g.contentLength ?? '',
    g.sha256Base64 ?? '',
  ].join('\n');
}

const signatureOf = (secret: Buffer, g: Grant) =>
  createHmac('sha256', secret).update(canonical(g)).digest('base64url');

/** The query string that grants `g` (without the leading `?`). */
export function signGrant(secret: Buffer, g: Grant): string {
  const q = new URLSearchParams({ expires: String(g.expires) });
  if (g.contentType !== undefined) q.set('contentType', g.contentType);
  if (g.contentLength !== undefined) q.set('contentLength', String(g.contentLength));
  if (g.sha256Base64 !== undefined) q.set('sha256', g.sha256Base64);
  q.set('signature', signatureOf(secret, g));
  return q.toString();
}

export type Query = Record<string, string | string[] | undefined>;

const one = (q: Query, name: string) => {
  const v = q[name];
  return Array.isArray(v) ? undefined : v;
};

/** The grant a request's query proves for `method` on `bucket`/`key` at `nowSeconds`, or why it proves none. */
export function verifyGrant(
  secret: Buffer,
  request: { method: SignedMethod; bucket: string; key: string; query: Query },
  nowSeconds: number,
): Grant | { refusal: string } {
  const signature = one(request.query, 'signature');
  const expires = Number(one(request.query, 'expires'));
  if (signature === undefined || !Number.isInteger(expires)) return { refusal: 'not a signed URL' };
  const length = one(request.query, 'contentLength');
  const grant: Grant = {
    method: request.method,
    bucket: request.bucket,
    key: request.key,
    expires,
    contentType: one(request.query, 'contentType'),
    contentLength: length === undefined ? undefined : Number(length),
    sha256Base64: one(request.query, 'sha256'),
  };
  const expected = Buffer.from(signatureOf(secret, grant));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    return { refusal: 'the signature does not match this request' };
  }
  if (nowSeconds > expires) return { refusal: 'the URL has expired' };
  return grant;
}
