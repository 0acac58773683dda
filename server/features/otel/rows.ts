/**
 * Pure conversion of mapped OTLP spans into writes: rows of `events_full` for the direct path,
 * and trace and observation changes for the legacy path (which dual write also stages).
 */
import { usageWithTotal } from '../models/pricing.ts';
import type { LegacyChanges } from '../write-model/changes.ts';
import type { Attribution, Row } from '../write-model/records.ts';
import { chTime } from '../write-model/time.ts';
import type { OtelObservation } from './types.ts';

const orEmpty = (v: string | null | undefined) => v ?? '';

/** Metadata as parallel name and value arrays, the events tables' form. */
export function metadataArrays(m: Record<string, string>): { names: string[]; values: string[] } {
  const keys = Object.keys(m).sort();
  return { names: keys, values: keys.map((k) => m[k]!) };
}

const isRoot = (o: OtelObservation) => o.asRoot || o.parentSpanId === '';

/** How a direct write stores its times. */
export interface DirectShape {
  /**
   * The same spans also go to the legacy tables (dual write): times take the legacy tables'
   * millisecond precision, so the backfill's or the propagation's later copy of a span has the
   * same sorting key (`start_time` is in it) and the replacing merge collapses the two.
   */
  besideLegacy: boolean;
}

/**
 * One `events_full` row written directly (no server-side propagation). An OTLP trace keeps its own
 * root span as its root: no virtual root, here or in the copies made from the legacy tables.
 */
export function eventsRow(
  o: OtelObservation,
  projectId: string,
  a: Attribution,
  now: number,
  shape: DirectShape = { besideLegacy: false },
): Row {
  const meta = metadataArrays(o.metadata);
  const exp = o.experiment;
  const expMeta = metadataArrays(exp?.metadata ?? {});
  const itemMeta = metadataArrays(exp?.itemMetadata ?? {});
  const nowText = chTime(now, 6);
  const digits = shape.besideLegacy ? 3 : 6;
  const time = (v: string | null) => (v === null ? null : chTime(v, digits));
  const input = orEmpty(o.input ?? (isRoot(o) ? o.trace.input : null));
  const output = orEmpty(o.output ?? (isRoot(o) ? o.trace.output : null));
  return {
    project_id: projectId,
    trace_id: o.traceId,
    span_id: o.spanId,
    parent_span_id: o.asRoot ? '' : o.parentSpanId,
    start_time: chTime(o.startTime, digits),
    end_time: time(o.endTime),
    completion_start_time: time(o.completionStartTime),
    name: o.name,
    type: o.type,
    environment: o.environment,
    version: orEmpty(o.version ?? o.trace.version),
    release: orEmpty(o.release ?? o.trace.release),
    trace_name: orEmpty(o.traceName ?? o.trace.name ?? (isRoot(o) ? o.name : null)),
    user_id: orEmpty(o.userId ?? o.trace.userId),
    session_id: orEmpty(o.sessionId ?? o.trace.sessionId),
    tags: o.tags.length > 0 ? o.tags : o.trace.tags,
    level: o.level,
    status_message: orEmpty(o.statusMessage),
    is_app_root: o.isAppRoot,
    bookmarked: false,
    public: o.public ?? o.trace.public ?? false,
    prompt_id: '',
    prompt_name: orEmpty(o.promptName),
    prompt_version: o.promptVersion,
    model_id: '',
    provided_model_name: orEmpty(o.modelName),
    model_parameters: Object.keys(o.modelParameters).length > 0 ? JSON.stringify(o.modelParameters) : '',
    provided_usage_details: o.usageDetails,
    usage_details: usageWithTotal(o.usageDetails),
    provided_cost_details: o.costDetails,
    cost_details: o.costDetails,
    usage_pricing_tier_id: null,
    usage_pricing_tier_name: null,
    tool_definitions: {},
    tool_calls: [],
    tool_call_names: [],
    input,
    output,
    metadata_names: meta.names,
    metadata_values: meta.values,
    experiment_id: orEmpty(exp?.id),
    experiment_name: orEmpty(exp?.name),
    experiment_metadata_names: expMeta.names,
    experiment_metadata_values: expMeta.values,
    experiment_description: orEmpty(exp?.description),
    experiment_dataset_id: orEmpty(exp?.datasetId),
    experiment_item_id: orEmpty(exp?.itemId),
    experiment_item_version: exp?.itemVersion ? chTime(exp.itemVersion, 6) : null,
    experiment_item_expected_output: orEmpty(exp?.itemExpectedOutput),
    experiment_item_metadata_names: itemMeta.names,
    experiment_item_metadata_values: itemMeta.values,
    experiment_item_root_span_id: orEmpty(exp?.itemRootObservationId),
    source: 'otel',
    service_name: orEmpty(o.instrumentation.serviceName),
    service_version: orEmpty(o.instrumentation.serviceVersion),
    scope_name: orEmpty(o.instrumentation.scopeName),
    scope_version: orEmpty(o.instrumentation.scopeVersion),
    telemetry_sdk_language: orEmpty(o.instrumentation.sdkLanguage),
    telemetry_sdk_name: orEmpty(o.instrumentation.sdkName),
    telemetry_sdk_version: orEmpty(o.instrumentation.sdkVersion),
    blob_storage_file_path: '',
    // As the copies from the legacy tables count it (events/mapping.ts): one span, one size.
    event_bytes: Buffer.byteLength(input) + Buffer.byteLength(output),
    created_at: nowText,
    updated_at: nowText,
    event_ts: nowText,
    is_deleted: 0,
    ingestion_api_key: a.apiKey,
    ingestion_sdk_name: a.sdkName,
    ingestion_sdk_version: a.sdkVersion,
  };
}

/**
 * Adds each span as an observation of its trace, and the trace-level attributes it carries as a
 * change of the trace (the root span also gives the trace its name, time, input and output).
 */
export function addOtelChanges(changes: LegacyChanges, spans: OtelObservation[]): void {
  for (const o of spans) {
    const root = isRoot(o);
    changes.addTrace(
      o.traceId,
      {
        id: o.traceId,
        timestamp: root ? o.startTime : undefined,
        name: o.trace.name ?? o.traceName ?? (root ? o.name : undefined),
        userId: o.userId ?? o.trace.userId,
        sessionId: o.sessionId ?? o.trace.sessionId,
        release: o.release ?? o.trace.release,
        version: o.trace.version ?? (root ? o.version : undefined),
        public: o.public ?? o.trace.public,
        tags: [...o.tags, ...o.trace.tags],
        metadata: o.trace.metadata,
        environment: o.environment,
        input: o.trace.input ?? (root ? o.input : undefined),
        output: o.trace.output ?? (root ? o.output : undefined),
      },
      o.startTime,
    );
    changes.addObservation(o.spanId, {
      traceId: o.traceId,
      type: o.type,
      at: o.startTime,
      isUpdate: false,
      patch: {
        id: o.spanId,
        parentObservationId: root ? null : o.parentSpanId,
        name: o.name,
        startTime: o.startTime,
        endTime: o.endTime,
        completionStartTime: o.completionStartTime,
        environment: o.environment,
        level: o.level,
        statusMessage: o.statusMessage,
        version: o.version,
        input: o.input,
        output: o.output,
        metadata: o.metadata,
        model: o.modelName,
        modelParameters: Object.keys(o.modelParameters).length > 0 ? o.modelParameters : null,
        usageDetails: o.usageDetails,
        costDetails: o.costDetails,
        promptName: o.promptName,
        promptVersion: o.promptVersion,
      },
    });
  }
}
