/**
 * OTLP trace export as plain, JSON-serializable objects: the OTLP/JSON shape with ids as hex strings,
 * 64-bit integers and nanosecond timestamps as decimal strings, enums as numbers and bytes as base64.
 * Both decoders (protobuf and JSON) produce this shape, so what is stored and later mapped does not
 * depend on the wire format.
 */

/** One attribute value; exactly one member is set (none for an empty value). */
export interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  /** int64 as a decimal string, to keep values beyond 2^53 exact. */
  intValue?: string;
  doubleValue?: number;
  arrayValue?: { values: OtlpAnyValue[] };
  kvlistValue?: { values: OtlpKeyValue[] };
  /** Base64, as in OTLP/JSON. */
  bytesValue?: string;
}

export interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

export interface OtlpResource {
  attributes: OtlpKeyValue[];
  droppedAttributesCount: number;
}

export interface OtlpInstrumentationScope {
  name: string;
  version: string;
  attributes: OtlpKeyValue[];
  droppedAttributesCount: number;
}

export interface OtlpSpanEvent {
  /** Nanoseconds since the epoch as a decimal string; "0" when absent. */
  timeUnixNano: string;
  name: string;
  attributes: OtlpKeyValue[];
  droppedAttributesCount: number;
}

export interface OtlpSpanLink {
  traceId: string;
  spanId: string;
  traceState: string;
  attributes: OtlpKeyValue[];
  droppedAttributesCount: number;
  flags: number;
}

export interface OtlpStatus {
  /** 0 unset, 1 ok, 2 error. */
  code: number;
  message: string;
}

export interface OtlpSpan {
  /** Hex (32 characters when valid). */
  traceId: string;
  /** Hex (16 characters when valid). */
  spanId: string;
  /** Hex, or '' for a root span. */
  parentSpanId: string;
  traceState: string;
  flags: number;
  name: string;
  /** SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** Nanoseconds since the epoch as a decimal string; "0" when absent. */
  startTimeUnixNano: string;
  /** Nanoseconds since the epoch as a decimal string; "0" when absent. */
  endTimeUnixNano: string;
  attributes: OtlpKeyValue[];
  droppedAttributesCount: number;
  events: OtlpSpanEvent[];
  droppedEventsCount: number;
  links: OtlpSpanLink[];
  droppedLinksCount: number;
  status: OtlpStatus;
}

export interface OtlpScopeSpans {
  scope: OtlpInstrumentationScope;
  spans: OtlpSpan[];
  schemaUrl: string;
}

export interface OtlpResourceSpans {
  resource: OtlpResource;
  scopeSpans: OtlpScopeSpans[];
  schemaUrl: string;
}

/** `opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest`. */
export interface ExportTraceServiceRequest {
  resourceSpans: OtlpResourceSpans[];
}

export interface OtlpLogRecord {
  /** Nanoseconds since the epoch as a decimal string; "0" when absent. */
  timeUnixNano: string;
  /** When the collecting SDK saw the record; "0" when absent. */
  observedTimeUnixNano: string;
  /** SeverityNumber: 0 unspecified, 1-4 trace, 5-8 debug, 9-12 info, 13-16 warn, 17-20 error, 21-24 fatal. */
  severityNumber: number;
  severityText: string;
  body: OtlpAnyValue;
  attributes: OtlpKeyValue[];
  droppedAttributesCount: number;
  flags: number;
  /** Hex, or '' when the record carries no trace context. */
  traceId: string;
  /** Hex, or '' when the record carries no trace context. */
  spanId: string;
  /** The event's name (`gen_ai.choice`, ...); '' for a plain log record. */
  eventName: string;
}

export interface OtlpScopeLogs {
  scope: OtlpInstrumentationScope;
  logRecords: OtlpLogRecord[];
  schemaUrl: string;
}

export interface OtlpResourceLogs {
  resource: OtlpResource;
  scopeLogs: OtlpScopeLogs[];
  schemaUrl: string;
}

/** `opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest`. */
export interface ExportLogsServiceRequest {
  resourceLogs: OtlpResourceLogs[];
}
