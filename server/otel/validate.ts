import { OtlpValidationError } from './errors.ts';
import { isValidHexId, SPAN_ID_BYTES, TRACE_ID_BYTES } from './ids.ts';

/** Highest `x-service-ingestion-version` (alias `x-langfuse-ingestion-version`) this server understands. */
export const MAX_INGESTION_VERSION = 4;

type Problem = { path: string; reason: string };

/**
 * Whole-export validation, run before anything is stored: one bad span rejects the export, because a partial
 * write would leave traces with holes that the client believes were delivered. Checks that every container
 * is an array, every span has a valid trace and span id, and every attribute is a keyed object.
 * Returns the error to send (HTTP 400) or null.
 */
export function validateTraceExport(request: unknown): OtlpValidationError | null {
  const problem = firstProblem(request);
  if (!problem) return null;
  return new OtlpValidationError(
    'export',
    `Invalid OTLP trace export: ${problem.path} ${problem.reason}. The entire export was rejected; no spans were ingested.`,
    problem.path,
  );
}

function isObj(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function firstProblem(request: unknown): Problem | null {
  if (!isObj(request)) return { path: '(root)', reason: 'is not an object' };
  return eachElement(request.resourceSpans, 'resourceSpans', (rs, p) => {
    const resource = rs.resource;
    return (
      (isObj(resource) ? attributesProblem(resource.attributes, `${p}.resource.attributes`) : null) ??
      eachElement(rs.scopeSpans, `${p}.scopeSpans`, (ss, sp) => {
        const scope = ss.scope;
        return (
          (isObj(scope) ? attributesProblem(scope.attributes, `${sp}.scope.attributes`) : null) ??
          eachElement(ss.spans, `${sp}.spans`, spanProblem)
        );
      })
    );
  });
}

function spanProblem(span: Record<string, unknown>, p: string): Problem | null {
  return (
    idProblem(span.traceId, `${p}.traceId`, TRACE_ID_BYTES, 'trace') ??
    idProblem(span.spanId, `${p}.spanId`, SPAN_ID_BYTES, 'span') ??
    attributesProblem(span.attributes, `${p}.attributes`) ??
    eachElement(span.events, `${p}.events`, (e, ep) => attributesProblem(e.attributes, `${ep}.attributes`)) ??
    eachElement(span.links, `${p}.links`, (l, lp) => attributesProblem(l.attributes, `${lp}.attributes`))
  );
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

function attributesProblem(value: unknown, path: string): Problem | null {
  return eachElement(value, path, (kv, p) =>
    typeof kv.key === 'string' ? null : { path: `${p}.key`, reason: 'is not a string' },
  );
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
