import type { IndexedAttributes } from './attribute-index.ts';
import { asText, attr, isPlainObject, LF, parseJsonish } from './attributes.ts';

/**
 * User metadata of one domain: the JSON object in `langfuse.<domain>.metadata` (or `langfuse.metadata`),
 * overlaid by dotted keys `langfuse.<domain>.metadata.<k>`, `langfuse.metadata.<k>` and
 * `ai.telemetry.metadata.<k>`, plus Vercel's `ai.prompt.tools`. A value that is not a JSON object is dropped,
 * as by the reference server.
 */
export function extractMetadata(
  index: IndexedAttributes,
  domain: 'trace' | 'observation',
): Record<string, unknown> {
  const { attrs } = index;
  const prefix = domain === 'trace' ? LF.TRACE_METADATA : LF.OBSERVATION_METADATA;
  const whole = parseJsonish(attr(attrs, prefix) || attr(attrs, 'langfuse.metadata'));
  // Entries + fromEntries throughout: a `__proto__` key stays an ordinary key instead of replacing the prototype.
  const entries: [string, unknown][] = isPlainObject(whole) ? Object.entries(whole) : [];
  entries.push(...index.metadata[domain]);
  const tools = attr(attrs, 'ai.prompt.tools');
  if (tools) entries.push(['tools', tools]);
  return Object.fromEntries(entries);
}

/** Span attributes minus input/output carriers, each value as a string: `metadata.attributes` for foreign scopes. */
export function remainingAttributes(index: IndexedAttributes): Record<string, string> {
  return Object.fromEntries(index.remaining.map(([key, value]) => [key, asText(value)]));
}
