import { MAX_TIMESTAMP_MS, TIMESTAMP_RANGE } from '../../kernel/iso-datetime.ts';
import {
  MAX_ATTRIBUTE_VALUE_LENGTH,
  MAX_ATTRIBUTES_PER_EXPORT,
  MAX_ATTRIBUTES_PER_SPAN,
  MAX_EVENTS_PER_SPAN,
  MAX_LINKS_PER_SPAN,
  MAX_SPANS_PER_EXPORT,
} from '../write-model/limits.ts';
import { OtlpValidationError } from './errors.ts';
import { isValidHexId, SPAN_ID_BYTES, TRACE_ID_BYTES } from './ids.ts';

/** Highest `x-service-ingestion-version` (alias `x-langfuse-ingestion-version`) this server understands. */
export const MAX_INGESTION_VERSION = 4;

/** `whole`: a problem of the export itself (its shape, a per-export limit), not of one span. */
type Problem = { path: string; reason: string; whole?: boolean };

/**
 * What validation found: a problem that refuses the whole export (its shape, a per-export limit,
 * the resource's or scope's attributes), or the spans refused on their own with the first one's
 * problem. A refused span is left out and the others are stored: OTLP's partial success.
 */
export interface TraceExportCheck {
  error: OtlpValidationError | null;
  refusedSpans: Set<object>;
  /** Where and why the first refused span was refused ("path reason"). */
  firstSpanProblem: OtlpValidationError | null;
}

/**
 * Validation run before anything is mapped or stored. Checks that every container is an array,
 * every span has a valid trace and span id and timestamps in the stored range, every attribute is
 * a keyed object, and the export keeps within the limits of server/features/write-model/limits.ts.
 */
export function checkTraceExport(request: unknown): TraceExportCheck {
  const refusedSpans = new Set<object>();
  let firstSpanProblem: OtlpValidationError | null = null;
  const problem = exportProblem(request, (span, spanProblem) => {
    refusedSpans.add(span);
    firstSpanProblem ??= new OtlpValidationError(
      'export',
      `${spanProblem.path} ${spanProblem.reason}`,
      spanProblem.path,
    );
  });
  const error = problem
    ? new OtlpValidationError(
        'export',
        `Invalid OTLP trace export: ${problem.path} ${problem.reason}. The entire export was rejected; no spans were ingested.`,
        problem.path,
      )
    : null;
  return { error, refusedSpans, firstSpanProblem };
}

/**
 * The first problem of the export, whole-export and span problems alike (an export refused as a
 * whole, as the mapping figure of the bench and the validation tests see it). Returns the error to
 * send (HTTP 400) or null.
 */
export function validateTraceExport(request: unknown): OtlpValidationError | null {
  // A whole-export problem ends the walk, so a refused span, when there is one, came first.
  const { error, firstSpanProblem: first } = checkTraceExport(request);
  if (!first) return error;
  return new OtlpValidationError(
    'export',
    `Invalid OTLP trace export: ${first.message}. The entire export was rejected; no spans were ingested.`,
    first.path,
  );
}

function isObj(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Running totals of one export, checked against the per-export limits as the walk goes. */
interface Totals {
  spans: number;
  attributes: number;
}

/** The whole-export problem, or null; each span with a problem of its own goes to `refuse`. */
function exportProblem(request: unknown, refuse: (span: object, problem: Problem) => void): Problem | null {
  if (!isObj(request)) return { path: '(root)', reason: 'is not an object' };
  const totals: Totals = { spans: 0, attributes: 0 };
  const attributes = (value: unknown, path: string) => attributesProblem(value, path, totals);
  return eachElement(request.resourceSpans, 'resourceSpans', (rs, p) => {
    const resource = rs.resource;
    return (
      (isObj(resource) ? attributes(resource.attributes, `${p}.resource.attributes`) : null) ??
      eachElement(rs.scopeSpans, `${p}.scopeSpans`, (ss, sp) => {
        const scope = ss.scope;
        return (
          (isObj(scope) ? attributes(scope.attributes, `${sp}.scope.attributes`) : null) ??
          eachElement(ss.spans, `${sp}.spans`, (span, path) => {
            totals.spans += 1;
            if (totals.spans > MAX_SPANS_PER_EXPORT) {
              return { path, reason: `exceeds the limit of ${MAX_SPANS_PER_EXPORT} spans per export` };
            }
            const problem = spanProblem(span, path, totals);
            if (problem?.whole) return problem;
            if (problem) refuse(span, problem);
            return null;
          })
        );
      })
    );
  });
}

function spanProblem(span: Record<string, unknown>, p: string, totals: Totals): Problem | null {
  const attributes = (value: unknown, path: string) => attributesProblem(value, path, totals);
  return (
    idProblem(span.traceId, `${p}.traceId`, TRACE_ID_BYTES, 'trace') ??
    idProblem(span.spanId, `${p}.spanId`, SPAN_ID_BYTES, 'span') ??
    timeProblem(span.startTimeUnixNano, `${p}.startTimeUnixNano`) ??
    timeProblem(span.endTimeUnixNano, `${p}.endTimeUnixNano`) ??
    attributes(span.attributes, `${p}.attributes`) ??
    countProblem(span.events, `${p}.events`, MAX_EVENTS_PER_SPAN, 'events per span') ??
    eachElement(
      span.events,
      `${p}.events`,
      (e, ep) =>
        timeProblem(e.timeUnixNano, `${ep}.timeUnixNano`) ?? attributes(e.attributes, `${ep}.attributes`),
    ) ??
    countProblem(span.links, `${p}.links`, MAX_LINKS_PER_SPAN, 'links per span') ??
    eachElement(span.links, `${p}.links`, (l, lp) => attributes(l.attributes, `${lp}.attributes`))
  );
}

const MAX_NANOS = BigInt(MAX_TIMESTAMP_MS) * 1_000_000n + 999_999n;
/** From here up to the end of uint64, a time read as signed is negative: before 1970. */
const NEGATIVE_AS_UNSIGNED = 2n ** 63n;
const UINT64_END = 2n ** 64n;

/**
 * OTLP times are unsigned nanoseconds since 1970 ("0": not set). Anything else, a time before
 * 1970 that a producer sent as the unsigned form of a negative number, or a time past the stored
 * range, is refused rather than stored as another date.
 */
function timeProblem(value: unknown, path: string): Problem | null {
  if (value === undefined || value === null) return null;
  const text = String(value);
  if (!/^\d+$/.test(text)) {
    return {
      path,
      reason: `is not a timestamp: ${JSON.stringify(text.slice(0, 40))} (unsigned nanoseconds since 1970)`,
    };
  }
  const sent = BigInt(text);
  if (sent >= NEGATIVE_AS_UNSIGNED || sent > MAX_NANOS) {
    // Read as signed, such a value is a time before 1970 (or a far future one that wrapped around).
    const signed = sent < UINT64_END ? sent - UINT64_END : undefined;
    const before1970 =
      signed !== undefined && sent >= NEGATIVE_AS_UNSIGNED
        ? ` (as a signed 64-bit value ${signed}: a time before 1970 sent as unsigned)`
        : '';
    return { path, reason: `is outside the accepted time range ${TIMESTAMP_RANGE}: ${text}${before1970}` };
  }
  return null;
}

function countProblem(value: unknown, path: string, max: number, what: string): Problem | null {
  return Array.isArray(value) && value.length > max
    ? { path, reason: `has ${value.length} entries, more than the limit of ${max} ${what}` }
    : null;
}

function idProblem(value: unknown, path: string, bytes: number, what: string): Problem | null {
  if (isValidHexId(value, bytes)) return null;
  const expected = `expected ${bytes * 2} hex characters, not all zero`;
  if (value === undefined || value === null || value === '')
    return { path, reason: `is missing (${expected})` };
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : typeof value;
  return { path, reason: `is not a valid ${what} id: ${shown} (${expected})` };
}

/** Absent repeated fields are empty (OTLP/JSON omits them); anything present must be an array of objects. */
function eachElement(
  value: unknown,
  path: string,
  check: (element: Record<string, unknown>, path: string) => Problem | null,
): Problem | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) return { path, reason: 'is not an array' };
  for (let i = 0; i < value.length; i++) {
    const element: unknown = value[i];
    const p = `${path}[${i}]`;
    if (!isObj(element)) return { path: p, reason: 'is not an object' };
    const problem = check(element, p);
    if (problem) return problem;
  }
  return null;
}

/** One attribute list: its count (own and export-wide), its keys, and the length of every string in its values. */
function attributesProblem(value: unknown, path: string, totals: Totals): Problem | null {
  const tooMany = countProblem(
    value,
    path,
    MAX_ATTRIBUTES_PER_SPAN,
    'attributes per span, event, link, resource or scope',
  );
  if (tooMany) return tooMany;
  if (Array.isArray(value)) {
    totals.attributes += value.length;
    if (totals.attributes > MAX_ATTRIBUTES_PER_EXPORT) {
      return {
        path,
        reason: `brings the export past the limit of ${MAX_ATTRIBUTES_PER_EXPORT} attributes per export`,
        whole: true,
      };
    }
  }
  return eachElement(value, path, (kv, p) =>
    typeof kv.key === 'string'
      ? valueProblem(kv.value, `${p}.value`, totals)
      : { path: `${p}.key`, reason: 'is not a string' },
  );
}

/**
 * Strings (and bytes) inside an attribute value, arrays and kvlists included; their elements count
 * towards the export's attributes. Nesting is bounded by the decoder (MAX_JSON_DEPTH).
 */
function valueProblem(value: unknown, path: string, totals: Totals): Problem | null {
  if (!isObj(value)) return null;
  const nested = (n: number): Problem | null => {
    totals.attributes += n;
    return totals.attributes > MAX_ATTRIBUTES_PER_EXPORT
      ? {
          path,
          reason: `brings the export past the limit of ${MAX_ATTRIBUTES_PER_EXPORT} attributes per export (nested values count)`,
          whole: true,
        }
      : null;
  };
  for (const member of ['stringValue', 'bytesValue'] as const) {
    const text = value[member];
    if (typeof text === 'string' && text.length > MAX_ATTRIBUTE_VALUE_LENGTH) {
      return {
        path: `${path}.${member}`,
        reason: `is ${text.length} characters long, more than the limit of ${MAX_ATTRIBUTE_VALUE_LENGTH} per attribute value`,
      };
    }
  }
  const array = isObj(value.arrayValue) ? value.arrayValue.values : undefined;
  if (Array.isArray(array)) {
    const problem = nested(array.length);
    if (problem) return problem;
    for (let i = 0; i < array.length; i++) {
      const problem = valueProblem(array[i], `${path}.arrayValue.values[${i}]`, totals);
      if (problem) return problem;
    }
  }
  const kvlist = isObj(value.kvlistValue) ? value.kvlistValue.values : undefined;
  if (Array.isArray(kvlist)) {
    const problem = nested(kvlist.length);
    if (problem) return problem;
    for (let i = 0; i < kvlist.length; i++) {
      const kv: unknown = kvlist[i];
      const problem = isObj(kv)
        ? valueProblem(kv.value, `${path}.kvlistValue.values[${i}].value`, totals)
        : null;
      if (problem) return problem;
    }
  }
  return null;
}

/**
 * Parses the ingestion-version header. Absent or blank → null (no version claimed). An integer up to
 * MAX_INGESTION_VERSION → that number. Anything else → an OtlpValidationError for a 400 response.
 * Repeated headers arrive joined (`"4, 4"`) or as an array and are refused: the client must say one thing.
 */
export function parseIngestionVersionHeader(
  value: string | string[] | undefined,
  headerName = 'x-service-ingestion-version',
): number | null | OtlpValidationError {
  if (value === undefined) return null;
  const raw = Array.isArray(value) ? value.join(', ') : value;
  const trimmed = raw.trim();
  if (trimmed === '') return null;
  const version = /^[+-]?\d+$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (Number.isSafeInteger(version) && version <= MAX_INGESTION_VERSION) return version;
  return new OtlpValidationError(
    'ingestion-version',
    `Unsupported ${headerName}: "${raw}". Maximum supported: "${MAX_INGESTION_VERSION}".`,
  );
}
