/**
 * TraceService/Export: the export goes through the HTTP endpoint's use case (features/ingestion/otlp.ts) as
 * an `application/x-protobuf` body, so limits, write modes, pricing and partial success are one
 * implementation; the answer is the ExportTraceServiceResponse the HTTP endpoint sends.
 */

import { ingestOtlpExport } from '../../../features/ingestion/otlp.ts';
import { ingestionContextFor, recordRefusedPathFor } from '../../../features/ingestion/routes/context.ts';
import { exportResponseProto } from '../../../features/otel/otlp-proto.ts';
import { HttpError } from '../../../kernel/errors.ts';
import type { WebContext } from '../core/context.ts';
import { grpcExport } from './export-of.ts';
import type { OtlpExportHandler } from './server.ts';

export const traceExportHandler =
  (ctx: WebContext): OtlpExportHandler =>
  async ({ body, principal, header }) => {
    const outcome = await ingestOtlpExport(grpcExport(body, header), {
      ...ingestionContextFor(ctx, principal, header),
      onDualPath: () => recordRefusedPathFor(ctx, principal, header, 'otel-dual-path'),
    });
    if (outcome.kind === 'refused') throw new HttpError(outcome.status, outcome.message);
    const { rejected } = outcome;
    return exportResponseProto(rejected && { rejectedSpans: rejected.spans, errorMessage: rejected.message });
  };
