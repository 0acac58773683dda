/**
 * How a stored object is answered to a browser. Uploads keep every content type the reference
 * accepts (features/media/rules.ts), HTML, SVG and scripts included, but only types a browser renders
 * without running anything are shown inline: raster images, audio, video and plain text. Anything
 * else (HTML, SVG, XML, JavaScript, PDF, office files, archives, ...) is a download
 * (`Content-Disposition: attachment`), so an uploaded page cannot run on the origin that serves it.
 * Every answer also carries `nosniff` and a sandboxing CSP, so no type is guessed from the bytes
 * and a document opened anyway has no scripts, no origin and no subresources. Pure.
 */

export interface ServedAs {
  contentType: string;
  contentDisposition: string;
}

/** Headers on every object answer of a store the service serves itself. */
export const SANDBOX_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "sandbox; default-src 'none'",
} as const;

const INLINE_PREFIXES = ['image/', 'audio/', 'video/'];
/** Within the inline families, the types a browser executes or parses as a document. */
const NEVER_INLINE = new Set(['image/svg+xml']);
const INLINE_EXACT = new Set(['text/plain']);

/** The type without parameters, lower-cased: `Text/HTML; charset=utf-8` -> `text/html`. */
export const baseType = (contentType: string): string => contentType.split(';')[0]!.trim().toLowerCase();

export function isInlineSafe(contentType: string): boolean {
  const type = baseType(contentType);
  if (NEVER_INLINE.has(type)) return false;
  return INLINE_EXACT.has(type) || INLINE_PREFIXES.some((p) => type.startsWith(p));
}

/** The object's type (octet-stream when unknown) and disposition; a download is named after the key. */
export function servedAs(contentType: string | undefined, key: string): ServedAs {
  const type = contentType?.trim() || 'application/octet-stream';
  if (isInlineSafe(type)) return { contentType: type, contentDisposition: 'inline' };
  const name = (key.split('/').pop() ?? '').replace(/[^A-Za-z0-9._-]/g, '_') || 'download';
  return { contentType: type, contentDisposition: `attachment; filename="${name}"` };
}
