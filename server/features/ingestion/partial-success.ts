/**
 * OTLP's partial success of an accepted export, from what its use case rejected on its own: the
 * same counts and message in the answers of both transports (HTTP, gRPC).
 */
import type { LogsPartialSuccess, MetricsPartialSuccess, PartialSuccess } from '../otel/otlp-proto.ts';
import type { OtlpOutcome } from './otlp.ts';
import type { OtlpLogsOutcome } from './otlp-logs.ts';
import type { OtlpMetricsOutcome } from './otlp-metrics.ts';

/** What a use case rejected of an export it wrote; null when it rejected nothing. */
type RejectedOf<Outcome> = Outcome extends { kind: 'written'; rejected: infer Rejected } ? Rejected : never;

export const spansPartialSuccess = (rejected: RejectedOf<OtlpOutcome>): PartialSuccess =>
  rejected && { rejectedSpans: rejected.spans, errorMessage: rejected.message };

export const logsPartialSuccess = (rejected: RejectedOf<OtlpLogsOutcome>): LogsPartialSuccess =>
  rejected && { rejectedLogRecords: rejected.records, errorMessage: rejected.message };

export const metricsPartialSuccess = (rejected: RejectedOf<OtlpMetricsOutcome>): MetricsPartialSuccess =>
  rejected && { rejectedDataPoints: rejected.points, errorMessage: rejected.message };
