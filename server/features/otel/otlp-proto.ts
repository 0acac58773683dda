import protobuf from 'protobufjs';

/**
 * The subset of the OpenTelemetry protos (common/v1, resource/v1, trace/v1, metrics/v1, logs/v1 and
 * their collector services) needed to read a trace, metrics or logs export, written from the field numbers of the published spec. Message names are flattened
 * into one package because only the wire numbers matter for decoding. Fields added to the spec later
 * (entity refs, profile string indices) are unknown here and skipped by the decoder, as protobuf allows.
 */
const OTLP_PROTO = `
syntax = "proto3";
package otlp;

message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue {
  string key = 1;
  AnyValue value = 2;
}
message InstrumentationScope {
  string name = 1;
  string version = 2;
  repeated KeyValue attributes = 3;
  uint32 dropped_attributes_count = 4;
}
message Resource {
  repeated KeyValue attributes = 1;
  uint32 dropped_attributes_count = 2;
}
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  fixed32 flags = 16;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10;
  repeated Event events = 11;
  uint32 dropped_events_count = 12;
  repeated Link links = 13;
  uint32 dropped_links_count = 14;
  Status status = 15;

  message Event {
    fixed64 time_unix_nano = 1;
    string name = 2;
    repeated KeyValue attributes = 3;
    uint32 dropped_attributes_count = 4;
  }
  message Link {
    bytes trace_id = 1;
    bytes span_id = 2;
    string trace_state = 3;
    repeated KeyValue attributes = 4;
    uint32 dropped_attributes_count = 5;
    fixed32 flags = 6;
  }
}
message Status {
  string message = 2;
  int32 code = 3;
}

message Metric {
  string name = 1;
  string description = 2;
  string unit = 3;
  oneof data {
    Gauge gauge = 5;
    Sum sum = 7;
    Histogram histogram = 9;
    ExponentialHistogram exponential_histogram = 10;
    Summary summary = 11;
  }
}
message Gauge { repeated NumberDataPoint data_points = 1; }
message Sum {
  repeated NumberDataPoint data_points = 1;
  int32 aggregation_temporality = 2;
  bool is_monotonic = 3;
}
message Histogram {
  repeated HistogramDataPoint data_points = 1;
  int32 aggregation_temporality = 2;
}
message ExponentialHistogram {
  repeated DataPointCount data_points = 1;
  int32 aggregation_temporality = 2;
}
message Summary { repeated DataPointCount data_points = 1; }
message NumberDataPoint {
  repeated KeyValue attributes = 7;
  fixed64 start_time_unix_nano = 2;
  fixed64 time_unix_nano = 3;
  oneof value {
    double as_double = 4;
    sfixed64 as_int = 6;
  }
}
message HistogramDataPoint {
  repeated KeyValue attributes = 9;
  fixed64 start_time_unix_nano = 2;
  fixed64 time_unix_nano = 3;
  fixed64 count = 4;
  optional double sum = 5;
  repeated fixed64 bucket_counts = 6;
  repeated double explicit_bounds = 7;
  uint32 flags = 10;
  optional double min = 11;
  optional double max = 12;
}
// Exponential histogram and summary points are counted, not read: every field is skipped.
message DataPointCount {}
message LogRecord {
  fixed64 time_unix_nano = 1;
  fixed64 observed_time_unix_nano = 11;
  int32 severity_number = 2;
  string severity_text = 3;
  AnyValue body = 5;
  repeated KeyValue attributes = 6;
  uint32 dropped_attributes_count = 7;
  fixed32 flags = 8;
  bytes trace_id = 9;
  bytes span_id = 10;
  string event_name = 12;
}
`;

/**
 * A collector service's request (resources, their scopes, the scopes' items) and its response with
 * the partial success: the same messages for traces, metrics and logs but for their names.
 */
type Signal = 'Trace' | 'Metrics' | 'Logs';
const exportMessages = (signal: Signal, items: string, item: string, itemField: string, rejected: string) => `
message Export${signal}ServiceRequest { repeated Resource${items} resource_${items.toLowerCase()} = 1; }
message Resource${items} {
  Resource resource = 1;
  repeated Scope${items} scope_${items.toLowerCase()} = 2;
  string schema_url = 3;
}
message Scope${items} {
  InstrumentationScope scope = 1;
  repeated ${item} ${itemField} = 2;
  string schema_url = 3;
}
message Export${signal}ServiceResponse { Export${signal}PartialSuccess partial_success = 1; }
message Export${signal}PartialSuccess {
  int64 rejected_${rejected} = 1;
  string error_message = 2;
}
`;

let root: protobuf.Root | undefined;
const otlpType = (name: string) => {
  root ??= protobuf.parse(
    OTLP_PROTO +
      exportMessages('Trace', 'Spans', 'Span', 'spans', 'spans') +
      exportMessages('Metrics', 'Metrics', 'Metric', 'metrics', 'data_points') +
      exportMessages('Logs', 'Logs', 'LogRecord', 'log_records', 'log_records'),
  ).root;
  return root.lookupType(`otlp.${name}`);
};

/** The ExportTraceServiceRequest message type, parsed once on first use. */
export function exportTraceServiceRequestType(): protobuf.Type {
  return otlpType('ExportTraceServiceRequest');
}

/** The ExportTraceServiceResponse message type (the answer to an export, with its partial success). */
export function exportTraceServiceResponseType(): protobuf.Type {
  return otlpType('ExportTraceServiceResponse');
}

/** The ExportMetricsServiceRequest message type. */
export function exportMetricsServiceRequestType(): protobuf.Type {
  return otlpType('ExportMetricsServiceRequest');
}

/** The ExportMetricsServiceResponse message type. */
export function exportMetricsServiceResponseType(): protobuf.Type {
  return otlpType('ExportMetricsServiceResponse');
}

/** The ExportLogsServiceRequest message type. */
export function exportLogsServiceRequestType(): protobuf.Type {
  return otlpType('ExportLogsServiceRequest');
}

/** What an export refused while the rest was accepted (OTLP partial success): its count and why. */
type Refused<Count extends string> = ({ [K in Count]: number } & { errorMessage: string }) | null;
/** Any signal's refusal, as the encoders take it. */
type Counted = Readonly<Record<string, number | string>> | null;
/** Spans refused while the others were accepted; null when all were accepted. */
export type PartialSuccess = Refused<'rejectedSpans'>;
/** Data points refused while the others were accepted; null when all were accepted. */
export type MetricsPartialSuccess = Refused<'rejectedDataPoints'>;
/** Log records refused while the others were accepted; null when all were accepted. */
export type LogsPartialSuccess = Refused<'rejectedLogRecords'>;

/** An Export<signal>ServiceResponse: empty when everything was accepted, else with `partial_success`. */
function responseProto(signal: Signal, partial: Counted): Buffer {
  const type = otlpType(`Export${signal}ServiceResponse`);
  return Buffer.from(
    type.encode(partial ? type.fromObject({ partialSuccess: partial }) : type.create()).finish(),
  );
}

/** The same answer in OTLP/JSON: the int64 count as a decimal string. */
function responseJson(partial: Counted): object {
  if (!partial) return {};
  const counted = Object.entries(partial).map(([k, v]) => [k, k === 'errorMessage' ? v : String(v)]);
  return { partialSuccess: Object.fromEntries(counted) };
}

export const exportResponseProto = (partial: PartialSuccess): Buffer => responseProto('Trace', partial);

/** The answer to an accepted trace export in the request's encoding (ExportTraceServiceResponse). */
export const exportResponseBody = (protobufEncoding: boolean, partial: PartialSuccess): Buffer | object =>
  protobufEncoding ? responseProto('Trace', partial) : responseJson(partial);

export const exportMetricsResponseProto = (partial: MetricsPartialSuccess): Buffer =>
  responseProto('Metrics', partial);

export const exportMetricsResponseJson = (partial: MetricsPartialSuccess): object => responseJson(partial);

export const logsExportResponseProto = (partial: LogsPartialSuccess): Buffer =>
  responseProto('Logs', partial);

/** The answer to an accepted logs export in the request's encoding (ExportLogsServiceResponse). */
export const logsExportResponseBody = (
  protobufEncoding: boolean,
  partial: LogsPartialSuccess,
): Buffer | object => (protobufEncoding ? responseProto('Logs', partial) : responseJson(partial));
