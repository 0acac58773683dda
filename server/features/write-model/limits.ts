/**
 * Bounds on what one ingestion request may carry, so that the work of a request grows with its size
 * and no request can hold the process. Each is refused with a 4xx naming the limit. The values with
 * the reference's or OpenTelemetry's beside them are in docs/public-api.md ("Ingestion limits").
 */

/** Spans in one OTLP export; OTel SDKs export 512 at most by default, the Collector's batch processor 8192. */
export const MAX_SPANS_PER_EXPORT = 8192;

/**
 * Attributes on one span, span event, link, resource or scope. The OTel SDK default is 128, but
 * real producers raise it (flattened message lists of OpenInference and OpenLLMetry run to thousands).
 */
export const MAX_ATTRIBUTES_PER_SPAN = 4096;

/** Events on one span (OTel SDK default 128) and links on one span (default 128). */
export const MAX_EVENTS_PER_SPAN = 1024;
export const MAX_LINKS_PER_SPAN = 1024;

/**
 * Attributes in one export in all (spans, events, links, resources, scopes). The decoder creates an
 * object per attribute, so this, not the byte size, bounds the work of an export.
 */
export const MAX_ATTRIBUTES_PER_EXPORT = 131_072;

/** UTF-16 length of one attribute string value (inputs and outputs travel as attributes). */
export const MAX_ATTRIBUTE_VALUE_LENGTH = 4 * 1024 * 1024;

/**
 * Nesting of any JSON body (and of a decoded OTLP export): far beyond real payloads, far below the
 * depth at which recursive serializers run out of stack.
 */
export const MAX_JSON_DEPTH = 128;

/** Events in one `/api/public/ingestion` batch (the body limit of 3.5 MB bounds it too). */
export const MAX_EVENTS_PER_BATCH = 10_000;

/** Token counts are stored as UInt64 and handled as JS numbers: exact up to 2^53 - 1. */
export const MAX_TOKEN_COUNT = Number.MAX_SAFE_INTEGER;
/** Costs are stored as Decimal(18, 12): below one million USD. */
export const COST_LIMIT_USD = 1_000_000;

/** Deepest nesting of a JSON value (an object or array at the top is depth 1); stops once past `max`. */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * A body over its size limit is answered 413 at once while what the client still sends is read
 * and discarded, up to this many bytes or this long: closing while it sends shows it a broken pipe
 * instead of the 413, and OTel exporters retry a broken pipe but not a 413.
 */
export const MAX_DRAIN_BYTES = 64 * 1024 * 1024;
export const MAX_DRAIN_MS = 10_000;

/**
 * Data points in one OTLP metrics export (every metric's points together); the Collector's batch
 * processor sends 8192 by default.
 */
export const MAX_DATA_POINTS_PER_EXPORT = 65_536;

/** Explicit bounds of one histogram data point (the GenAI conventions advise 14 and 15). */
export const MAX_HISTOGRAM_BOUNDS = 1024;

/** Log records in one OTLP logs export: the same bound as spans (the Collector's batch size). */
export const MAX_LOG_RECORDS_PER_EXPORT = 8192;
