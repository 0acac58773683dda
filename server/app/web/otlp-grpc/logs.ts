/**
 * LogsService/Export: as TraceService's (traces.ts), through the HTTP logs endpoint's use case
 * (features/ingestion/otlp-logs.ts); the answer is the ExportLogsServiceResponse the HTTP endpoint sends.
 */

import { ingestOtlpLogsBody } from '../../../features/ingestion/otlp-logs.ts';
import { ingestionContextFor, recordRefusedPathFor } from '../../../features/ingestion/routes/context.ts';
import { logsExportResponseProto } from '../../../features/otel/otlp-proto.ts';
import { HttpError } from '../../../kernel/errors.ts';
import type { WebContext } from '../core/context.ts';
import { grpcExport } from './export-of.ts';
import type { OtlpExportHandler } from './server.ts';

export const logsExportHandler =
  (ctx: WebContext): OtlpExportHandler =>
  async ({ body, principal, header }) => {
    const outcome = await ingestOtlpLogsBody(grpcExport(body, header), {
      ...ingestionContextFor(ctx, principal, header),
      onDualPath: () => recordRefusedPathFor(ctx, principal, header, 'otel-dual-path'),
    });
    if (outcome.kind === 'refused') throw new HttpError(outcome.status, outcome.message);
    const { rejected } = outcome;
    return logsExportResponseProto(
      rejected && { rejectedLogRecords: rejected.records, errorMessage: rejected.message },
    );
  };
