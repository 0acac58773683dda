import type { ObservationType } from '../write-model/bodies.ts';

/** Observation levels stored in `events_full.level`. */
export type ObservationLevel = 'DEBUG' | 'DEFAULT' | 'WARNING' | 'ERROR';

/**
 * Trace-domain attributes (`langfuse.trace.*` and the user/session/tag conventions) as sent on this
 * span: the user, session, tags, public flag, version and release read as the observation's do.
 */
export interface OtelTraceAttributes
  extends Pick<OtelObservation, 'userId' | 'sessionId' | 'tags' | 'public' | 'version' | 'release'> {
  /** `langfuse.trace.name`. */
  name: string | null;
  /** `langfuse.trace.input`, JSON-encoded unless already a string. */
  input: string | null;
  /** `langfuse.trace.output`, JSON-encoded unless already a string. */
  output: string | null;
  /** `langfuse.trace.metadata` (JSON and dotted keys, span and resource) as top-level key → string. */
  metadata: Record<string, string>;
}

/** Experiment (dataset run) attributes, present when the span ran inside an SDK experiment. */
export interface OtelExperiment {
  /** `langfuse.experiment.id`. */
  id: string | null;
  /** `langfuse.experiment.name`. */
  name: string | null;
  /** `langfuse.experiment.metadata` (JSON object) as top-level key → string. */
  metadata: Record<string, string>;
  /** `langfuse.experiment.description`. */
  description: string | null;
  /** `langfuse.experiment.dataset.id`. */
  datasetId: string | null;
  /** `langfuse.experiment.item.id`. */
  itemId: string | null;
  /** `langfuse.experiment.item.version` as ISO with microseconds; null when absent or not a date. */
  itemVersion: string | null;
  /** `langfuse.experiment.item.metadata` (JSON object) as top-level key → string. */
  itemMetadata: Record<string, string>;
  /** `langfuse.experiment.item.root_observation_id`. */
  itemRootObservationId: string | null;
  /** `langfuse.experiment.item.expected_output`, JSON-encoded unless already a string. */
  itemExpectedOutput: string | null;
}

/** Where the span came from: resource, scope and the SDK headers of the request. */
export interface OtelInstrumentation {
  /** Resource `service.name`. */
  serviceName: string | null;
  /** Resource `service.version`. */
  serviceVersion: string | null;
  /** Instrumentation scope name (`langfuse-sdk`, `ai`, `openinference…`). */
  scopeName: string | null;
  /** Instrumentation scope version. */
  scopeVersion: string | null;
  /** Resource `telemetry.sdk.language`. */
  sdkLanguage: string | null;
  /** Resource `telemetry.sdk.name` (the OpenTelemetry SDK, not the Langfuse SDK). */
  sdkName: string | null;
  /** Resource `telemetry.sdk.version`. */
  sdkVersion: string | null;
  /** `x-*-sdk-name` request header (`ingestion_sdk_name`), "unknown" when absent. */
  ingestionSdkName: string;
  /** `x-*-sdk-version` request header (`ingestion_sdk_version`), "unknown" when absent. */
  ingestionSdkVersion: string;
}

/** One OTLP span mapped to the observation model of `events_full`. Absent values are null. */
export interface OtelObservation {
  /** 32 lowercase-or-uppercase hex characters, as received. */
  traceId: string;
  /** 16 hex characters, as received. */
  spanId: string;
  /** Parent span id from the wire; '' for roots (an all-zero parent also counts as none). See also asRoot. */
  parentSpanId: string;
  /** Observation name: tool/framework naming attributes, else the span name. */
  name: string;
  /** Observation kind from the type mappers; SPAN when none applies. */
  type: ObservationType;
  /** Span start, ISO with microseconds; the end time (or the mapping time) when the span has none. */
  startTime: string;
  /** Span end, ISO with microseconds; the start time when the span has none. */
  endTime: string;
  /** First token time (`…completion_start_time`, Vercel `msToFirstChunk`, GenAI `time_to_first_chunk`), ISO with microseconds, or null. */
  completionStartTime: string | null;
  /** Normalized environment (lowercase `[a-z0-9-_]{1,40}`), "default" when absent or invalid. */
  environment: string;
  /** Level from `langfuse.observation.level` (aliases accepted), else ERROR for status code 2, else DEFAULT. */
  level: ObservationLevel;
  /** `langfuse.observation.status_message`, else the span status message. */
  statusMessage: string | null;
  /** `langfuse.version`, else resource `service.version`. */
  version: string | null;
  /** `langfuse.release` on the span, else on the resource. */
  release: string | null;
  /** Observation input (Langfuse or framework attributes/events), JSON-encoded unless already a string. */
  input: string | null;
  /** Observation output, JSON-encoded unless already a string. */
  output: string | null;
  /** Metadata top-level key → string: user metadata, `attributes` (non-Langfuse scopes), `resourceAttributes`, `scope`, `links` (span links, JSON). */
  metadata: Record<string, string>;
  /** User id (`langfuse.user.id`, `user.id`, metadata `langfuse_user_id`, Vercel `userId`). */
  userId: string | null;
  /** Session id (`langfuse.session.id`, `session.id`, `gen_ai.conversation.id`, metadata, Vercel). */
  sessionId: string | null;
  /** Trace tags (array, JSON array string or comma list). */
  tags: string[];
  /** `langfuse.trace.name`. */
  traceName: string | null;
  /** `langfuse.trace.public` / `langfuse.public`; null when not sent. */
  public: boolean | null;
  /** Model name as provided by the producer. */
  modelName: string | null;
  /** Model parameters, each value a string. */
  modelParameters: Record<string, string>;
  /** Token usage by kind (`input`, `output`, `total`, `input_cached_tokens`, …), non-negative integers. */
  usageDetails: Record<string, number>;
  /** Cost in USD by kind (`total`, `input`, …) as provided. */
  costDetails: Record<string, number>;
  /** Prompt name; GENERATION only, null otherwise. */
  promptName: string | null;
  /** Prompt version; GENERATION only, null otherwise. */
  promptVersion: number | null;
  /** `langfuse.internal.is_app_root`: the SDK marked this span as the application's root. */
  isAppRoot: boolean;
  /** `langfuse.internal.as_root`: the SDK asked for this span to be treated as the trace root. */
  asRoot: boolean;
  /** Trace-domain attributes carried by this span. */
  trace: OtelTraceAttributes;
  /** Experiment attributes, or null when the span carries none. */
  experiment: OtelExperiment | null;
  /** Resource, scope and request-header provenance. */
  instrumentation: OtelInstrumentation;
}

/** One OTLP span link as stored in an observation's metadata `links`. */
export interface OtelSpanLink {
  /** Lowercase hex. */
  traceId: string;
  spanId: string;
  attributes?: Record<string, unknown>;
}

/** Request context the mapping needs besides the export itself. */
export interface MapContext {
  /** SDK name from the `x-*-sdk-name` header. */
  sdkName?: string;
  /** SDK version from the `x-*-sdk-version` header. */
  sdkVersion?: string;
  /** Used only as the start/end of a span that carries neither; defaults to the current time. */
  now?: Date;
}
