import { carriesAggregateUsage } from './aggregate-usage.ts';
import { indexAttributes } from './attribute-index.ts';
import {
  type Attributes,
  asText,
  attr,
  firstText,
  isTrue,
  LANGFUSE_SDK_SCOPE_PREFIX,
  LF,
  toAttributes,
  toStringRecord,
} from './attributes.ts';
import { OtlpValidationError } from './errors.ts';
import { extractExperiment } from './experiment.ts';
import { isValidHexId, SPAN_ID_BYTES, TRACE_ID_BYTES } from './ids.ts';
import { extractInputOutput } from './io.ts';
import { extractMetadata, remainingAttributes } from './metadata.ts';
import { extractModelName, extractModelParameters } from './model.ts';
import { mapObservationType } from './observation-type.ts';
import type { ExportTraceServiceRequest, OtlpSpan, OtlpSpanEvent, OtlpSpanLink } from './otlp-types.ts';
import {
  extractCompletionStartTime,
  extractEnvironment,
  extractLevel,
  extractName,
  extractPrompt,
  extractStatusMessage,
} from './span-fields.ts';
import { microsToIso, nanosToMicros } from './time.ts';
import { extractPublic, extractSessionId, extractTags, extractUserId } from './trace-fields.ts';
import type { MapContext, OtelInstrumentation, OtelObservation, OtelSpanLink } from './types.ts';
import { extractCostDetails, extractUsageDetails } from './usage.ts';

/** What every span of one resource/scope block shares. */
interface ScopeContext {
  resourceAttrs: Attributes;
  /** Trace metadata declared on the resource (`langfuse.trace.metadata…` resource attributes). */
  resourceTraceMetadata: Record<string, unknown>;
  scopeName: string;
  scopeVersion: string;
  scopeAttrs: Attributes;
  /** Spans of the Langfuse SDK scope carry only Langfuse attributes, so no `metadata.attributes` copy. */
  isLangfuseSdk: boolean;
  instrumentation: OtelInstrumentation;
  nowMicros: bigint;
}

function objects<T>(value: unknown): T[] {
  return Array.isArray(value) ? value.filter((v): v is T => typeof v === 'object' && v !== null) : [];
}

/** Input/output columns hold text: strings as they are, anything else as JSON. */
function text(value: unknown): string | null {
  return value === null || value === undefined ? null : asText(value);
}

/**
 * Maps a (validated) OTLP trace export to one observation per span, in export order. Pure: the only
 * outside input is `ctx`; `ctx.now` matters only for spans that carry no timestamps at all. Throws an
 * OtlpValidationError for a value it refuses (a negative token count, a time out of range).
 */
export function mapExport(request: ExportTraceServiceRequest, ctx: MapContext = {}): OtelObservation[] {
  const observations: OtelObservation[] = [];
  eachSpan(request, ctx, (span, scope) => observations.push(mapNamed(span, scope)));
  return observations;
}

/** The spans of an export mapped one by one; those refused (by validation or by the mapping) left out. */
export interface PartialMapping {
  observations: OtelObservation[];
  /** Spans left out: those in `refused` and those whose values the mapping refuses. */
  rejected: number;
  /** The mapping's refusal of the first span it refused, if any. */
  firstRefusal: OtlpValidationError | null;
}

/** As mapExport, but a span the mapping refuses is counted and left out instead of failing the export. */
export function mapExportPartially(
  request: ExportTraceServiceRequest,
  ctx: MapContext,
  refused: ReadonlySet<object>,
): PartialMapping {
  const out: PartialMapping = { observations: [], rejected: 0, firstRefusal: null };
  eachSpan(request, ctx, (span, scope) => {
    if (refused.has(span)) {
      out.rejected += 1;
      return;
    }
    try {
      out.observations.push(mapNamed(span, scope));
    } catch (err) {
      if (!(err instanceof OtlpValidationError)) throw err;
      out.rejected += 1;
      out.firstRefusal ??= err;
    }
  });
  return out;
}

function eachSpan(
  request: ExportTraceServiceRequest,
  ctx: MapContext,
  visit: (span: OtlpSpan, scope: ScopeContext) => void,
): void {
  const nowMicros = BigInt((ctx.now ?? new Date()).getTime()) * 1000n;
  for (const rs of objects<ExportTraceServiceRequest['resourceSpans'][number]>(request?.resourceSpans)) {
    const resourceAttrs = toAttributes(rs.resource?.attributes);
    for (const ss of objects<(typeof rs.scopeSpans)[number]>(rs.scopeSpans)) {
      const scopeName = typeof ss.scope?.name === 'string' ? ss.scope.name : '';
      const scopeVersion = typeof ss.scope?.version === 'string' ? ss.scope.version : '';
      const scope: ScopeContext = {
        resourceAttrs,
        resourceTraceMetadata: extractMetadata(indexAttributes(resourceAttrs), 'trace'),
        scopeName,
        scopeVersion,
        scopeAttrs: toAttributes(ss.scope?.attributes),
        isLangfuseSdk: scopeName.startsWith(LANGFUSE_SDK_SCOPE_PREFIX),
        instrumentation: instrumentationOf(resourceAttrs, scopeName, scopeVersion, ctx),
        nowMicros,
      };
      for (const span of objects<OtlpSpan>(ss.spans)) visit(span, scope);
    }
  }
}

export function instrumentationOf(
  resourceAttrs: Attributes,
  scopeName: string,
  scopeVersion: string,
  ctx: MapContext,
): OtelInstrumentation {
  return {
    serviceName: firstText(resourceAttrs, ['service.name']),
    serviceVersion: firstText(resourceAttrs, ['service.version']),
    scopeName: scopeName || null,
    scopeVersion: scopeVersion || null,
    sdkLanguage: firstText(resourceAttrs, ['telemetry.sdk.language']),
    sdkName: firstText(resourceAttrs, ['telemetry.sdk.name']),
    sdkVersion: firstText(resourceAttrs, ['telemetry.sdk.version']),
    ingestionSdkName: ctx.sdkName?.trim() || 'unknown',
    ingestionSdkVersion: ctx.sdkVersion?.trim() || 'unknown',
  };
}

/** '' for a root; OTel uses an absent (or, from some exporters, all-zero) parent id for roots. */
function parentOf(span: OtlpSpan): string {
  const parent = typeof span.parentSpanId === 'string' ? span.parentSpanId : '';
  return /^0*$/.test(parent) ? '' : parent;
}

/** A value the mapping refuses names its span, so the producer can find it. */
function mapNamed(span: OtlpSpan, scope: ScopeContext): OtelObservation {
  try {
    return mapSpan(span, scope);
  } catch (err) {
    if (!(err instanceof OtlpValidationError)) throw err;
    throw new OtlpValidationError('export', `span ${String(span.spanId)}: ${err.message}`, err.path);
  }
}

function mapSpan(span: OtlpSpan, scope: ScopeContext): OtelObservation {
  const attrs = toAttributes(span.attributes);
  const index = indexAttributes(attrs);
  const events = objects<OtlpSpanEvent>(span.events);
  const spanName = typeof span.name === 'string' ? span.name : '';
  const startMicros =
    nanosToMicros(span.startTimeUnixNano) ?? nanosToMicros(span.endTimeUnixNano) ?? scope.nowMicros;
  const endMicros = nanosToMicros(span.endTimeUnixNano) ?? startMicros;

  const type = mapObservationType({
    attrs,
    resourceAttrs: scope.resourceAttrs,
    scopeName: scope.scopeName,
    scopeVersion: scope.scopeVersion,
    spanName,
  });
  const { input, output } = extractInputOutput(index, events, scope.scopeName);
  const traceMetadata = { ...scope.resourceTraceMetadata, ...extractMetadata(index, 'trace') };
  const metadata = toStringRecord({
    ...traceMetadata,
    ...extractMetadata(index, 'observation'),
    ...(scope.isLangfuseSdk ? {} : { attributes: remainingAttributes(index) }),
    resourceAttributes: scope.resourceAttrs,
    scope: { name: scope.scopeName, version: scope.scopeVersion, attributes: scope.scopeAttrs },
    ...linksOf(span),
  });

  const userId = extractUserId(attrs);
  const sessionId = extractSessionId(attrs);
  const tags = extractTags(attrs);
  const isPublic = extractPublic(attrs);
  const version = firstText(attrs, [LF.VERSION]) ?? firstText(scope.resourceAttrs, ['service.version']);
  const release = firstText(attrs, [LF.RELEASE]) ?? firstText(scope.resourceAttrs, [LF.RELEASE]);
  const traceName = firstText(attrs, [LF.TRACE_NAME]);
  const prompt = type === 'GENERATION' ? extractPrompt(attrs) : { name: null, version: null };
  const statusCode = typeof span.status?.code === 'number' ? span.status.code : 0;
  const statusMessage = typeof span.status?.message === 'string' ? span.status.message : '';
  const aggregate = carriesAggregateUsage(attrs);

  return {
    traceId: String(span.traceId),
    spanId: String(span.spanId),
    parentSpanId: parentOf(span),
    name: extractName(spanName, attrs),
    type,
    startTime: microsToIso(startMicros),
    endTime: microsToIso(endMicros),
    completionStartTime: extractCompletionStartTime(attrs, startMicros),
    environment: extractEnvironment(attrs, scope.resourceAttrs),
    level: extractLevel(attrs, statusCode, scope.scopeName, spanName),
    statusMessage: extractStatusMessage(attrs, statusMessage),
    version,
    release,
    input: text(input),
    output: text(output),
    metadata,
    userId,
    sessionId,
    tags,
    traceName,
    public: isPublic,
    modelName: aggregate ? null : extractModelName(attrs),
    modelParameters: extractModelParameters(index, scope.scopeName),
    usageDetails: aggregate ? {} : extractUsageDetails(index, scope.scopeName),
    costDetails: aggregate ? {} : extractCostDetails(attrs),
    promptName: prompt.name,
    promptVersion: prompt.version,
    isAppRoot: isTrue(attr(attrs, LF.IS_APP_ROOT)),
    asRoot: isTrue(attr(attrs, LF.AS_ROOT)),
    trace: {
      name: traceName,
      input: text(attr(attrs, LF.TRACE_INPUT)),
      output: text(attr(attrs, LF.TRACE_OUTPUT)),
      metadata: toStringRecord(traceMetadata),
      userId,
      sessionId,
      tags,
      public: isPublic,
      version,
      release,
    },
    experiment: extractExperiment(attrs),
    instrumentation: { ...scope.instrumentation },
  };
}

/**
 * The span's links to other spans (of this trace or another), as metadata `links`: JSON
 * `[{traceId, spanId, attributes?}]`. Metadata, not a column of their own, so they are kept in
 * every write mode (the legacy tables, staging and the propagation carry metadata) and the events
 * tables keep the reference's schema. A link with an invalid id is left out.
 */
function linksOf(span: OtlpSpan): { links?: OtelSpanLink[] } {
  const links = objects<OtlpSpanLink>(span.links)
    .filter((l) => isValidHexId(l.traceId, TRACE_ID_BYTES) && isValidHexId(l.spanId, SPAN_ID_BYTES))
    .map((l) => {
      const attributes = toAttributes(l.attributes);
      return {
        traceId: l.traceId.toLowerCase(),
        spanId: l.spanId.toLowerCase(),
        ...(Object.keys(attributes).length > 0 ? { attributes } : {}),
      };
    });
  return links.length > 0 ? { links } : {};
}
