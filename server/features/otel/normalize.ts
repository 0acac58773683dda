import { SPAN_ID_BYTES, TRACE_ID_BYTES } from './ids.ts';
import type {
  ExportLogsServiceRequest,
  ExportTraceServiceRequest,
  OtlpAnyValue,
  OtlpInstrumentationScope,
  OtlpKeyValue,
  OtlpLogRecord,
  OtlpResource,
  OtlpResourceLogs,
  OtlpResourceSpans,
  OtlpScopeLogs,
  OtlpScopeSpans,
  OtlpSpan,
  OtlpSpanEvent,
  OtlpSpanLink,
  OtlpStatus,
} from './otlp-types.ts';

/** Turns a wire id (base64 bytes from protobuf, hex or base64 from JSON) into hex where possible. */
export type IdConverter = (value: unknown, bytes: number) => unknown;

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Brings a decoded export (protobufjs `toObject` output or parsed OTLP/JSON) into the canonical shape of
 * otlp-types.ts: absent repeated fields become [], absent scalars their proto defaults, 64-bit values
 * decimal strings. Structurally wrong values (a non-array where an array belongs, a non-object element)
 * are kept as they are so that `validateTraceExport` can name them; nothing is silently dropped.
 */
export function normalizeExport(raw: Obj, toHexId: IdConverter): ExportTraceServiceRequest {
  return { resourceSpans: list(raw.resourceSpans, (rs) => resourceSpans(rs, toHexId)) };
}

/** As normalizeExport, for a logs export. */
export function normalizeLogsExport(raw: Obj, toHexId: IdConverter): ExportLogsServiceRequest {
  return { resourceLogs: list(raw.resourceLogs, (rl) => resourceLogs(rl, toHexId)) };
}

function resourceLogs(rl: Obj, toHexId: IdConverter): OtlpResourceLogs {
  return {
    resource: resource(rl.resource),
    scopeLogs: list(rl.scopeLogs, (sl) => scopeLogs(sl, toHexId)),
    schemaUrl: str(rl.schemaUrl),
  };
}

function scopeLogs(sl: Obj, toHexId: IdConverter): OtlpScopeLogs {
  return {
    scope: scope(sl.scope),
    logRecords: list(sl.logRecords, (r) => logRecord(r, toHexId)),
    schemaUrl: str(sl.schemaUrl),
  };
}

function logRecord(r: Obj, toHexId: IdConverter): OtlpLogRecord {
  return {
    timeUnixNano: time(r.timeUnixNano),
    observedTimeUnixNano: time(r.observedTimeUnixNano),
    severityNumber: enumValue(r.severityNumber, SEVERITY_NUMBERS),
    severityText: str(r.severityText),
    body: anyValue(r.body),
    ...attributed(r),
    flags: int(r.flags),
    traceId: isEmptyId(r.traceId) ? '' : String(toHexId(r.traceId, TRACE_ID_BYTES)),
    spanId: isEmptyId(r.spanId) ? '' : String(toHexId(r.spanId, SPAN_ID_BYTES)),
    eventName: str(r.eventName),
  };
}

/** Maps the elements of a repeated field; null/absent is the empty list, a non-array is kept for validation. */
function list<T>(value: unknown, each: (item: Obj) => T): T[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return value as unknown as T[];
  return value.map((item) => (isObj(item) ? each(item) : (item as T)));
}

function resourceSpans(rs: Obj, toHexId: IdConverter): OtlpResourceSpans {
  return {
    resource: resource(rs.resource),
    scopeSpans: list(rs.scopeSpans, (ss) => scopeSpans(ss, toHexId)),
    schemaUrl: str(rs.schemaUrl),
  };
}

function resource(value: unknown): OtlpResource {
  return attributed(isObj(value) ? value : {});
}

/** The attributes an OTLP message carries, with how many its sender dropped. */
function attributed(o: Obj): { attributes: OtlpResource['attributes']; droppedAttributesCount: number } {
  return { attributes: keyValues(o.attributes), droppedAttributesCount: int(o.droppedAttributesCount) };
}

function scopeSpans(ss: Obj, toHexId: IdConverter): OtlpScopeSpans {
  return {
    scope: scope(ss.scope),
    spans: list(ss.spans, (s) => span(s, toHexId)),
    schemaUrl: str(ss.schemaUrl),
  };
}

function scope(value: unknown): OtlpInstrumentationScope {
  const s = isObj(value) ? value : {};
  return {
    name: str(s.name),
    version: str(s.version),
    ...attributed(s),
  };
}

function span(s: Obj, toHexId: IdConverter): OtlpSpan {
  return {
    ...spanContext(s, toHexId),
    parentSpanId: isEmptyId(s.parentSpanId) ? '' : (toHexId(s.parentSpanId, SPAN_ID_BYTES) as string),
    traceState: str(s.traceState),
    flags: int(s.flags),
    name: str(s.name),
    kind: enumValue(s.kind, SPAN_KINDS),
    startTimeUnixNano: time(s.startTimeUnixNano),
    endTimeUnixNano: time(s.endTimeUnixNano),
    ...attributed(s),
    events: list(s.events, event),
    droppedEventsCount: int(s.droppedEventsCount),
    links: list(s.links, (l) => link(l, toHexId)),
    droppedLinksCount: int(s.droppedLinksCount),
    status: status(s.status),
  };
}

/** The trace and span ids a span or a link names, as hex. */
function spanContext(o: Obj, toHexId: IdConverter): Pick<OtlpSpan, 'traceId' | 'spanId'> {
  return {
    traceId: toHexId(o.traceId, TRACE_ID_BYTES) as string,
    spanId: toHexId(o.spanId, SPAN_ID_BYTES) as string,
  };
}

function isEmptyId(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

function event(e: Obj): OtlpSpanEvent {
  return {
    timeUnixNano: time(e.timeUnixNano),
    name: str(e.name),
    ...attributed(e),
  };
}

function link(l: Obj, toHexId: IdConverter): OtlpSpanLink {
  return {
    ...spanContext(l, toHexId),
    traceState: str(l.traceState),
    ...attributed(l),
    flags: int(l.flags),
  };
}

function status(value: unknown): OtlpStatus {
  const s = isObj(value) ? value : {};
  return { code: enumValue(s.code, STATUS_CODES), message: str(s.message) };
}

/** OTLP/JSON requires integer enums, but the protobuf JSON mapping also allows names; accept both. */
const SPAN_KINDS: Record<string, number> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};
const STATUS_CODES: Record<string, number> = {
  STATUS_CODE_UNSET: 0,
  STATUS_CODE_OK: 1,
  STATUS_CODE_ERROR: 2,
};

/** `SEVERITY_NUMBER_TRACE` = 1 ... `SEVERITY_NUMBER_FATAL4` = 24, as the logs proto numbers them. */
const SEVERITY_NUMBERS: Record<string, number> = Object.fromEntries(
  ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'].flatMap((level, i) =>
    ['', '2', '3', '4'].map((n, j) => [`SEVERITY_NUMBER_${level}${n}`, i * 4 + j + 1]),
  ),
);

function enumValue(value: unknown, names: Record<string, number>): number {
  if (typeof value === 'string' && Object.hasOwn(names, value)) return names[value]!;
  return int(value);
}

function keyValues(value: unknown): OtlpKeyValue[] {
  return list(value, (kv) => ({ key: kv.key as string, value: anyValue(kv.value) }));
}

/** One AnyValue; the first member present wins, as a oneof has at most one. */
export function anyValue(value: unknown): OtlpAnyValue {
  if (!isObj(value)) return {};
  if (typeof value.stringValue === 'string') return { stringValue: value.stringValue };
  if (typeof value.boolValue === 'boolean') return { boolValue: value.boolValue };
  if (value.intValue !== undefined && value.intValue !== null) return { intValue: i64(value.intValue) };
  if (value.doubleValue !== undefined && value.doubleValue !== null) {
    return { doubleValue: Number(value.doubleValue) }; // JSON may spell NaN/Infinity as strings
  }
  if (isObj(value.arrayValue)) return { arrayValue: { values: list(value.arrayValue.values, anyValue) } };
  if (isObj(value.kvlistValue)) return { kvlistValue: { values: keyValues(value.kvlistValue.values) } };
  if (typeof value.bytesValue === 'string') return { bytesValue: value.bytesValue };
  return {};
}

function str(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return '';
}

function int(value: unknown): number {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? Math.trunc(n) : 0;
}

/** Unsigned 64-bit value as a decimal string ("0" when absent or malformed). */
function u64(value: unknown): string {
  if (typeof value === 'string' && /^\d+$/.test(value)) return BigInt(value).toString();
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0)
    return BigInt(Math.trunc(value)).toString();
  if (typeof value === 'bigint' && value >= 0n) return value.toString();
  return '0';
}

/** A timestamp as u64, but a malformed one (negative, fractional, text) kept as text for validation to name. */
function time(value: unknown): string {
  if (value === undefined || value === null || value === '') return '0';
  const n = u64(value);
  return n === '0' && !/^0+$/.test(String(value)) ? String(value) : n;
}

/** Signed 64-bit value as a decimal string ("0" when malformed). */
function i64(value: unknown): string {
  if (typeof value === 'string' && /^[+-]?\d+$/.test(value)) return BigInt(value).toString();
  if (typeof value === 'number' && Number.isFinite(value)) return BigInt(Math.trunc(value)).toString();
  if (typeof value === 'bigint') return value.toString();
  return '0';
}
