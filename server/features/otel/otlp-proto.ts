import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';

/** The three signals' collector services, as their message names spell them. */
type Signal = 'Trace' | 'Metrics' | 'Logs';

let root: protobuf.Root | undefined;
/** The messages of `otlp.proto`, parsed once on first use. */
const otlpType = (name: string) => {
  root ??= protobuf.parse(readFileSync(new URL('./otlp.proto', import.meta.url), 'utf8')).root;
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
