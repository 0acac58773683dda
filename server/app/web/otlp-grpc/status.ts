/**
 * The gRPC status of a refused export, from the HTTP status the shared ingestion code answers, so
 * that exporters retry what OTLP's retry rules say is transient and only that: UNAVAILABLE is
 * retried, INVALID_ARGUMENT and a RESOURCE_EXHAUSTED without RetryInfo are not. Pure.
 */
import { status } from '@grpc/grpc-js';

export function grpcStatusOf(httpStatus: number): status {
  if (httpStatus === 401) return status.UNAUTHENTICATED;
  if (httpStatus === 403) return status.PERMISSION_DENIED;
  if (httpStatus === 404) return status.UNIMPLEMENTED;
  // An export past a size limit would be refused again: not retryable, as grpc-js's own size check.
  if (httpStatus === 413) return status.RESOURCE_EXHAUSTED;
  // Overload and a store that is down or behind: the exporter backs off and sends again.
  if (httpStatus === 429 || httpStatus === 502 || httpStatus === 503 || httpStatus === 504)
    return status.UNAVAILABLE;
  if (httpStatus >= 400 && httpStatus < 500) return status.INVALID_ARGUMENT;
  return status.INTERNAL;
}
