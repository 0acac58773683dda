/**
 * MetricsService/Export: the HTTP endpoint's use case (features/ingestion/otlp-metrics.ts) on the message's
 * bytes; the answer is the ExportMetricsServiceResponse with its partial success.
 */

import { ingestOtlpMetrics } from '../../../features/ingestion/otlp-metrics.ts';
import { metricsPartialSuccess } from '../../../features/ingestion/partial-success.ts';
import { exportMetricsResponseProto } from '../../../features/otel/otlp-proto.ts';
import { HttpError } from '../../../kernel/errors.ts';
import type { WebContext } from '../core/context.ts';
import type { OtlpExportHandler } from './server.ts';

export const metricsExportHandler =
  (ctx: WebContext): OtlpExportHandler =>
  async ({ body, principal }) => {
    const outcome = await ingestOtlpMetrics(
      { body, contentType: 'application/x-protobuf', contentEncoding: undefined },
      { projectId: principal.projectId, store: ctx.store, tally: ctx.metricPoints },
    );
    if (outcome.kind === 'refused') throw new HttpError(outcome.status, outcome.message);
    return exportMetricsResponseProto(metricsPartialSuccess(outcome.rejected));
  };
