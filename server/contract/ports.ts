/** The ports the service's roles listen on by default (`PORT` overrides). */
export const PORTS = { web: 3000, worker: 3030 } as const;
export type Role = keyof typeof PORTS;
/**
 * Where the operator has the web serve `/metrics` (`METRICS_PORT`): a port of the Pod that no
 * Service exposes, so the public API port never carries the process's metrics.
 */
export const WEB_METRICS_PORT = 3001;
/**
 * Where the web serves OTLP over gRPC (the collector's Trace, Metrics and Logs services), the port
 * OpenTelemetry's exporters and the Collector use by default; `SERVICE_OTLP_GRPC_PORT` overrides.
 */
export const OTLP_GRPC_PORT = 4317;
