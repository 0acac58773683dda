/**
 * The OTLP collector services as grpc-js service definitions. Requests and answers pass through as
 * bytes: each service's handler decodes them with the repo's own protobuf decoding (server/features/otel/),
 * the one the HTTP endpoints use, so no .proto files are loaded at run time. grpc-js has already
 * undone `grpc-encoding: gzip` when a handler sees the bytes.
 */
import type { ServiceDefinition } from '@grpc/grpc-js';

/** The fully qualified names of the collector's services (opentelemetry-proto, collector/*). */
export const OTLP_SERVICES = {
  traces: 'opentelemetry.proto.collector.trace.v1.TraceService',
  metrics: 'opentelemetry.proto.collector.metrics.v1.MetricsService',
  logs: 'opentelemetry.proto.collector.logs.v1.LogsService',
} as const;
export type OtlpSignal = keyof typeof OTLP_SERVICES;

const bytes = (b: Buffer) => b;

/** `<service>/Export`, the one method of each collector service, with its messages as bytes. */
export function exportServiceDefinition(signal: OtlpSignal): ServiceDefinition {
  return {
    Export: {
      path: `/${OTLP_SERVICES[signal]}/Export`,
      requestStream: false,
      responseStream: false,
      requestSerialize: bytes,
      requestDeserialize: bytes,
      responseSerialize: bytes,
      responseDeserialize: bytes,
    },
  };
}
