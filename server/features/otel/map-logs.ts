/**
 * An OTLP logs export mapped onto observations (pure). A record with a trace and span id becomes
 * an EVENT observation of that span (its level from the severity, its body the input); GenAI
 * content events besides fill their span's input, output and tool calls (genai-log-content.ts).
 * A record without trace context has nowhere to go and is refused on its own: OTLP's partial success.
 */

import { createHash } from 'node:crypto';
import { MAX_ATTRIBUTES_PER_SPAN, MAX_LOG_RECORDS_PER_EXPORT } from '../write-model/limits.ts';
import type { SpanRef } from '../write-model/store.ts';
import {
  type Attributes,
  anyValueToJs,
  asText,
  isMeaningful,
  toAttributes,
  toStringRecord,
} from './attributes.ts';
import { type GenAiContent, type GenAiRecord, genAiContent } from './genai-log-content.ts';
import { isValidHexId, SPAN_ID_BYTES, TRACE_ID_BYTES } from './ids.ts';
import { instrumentationOf } from './map-spans.ts';
import type { ExportLogsServiceRequest, OtlpLogRecord } from './otlp-types.ts';
import { extractEnvironment } from './span-fields.ts';
import { microsToIso, nanosToMicros } from './time.ts';
import type { MapContext, ObservationLevel, OtelObservation } from './types.ts';

/** The content one span's GenAI records of this export carry. */
export interface SpanContent extends SpanRef {
  content: GenAiContent;
  /** The earliest record's time: when a span that has not arrived yet is created by its content. */
  at: string;
  environment: string;
}

export interface MappedLogs {
  /** One EVENT observation per accepted record, child of its span. */
  events: OtelObservation[];
  /** Per span with GenAI content events in this export, what they give it. */
  contents: SpanContent[];
  rejected: number;
  /** Why the first refused record was refused. */
  firstRefusal: string | null;
}

/** An export refused as a whole (a 400): malformed beyond single records, or past a per-export limit. */
export class LogsExportError extends Error {}

export const NO_TRACE_CONTEXT =
  'log record without trace context (a valid trace_id and span_id): records are stored on the observation of their span, so one without a span cannot be placed';

/** OTLP SeverityNumber → observation level: trace and debug DEBUG, info DEFAULT, warn WARNING, error and fatal ERROR. */
export function levelOfSeverity(severityNumber: number): ObservationLevel {
  if (severityNumber >= 17) return 'ERROR';
  if (severityNumber >= 13) return 'WARNING';
  if (severityNumber >= 1 && severityNumber <= 8) return 'DEBUG';
  return 'DEFAULT';
}

export function mapLogsExport(request: ExportLogsServiceRequest, ctx: MapContext): MappedLogs {
  const out: MappedLogs = { events: [], contents: [], rejected: 0, firstRefusal: null };
  if (!Array.isArray(request.resourceLogs))
    throw new LogsExportError('Invalid OTLP logs export: "resourceLogs" must be an array');
  const nowMicros = BigInt((ctx.now ?? new Date()).getTime()) * 1000n;
  const genAi = new Map<string, { ref: SpanRef; records: GenAiRecord[]; at: string; environment: string }>();
  let count = 0;
  for (const rl of request.resourceLogs) {
    const resourceAttrs = toAttributes(rl?.resource?.attributes);
    for (const sl of Array.isArray(rl?.scopeLogs) ? rl.scopeLogs : []) {
      const scopeName = typeof sl?.scope?.name === 'string' ? sl.scope.name : '';
      const scopeVersion = typeof sl?.scope?.version === 'string' ? sl.scope.version : '';
      const instrumentation = instrumentationOf(resourceAttrs, scopeName, scopeVersion, ctx);
      for (const record of Array.isArray(sl?.logRecords) ? sl.logRecords : []) {
        count += 1;
        if (count > MAX_LOG_RECORDS_PER_EXPORT)
          throw new LogsExportError(
            `Invalid OTLP logs export: more than ${MAX_LOG_RECORDS_PER_EXPORT} log records in one export`,
          );
        const refusal = refusalOf(record);
        if (refusal) {
          out.rejected += 1;
          out.firstRefusal ??= refusal;
          continue;
        }
        const attrs = toAttributes(record.attributes);
        const name = eventNameOf(record, attrs);
        const micros =
          nanosToMicros(record.timeUnixNano) ?? nanosToMicros(record.observedTimeUnixNano) ?? nowMicros;
        const body = anyValueToJs(record.body);
        const environment = extractEnvironment(attrs, resourceAttrs);
        const event = eventObservation(record, name, micros, body, environment);
        event.instrumentation = instrumentation;
        event.metadata = toStringRecord({
          ...(isMeaningful(attrs) ? { attributes: attrs } : {}),
          ...(record.severityText ? { severity: record.severityText } : {}),
          resourceAttributes: resourceAttrs,
          scope: { name: scopeName, version: scopeVersion },
        });
        out.events.push(event);
        const key = `${record.traceId}/${record.spanId}`;
        const entry = genAi.get(key) ?? {
          ref: { traceId: record.traceId, spanId: record.spanId },
          records: [],
          at: event.startTime,
          environment,
        };
        entry.records.push({ name, timeUnixNano: record.timeUnixNano, body, attributes: attrs });
        if (event.startTime < entry.at) entry.at = event.startTime;
        genAi.set(key, entry);
      }
    }
  }
  for (const { ref, records, at, environment } of genAi.values()) {
    const content = genAiContent(records);
    if (content) out.contents.push({ ...ref, content, at, environment });
  }
  return out;
}

function refusalOf(record: OtlpLogRecord): string | null {
  if (typeof record !== 'object' || record === null) return 'a log record must be an object';
  if (!isValidHexId(record.traceId, TRACE_ID_BYTES) || !isValidHexId(record.spanId, SPAN_ID_BYTES))
    return NO_TRACE_CONTEXT;
  if (Array.isArray(record.attributes) && record.attributes.length > MAX_ATTRIBUTES_PER_SPAN)
    return `log record with more than ${MAX_ATTRIBUTES_PER_SPAN} attributes`;
  return null;
}

/** The record's event name; SDKs before the `event_name` field put it in the `event.name` attribute. */
function eventNameOf(record: OtlpLogRecord, attrs: Attributes): string {
  if (record.eventName) return record.eventName;
  const legacy = attrs['event.name'];
  return typeof legacy === 'string' ? legacy : '';
}

/**
 * The record as an EVENT child of its span. Its id is a hash of the record, so an export sent again
 * (an exporter's retry) writes the same observation instead of a second one.
 */
function eventObservation(
  record: OtlpLogRecord,
  name: string,
  micros: bigint,
  body: unknown,
  environment: string,
): OtelObservation {
  const id = createHash('sha256').update(JSON.stringify(record)).digest('hex').slice(0, 16);
  const time = microsToIso(micros);
  const input = isMeaningful(body) ? asText(body) : null;
  return {
    traceId: record.traceId,
    spanId: id,
    parentSpanId: record.spanId,
    name: name || record.severityText || 'log',
    type: 'EVENT',
    startTime: time,
    endTime: time,
    completionStartTime: null,
    environment,
    level: levelOfSeverity(record.severityNumber),
    statusMessage: null,
    version: null,
    release: null,
    input,
    output: null,
    metadata: {},
    userId: null,
    sessionId: null,
    tags: [],
    traceName: null,
    public: null,
    modelName: null,
    modelParameters: {},
    usageDetails: {},
    costDetails: {},
    promptName: null,
    promptVersion: null,
    isAppRoot: false,
    asRoot: false,
    trace: {
      name: null,
      input: null,
      output: null,
      metadata: {},
      userId: null,
      sessionId: null,
      tags: [],
      public: null,
      version: null,
      release: null,
    },
    experiment: null,
    instrumentation: instrumentationOf({}, '', '', {}),
  };
}
